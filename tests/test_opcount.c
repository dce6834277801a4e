/* test_opcount.c: counting the compute ops (opcount.h, burrow_trainer_count_ops): each
 * dispatcher's FLOPs against its shapes, a SAGE batch's products per layer against the sum of
 * 2 m n k over its layers' shapes (a slow reference from the block sizes), op times within
 * the batch's, and an epoch counted training the same bits as one not counted. */
#include <criterion/criterion.h>

#include "../train/compute/backend_impl.h"
#include "../train/compute/compute.h"
#include "util.h"
#include "compute_util.h"
#include "train_util.h"

#include <string.h>

TU_SCRATCH_SUITE(opcount, 120);

static bw_backend cpu(void)
{
	bw_backend be;
	cr_assert_eq(bw_backend_init(&be, BW_BACKEND_CPU, 1), 0, "%s", burrow_last_error());
	return be;
}

static bw_tensor rand_tensor(int64_t rows, int64_t cols, uint64_t key)
{
	bw_tensor t = {0};
	cr_assert_eq(bw_tensor_alloc(&t, NULL, rows, cols), 0);
	fill_uniform(t.data, rows * cols, key, -1, 1);
	return t;
}

static double sum_layers(const bw_op_count *n)
{
	double s = 0;
	for (int l = 0; l < BURROW_MAX_LAYERS; l++)
		s += n->layer_flops[l];
	return s;
}

/* Products: 2 m n k whatever the transposes, 2 nnz n through the sparse copy; the layer
 * set when they run gets them, none without one; counting off adds nothing. */
Test(opcount, products_count_2mnk_and_land_in_the_layer_running)
{
	bw_backend be = cpu();
	bw_op_count n = {.layer = -1};
	be.count = &n;
	bw_tensor a = rand_tensor(37, 19, 1), b = rand_tensor(19, 23, 2), c = rand_tensor(37, 23, 3);
	bw_tensor at = rand_tensor(37, 19, 4), g = rand_tensor(37, 23, 5), w = rand_tensor(19, 23, 6);
	bw_tensor gw = rand_tensor(19, 23, 7), gx = rand_tensor(37, 19, 8);
	cr_assert_eq(bw_matmul(&be, &a, false, &b, false, 1, 0, &c), 0, "%s", burrow_last_error());
	cr_assert_eq(n.flops[BURROW_OP_PRODUCT], 2.0 * 37 * 23 * 19);
	cr_assert_eq(n.calls[BURROW_OP_PRODUCT], 1);
	cr_assert_eq(sum_layers(&n), 0, "no layer ran");
	n.layer = 2;
	cr_assert_eq(bw_matmul(&be, &at, true, &g, false, 1, 0, &gw), 0, "%s", burrow_last_error()); /* [19, 23] */
	cr_assert_eq(bw_matmul(&be, &g, false, &w, true, 1, 0, &gx), 0, "%s", burrow_last_error());  /* [37, 19] */
	cr_assert_eq(n.layer_flops[2], 2 * (2.0 * 19 * 23 * 37));
	cr_assert_eq(n.layer_calls[2], 2);
	cr_assert_eq(n.flops[BURROW_OP_PRODUCT], 3 * (2.0 * 37 * 23 * 19));
	/* the sparse copy: a with most entries zeroed */
	for (int64_t i = 0; i < 37 * 19; i++)
		if (i % 5)
			a.data[i] = 0;
	bw_sparse sp = {0};
	cr_assert_eq(bw_sparse_build(&sp, a.data, 37, 19, 1), 0);
	a.sp = &sp;
	n.layer = -1;
	const double before = n.flops[BURROW_OP_PRODUCT];
	cr_assert_eq(bw_matmul(&be, &a, false, &b, false, 1, 0, &c), 0, "%s", burrow_last_error());
	cr_assert_gt(sp.nnz, 0);
	cr_assert_lt(sp.nnz, 37 * 19);
	cr_assert_eq(n.flops[BURROW_OP_PRODUCT] - before, 2.0 * (double)sp.nnz * 23);
	cr_assert(n.seconds[BURROW_OP_PRODUCT] >= 0);
	const bw_op_count snap = n;
	be.count = NULL;
	cr_assert_eq(bw_matmul(&be, &at, true, &g, false, 1, 0, &gw), 0);
	cr_assert_eq(memcmp(&snap, &n, sizeof n), 0, "counting off changed the counts");
	bw_sparse_free(&sp);
	bw_tensor *all[] = {&a, &b, &c, &at, &g, &w, &gw, &gx};
	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		bw_tensor_free(all[i]);
	bw_backend_release(&be);
}

/* Aggregation: 2 per edge and column (a GCN self loop an edge), forward over the rows
 * computed, backward over the sources; elementwise and the optimizer by their elements. */
