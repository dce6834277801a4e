/* train_util.h: what the training test files share (test_train.c, test_pipeline.c): a
 * dataset where the graph matters more than the features, and a sink that collects
 * inference output. Include after criterion, train.h and util.h. */
#ifndef BURROW_TEST_TRAIN_UTIL_H
#define BURROW_TEST_TRAIN_UTIL_H

#include <string.h>

/* A CSBM graph with weak features (signal 0.6) and strong homophily (0.9): 4 classes,
 * degree 10, in dir/csbm-<nodes>-<feat_dim> (caller frees the path). */
static inline char *tu_weak_csbm(const char *dir, int64_t nodes, int64_t feat_dim)
{
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_CSBM);
	g.num_nodes = nodes;
	g.num_classes = 4;
	g.feat_dim = feat_dim;
	g.signal = 0.6;
	g.homophily = 0.9;
	g.avg_degree = 10;
	char *d = tu_path(dir, "csbm-%lld-%lld", (long long)nodes, (long long)feat_dim);
	cr_assert_eq(burrow_gen(&g, d), 0, "%s", burrow_last_error());
	return d;
}

/* bw_trainer_infer's sink: rows [r0, r0 + z->rows) of the output into z ([N, cols]). */
typedef struct tu_grab {
	float *z;
	int64_t cols;
} tu_grab;

static inline int tu_grab_sink(void *ctx, int64_t r0, const bw_tensor *z)
{
	tu_grab *g = ctx;
	memcpy(g->z + r0 * g->cols, z->data, (size_t)(z->rows * z->cols) * sizeof(float));
	return 0;
}

#endif
