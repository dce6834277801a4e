/* optim.c: Adam (PyTorch's, weight decay added to the gradient), AdamW and SGD with momentum. */
#include "model.h"

#include <string.h>

int bw_optim_open(bw_optim **out, const bw_device *dev, int kind, int64_t n, double lr, double weight_decay,
		  double momentum)
{
	*out = NULL;
	if (kind != BURROW_OPTIM_ADAM && kind != BURROW_OPTIM_ADAMW && kind != BURROW_OPTIM_SGD)
		return bw_err(BURROW_E_INVAL, "optimizer: unknown kind %d", kind);
	if (!(lr > 0) || !(weight_decay >= 0) || !(momentum >= 0 && momentum < 1) || n < 0)
		return bw_err(BURROW_E_INVAL, "optimizer: need lr > 0, weight decay >= 0, momentum in [0, 1)");
	bw_optim *o = bw_calloc(1, sizeof *o);
	if (!o)
		return BURROW_E_NOMEM;
	o->kind = kind;
	o->dev = dev = bw_device_or_cpu(dev);
	o->lr = lr;
	o->weight_decay = weight_decay;
	o->momentum = momentum;
	o->beta1 = 0.9;
	o->beta2 = 0.999;
	o->eps = 1e-8;
	o->n = n;
	const int k = bw_optim_state_per_param(o);
	const size_t bytes = (size_t)(n ? n : 1) * sizeof(float);
	int st = 0;
	if (k >= 1 && ((st = bw_device_alloc(dev, bytes, (void **)&o->m)) || (st = bw_device_memset(dev, o->m, 0, bytes))))
		goto fail;
	if (k >= 2 && ((st = bw_device_alloc(dev, bytes, (void **)&o->v)) || (st = bw_device_memset(dev, o->v, 0, bytes))))
		goto fail;
	*out = o;
	return 0;
fail:
	bw_optim_close(o);
	return st;
}

int bw_optim_state_per_param(const bw_optim *o)
{
	if (o->kind == BURROW_OPTIM_SGD)
		return o->momentum > 0 ? 1 : 0;
	return 2;
}

int bw_optim_step(const bw_backend *be, bw_optim *o, float *params, const float *grads)
{
	if (be->dev != o->dev)
		return bw_err(BURROW_E_INVAL, "optimizer: state on %s stepped by the %s backend", o->dev->name, bw_backend_name(be));
	o->step++;
	if (o->kind == BURROW_OPTIM_SGD) {
		return bw_sgd(be, params, grads, o->m, o->n, (float)o->lr, (float)o->momentum, (float)o->weight_decay);
	}
	const bw_adam_args a = {
		.lr = (float)o->lr,
		.beta1 = (float)o->beta1,
		.beta2 = (float)o->beta2,
		.eps = (float)o->eps,
		.weight_decay = (float)o->weight_decay,
		.decoupled = o->kind == BURROW_OPTIM_ADAMW,
		.step = o->step,
	};
	return bw_adam(be, params, grads, o->m, o->v, o->n, &a);
}

void bw_optim_close(bw_optim *o)
{
	if (!o)
		return;
	bw_device_free(o->dev, o->m);
	bw_device_free(o->dev, o->v);
	bw_free(o);
}