Test(opcount, aggregation_counts_its_edges)
{
	bw_backend be = cpu();
	bw_op_count n = {.layer = -1};
	be.count = &n;
	tblock t;
	make_block(&t, 20, 33, 6, 11);
	cr_assert_eq(bw_block_prepare(&t.b, true, true), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_block_upload(&t.b, be.dev), 0, "%s", burrow_last_error());
	const int64_t dim = 7, edges = t.indptr[20];
	bw_tensor x = rand_tensor(33, dim, 1), out = rand_tensor(20, dim, 2), gx = rand_tensor(33, dim, 3);
	double want = 0;
	cr_assert_eq(bw_aggregate(&be, &t.b, BW_AGG_MEAN, &x, 0, -1, &out), 0, "%s", burrow_last_error());
	want += 2.0 * (double)edges * dim;
	cr_assert_eq(bw_aggregate(&be, &t.b, BW_AGG_SUM, &x, 3, 11, &out), 0, "%s", burrow_last_error());
	want += 2.0 * (double)(t.indptr[11] - t.indptr[3]) * dim;
	cr_assert_eq(bw_aggregate(&be, &t.b, BW_AGG_GCN, &x, 0, -1, &out), 0, "%s", burrow_last_error());
	want += 2.0 * (double)(edges + 20) * dim;
	cr_assert_eq(n.flops[BURROW_OP_AGGREGATE], want);
	cr_assert_eq(bw_aggregate_backward(&be, &t.b, BW_AGG_MEAN, &out, 0, -1, &gx), 0, "%s", burrow_last_error());
	want += 2.0 * (double)edges * dim;
	cr_assert_eq(bw_aggregate_backward(&be, &t.b, BW_AGG_GCN, &out, 0, -1, &gx), 0, "%s", burrow_last_error());
	want += 2.0 * (double)(edges + 20) * dim;
	cr_assert_eq(n.flops[BURROW_OP_AGGREGATE], want);
	cr_assert_eq(n.calls[BURROW_OP_AGGREGATE], 5);
	cr_assert_eq(n.flops[BURROW_OP_PRODUCT] + n.flops[BURROW_OP_ELEMENTWISE] + n.flops[BURROW_OP_OPTIMIZER], 0);
	cr_assert_eq(bw_relu(&be, &out), 0);
	cr_assert_eq(n.flops[BURROW_OP_ELEMENTWISE], 20.0 * dim);
	float m[10] = {0}, v[10] = {0};
	const bw_adam_args aa = {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .step = 1};
	cr_assert_eq(bw_adam(&be, x.data, gx.data, m, v, 10, &aa), 0);
	cr_assert_eq(n.flops[BURROW_OP_OPTIMIZER], 12.0 * 10);
	cr_assert_eq(n.calls[BURROW_OP_OPTIMIZER], 1);
	bw_tensor_free(&x);
	bw_tensor_free(&out);
	bw_tensor_free(&gx);
	free_block(&t);
	bw_backend_release(&be);
}

/* ref_: the products of a mean-SAGE layer over nd destinations of ns sources, in -> out:
 * its forward multiplies the destinations' rows (self) and the aggregated rows, or all ns
 * rows when it projects first (in > out); its weight gradients the same shapes transposed;
 * its input gradient (every layer but the first) the same again. */
static double ref_sage_products(int l, int64_t ns, int64_t nd, int64_t in, int64_t out)
{
	const int64_t rows = nd + (in > out ? ns : nd);
	return 2.0 * (double)(rows * in * out) * (l > 0 ? 3 : 2);
}

/* One training step of a 3-layer SAGE (layers 0 and 2 project first, layer 1 does not):
 * each layer's product FLOPs are the reference's from the block sizes, every product is
 * some layer's, and the counted op times fit within the step's. */
