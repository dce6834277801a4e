/* opts.c: the training options: their defaults, the default fanout, and the names of
 * models, aggregators and normalizations (parsed and printed). */
#include "driver.h"

#include <string.h>

void burrow_train_defaults(burrow_train_opts *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->model = BURROW_MODEL_SAGE;
	o->layers = 3;
	o->hidden = 256;
	o->dropout = 0.5;
	o->heads = 4;
	o->optimizer = BURROW_OPTIM_ADAM;
	o->lr = 0.003;
	o->epochs = 20;
	o->batch_size = 1024;
	o->prefetch = 2;
	o->cache_bytes = BURROW_CACHE_AUTO;
	o->cache_fraction = -1;
	o->cache_policy = BURROW_CACHE_STATIC;
	o->store_engine = BURROW_STORE_URING;
	o->eval_chunk = 8192;
	/* training habits */
	o->lr_gamma = 0.1;
	o->lr_patience = 10;
	o->scorer = BURROW_SCORER_DOT;
	o->neg = 1;
	o->gat_edge_features = true;
}

int burrow_train_fanout(const burrow_train_opts *opts, int layer)
{
	burrow_train_opts oo;
	const burrow_train_opts *o = &oo;
	burrow_train_defaults(&oo);
	if (bw_opts_in(&oo, sizeof oo, opts, "burrow_train_opts"))
		return 0;
	if (o->model == BURROW_MODEL_MLP || layer < 0 || layer >= o->layers)
		return 0;
	return o->fanout[layer] != 0 ? o->fanout[layer] : 5 * (o->layers - layer);
}

int burrow_model_parse(const char *name)
{
	if (!name)
		return 0;
	if (!strcmp(name, "sage") || !strcmp(name, "graphsage"))
		return BURROW_MODEL_SAGE;
	if (!strcmp(name, "gcn"))
		return BURROW_MODEL_GCN;
	if (!strcmp(name, "mlp"))
		return BURROW_MODEL_MLP;
	if (!strcmp(name, "gat"))
		return BURROW_MODEL_GAT;
	if (!strcmp(name, "rgcn"))
		return BURROW_MODEL_RGCN;
	if (!strcmp(name, "rsage"))
		return BURROW_MODEL_RSAGE;
	if (!strcmp(name, "rgat"))
		return BURROW_MODEL_RGAT;
	return 0;
}

int burrow_aggr_parse(const char *name)
{
	if (!name)
		return -1;
	if (!strcmp(name, "mean"))
		return BURROW_AGGR_MEAN;
	if (!strcmp(name, "max"))
		return BURROW_AGGR_MAX;
	if (!strcmp(name, "sum"))
		return BURROW_AGGR_SUM;
	return -1;
}

int burrow_norm_parse(const char *name)
{
	if (!name)
		return -1;
	if (!strcmp(name, "none"))
		return BURROW_NORM_NONE;
	if (!strcmp(name, "batch"))
		return BURROW_NORM_BATCH;
	if (!strcmp(name, "layer"))
		return BURROW_NORM_LAYER;
	return -1;
}

const char *burrow_norm_name(int norm)
{
	switch (norm) {
	case BURROW_NORM_NONE: return "none";
	case BURROW_NORM_BATCH: return "batch";
	case BURROW_NORM_LAYER: return "layer";
	default: return "unknown";
	}
}

const char *burrow_aggr_name(int aggr)
{
	switch (aggr) {
	case BURROW_AGGR_MEAN: return "mean";
	case BURROW_AGGR_MAX: return "max";
	case BURROW_AGGR_SUM: return "sum";
	default: return "unknown";
	}
}

const char *burrow_model_name(int kind)
{
	switch (kind) {
	case BURROW_MODEL_SAGE: return "sage";
	case BURROW_MODEL_GCN: return "gcn";
	case BURROW_MODEL_MLP: return "mlp";
	case BURROW_MODEL_GAT: return "gat";
	case BURROW_MODEL_RGCN: return "rgcn";
	case BURROW_MODEL_RSAGE: return "rsage";
	case BURROW_MODEL_RGAT: return "rgat";
	default: return "unknown";
	}
}

int burrow_task_parse(const char *name)
{
	static const char *const names[] = {"auto", "node", "multilabel", "link"};
	for (int i = 0; name && i < 4; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

const char *burrow_task_name(int task)
{
	switch (task) {
	case BURROW_TASK_AUTO: return "auto";
	case BURROW_TASK_NODE: return "node";
	case BURROW_TASK_MULTILABEL: return "multilabel";
	case BURROW_TASK_LINK: return "link";
	default: return "unknown";
	}
}

int burrow_scorer_parse(const char *name)
{
	return name && !strcmp(name, "dot") ? BURROW_SCORER_DOT : name && !strcmp(name, "mlp") ? BURROW_SCORER_MLP : -1;
}

const char *burrow_scorer_name(int scorer)
{
	return scorer == BURROW_SCORER_DOT ? "dot" : scorer == BURROW_SCORER_MLP ? "mlp" : "unknown";
}

int burrow_sampler_parse(const char *name)
{
	return name && !strcmp(name, "neighbor") ? BURROW_SAMPLER_NEIGHBOR
	       : name && !strcmp(name, "labor") ? BURROW_SAMPLER_LABOR
	       : name && !strcmp(name, "labor-star") ? BURROW_SAMPLER_LABOR_STAR
						 : -1;
}

const char *burrow_sampler_name(int kind)
{
	return kind == BURROW_SAMPLER_NEIGHBOR ? "neighbor"
	       : kind == BURROW_SAMPLER_LABOR ? "labor"
	       : kind == BURROW_SAMPLER_LABOR_STAR ? "labor-star"
						 : "unknown";
}