Test(opcount, a_sage_step_counts_the_products_of_its_layer_shapes)
{
	bw_backend be = cpu();
	bw_op_count n = {.layer = -1};
	be.count = &n;
	const bw_model_cfg cfg = {.kind = BURROW_MODEL_SAGE, .layers = 3, .in_dim = 24, .hidden = 16, .classes = 5,
				  .dropout = 0.5f};
	bw_model *m;
	cr_assert_eq(bw_model_open(&m, NULL, &cfg, 7), 0, "%s", burrow_last_error());
	bw_optim *o;
	cr_assert_eq(bw_optim_open(&o, NULL, BURROW_OPTIM_ADAM, m->num_params, 0.01, 0, 0), 0);
	const int64_t ns[3] = {40, 25, 12}, nd[3] = {25, 12, 6};
	tblock tb[3];
	for (int l = 0; l < 3; l++)
		make_block(&tb[l], nd[l], ns[l], 5, 21 + (uint64_t)l);
	bw_tensor x = rand_tensor(40, 24, 9);
	const int32_t labels[6] = {0, 4, 1, -1, 2, 3};
	bw_batch b = {.num_blocks = 3, .blocks = {&tb[0].b, &tb[1].b, &tb[2].b}, .x = x, .labels = labels};
	const double t0 = bw_now_s();
	const bw_tensor *logits;
	cr_assert_eq(bw_model_forward(&be, m, &b, true, 11, &logits), 0, "%s", burrow_last_error());
	bw_tensor g = {0};
	bw_loss ld;
	cr_assert_eq(bw_tensor_reshape(&g, NULL, logits->rows, logits->cols), 0);
	cr_assert_eq(bw_nll_loss(&be, logits, labels, NULL, 0, &g, &ld), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_model_backward(&be, m, &b, &g), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_optim_step(&be, o, m->params, m->grads), 0, "%s", burrow_last_error());
	const double wall = bw_now_s() - t0;
	double want = 0;
	for (int l = 0; l < 3; l++) {
		const int64_t in = l ? 16 : 24, out = l == 2 ? 5 : 16;
		const double r = ref_sage_products(l, ns[l], nd[l], in, out);
		cr_assert_eq(n.layer_flops[l], r, "layer %d: %.0f FLOPs counted, %.0f from its shapes", l, n.layer_flops[l], r);
		cr_assert_gt(n.layer_calls[l], 0);
		want += r;
	}
	cr_assert_eq(n.flops[BURROW_OP_PRODUCT], want, "%.0f product FLOPs, %.0f in the layers", n.flops[BURROW_OP_PRODUCT],
		     want);
	cr_assert_eq(n.layer, -1, "the layer index is left set");
	cr_assert_gt(n.flops[BURROW_OP_AGGREGATE], 0);
	cr_assert_gt(n.calls[BURROW_OP_ELEMENTWISE], 0);
	cr_assert_eq(n.flops[BURROW_OP_OPTIMIZER], 12.0 * (double)m->num_params);
	double sum = 0;
	for (int c = 0; c < BURROW_OP_CLASSES; c++) {
		cr_assert(n.seconds[c] >= 0);
		sum += n.seconds[c];
	}
	cr_assert_leq(sum, wall, "the ops took %g s of a %g s step", sum, wall);
	bw_tensor_free(&g);
	bw_tensor_free(&x);
	for (int l = 0; l < 3; l++)
		free_block(&tb[l]);
	bw_optim_close(o);
	bw_model_close(m);
	bw_backend_release(&be);
}

/* Through the API: an epoch counted trains the same bits as one not counted; its counts
 * cover its steps (times within its compute time, products all in layers); off keeps them. */
Test(opcount, a_counted_epoch_trains_the_same_bits)
{
	char *dir = tu_tmpdir();
	char *d = tu_weak_csbm(dir, 1500, 12);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	burrow_train_opts o;
	burrow_train_defaults(&o);
	o.layers = 2;
	o.hidden = 16;
	o.batch_size = 256;
	o.max_batches = 3;
	o.threads = 1;
	o.cache_fraction = 1;
	burrow_trainer *t[2];
	burrow_epoch_stats es[2] = {{.size = sizeof es[0]}, {.size = sizeof es[1]}};
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(burrow_trainer_open(&t[i], ds, &o), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_trainer_count_ops(t[i], i == 1), 0);
		cr_assert_eq(burrow_trainer_train_epoch(t[i], &es[i]), 0, "%s", burrow_last_error());
	}
	cr_assert_eq(memcmp(&es[0].loss, &es[1].loss, sizeof es[0].loss), 0, "loss %.17g vs %.17g counted", es[0].loss,
		     es[1].loss);
	cr_assert_eq(burrow_trainer_weights_checksum(t[0]), burrow_trainer_weights_checksum(t[1]));
	burrow_op_stats s = {.size = sizeof s}, s0 = {.size = sizeof s0};
	cr_assert_eq(burrow_trainer_op_stats(t[1], &s), 0);
	cr_assert_eq(burrow_trainer_op_stats(t[0], &s0), 0);
	cr_assert_eq(s0.calls[BURROW_OP_PRODUCT] + s0.batches, 0, "counted without being asked");
	cr_assert_eq(s.batches, es[1].batches);
	cr_assert_eq(s.compute_s, es[1].compute_s);
	double sum = 0, layers = 0;
	for (int c = 0; c < BURROW_OP_CLASSES; c++)
		sum += s.seconds[c];
	for (int l = 0; l < BURROW_MAX_LAYERS; l++)
		layers += s.layer_flops[l];
	cr_assert_leq(sum, s.compute_s);
	cr_assert_gt(s.layer_calls[0], 0);
	cr_assert_gt(s.flops[BURROW_OP_OPTIMIZER], 0);
	cr_assert_eq(s.flops[BURROW_OP_PRODUCT], layers, "products outside the layers");
	cr_assert_eq(burrow_trainer_count_ops(t[1], false), 0);
	cr_assert_eq(burrow_trainer_train_epoch(t[1], &es[1]), 0, "%s", burrow_last_error());
	burrow_op_stats s2 = {.size = sizeof s2};
	cr_assert_eq(burrow_trainer_op_stats(t[1], &s2), 0);
	cr_assert_eq(memcmp(&s, &s2, sizeof s), 0, "counting off changed the totals");
	burrow_op_stats bad = {.size = 0};
	cr_assert_eq(burrow_trainer_op_stats(t[1], &bad), BURROW_E_INVAL);
	for (int i = 0; i < 2; i++)
		burrow_trainer_close(t[i]);
	burrow_dataset_close(ds);
	tu_rmrf(dir);
	free(d);
	free(dir);
}
