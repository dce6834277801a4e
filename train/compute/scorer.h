/* scorer.h: link prediction's edge scorer over node embeddings and its binary cross-entropy
 * loss, with the hand-written backward (scorer.c). Host memory: the pairs of a batch are few
 * beside its neighborhood, and the driver brings the embeddings to the host for them. */
#ifndef BURROW_SCORER_H
#define BURROW_SCORER_H

#include "../../core/internal.h"

/* enum burrow_scorer_kind (burrow/train.h): DOT = 0: score(u, v) = <h_u, h_v>; MLP = 1:
 * z = h_u * h_v (elementwise), a = relu(z W1 + b1), score = <a, w2> + b2 (two layers, width
 * dim, PyG's LinkPredictor). */
typedef struct bw_scorer {
	int kind;
	int64_t dim;                 /* embedding width */
	int64_t num_params;          /* 0 for dot; dim^2 + 2 dim + 1 for mlp */
	float *params, *grads;       /* [num_params] host memory, owned: W1 [dim, dim], b1 [dim], w2 [dim], b2 */
	float *z, *a, *ga;           /* mlp scratch [cap, dim] each */
	int64_t cap;
	int threads;
} bw_scorer;

/* A scorer of kind over embeddings of width dim, its weights drawn from key (Glorot-uniform
 * W1 and w2, zero biases). */
int bw_scorer_open(bw_scorer **out, int kind, int64_t dim, uint64_t key, int threads);
void bw_scorer_close(bw_scorer *s);
/* out[i] = score(h[src[i]], h[dst[i]]) for i < n; h [rows, dim] row-major (host). */
int bw_scorer_score(bw_scorer *s, const float *h, const int32_t *src, const int32_t *dst, int64_t n, float *out);
/* Mean binary cross-entropy with logits over the n pairs (label 1 or 0) into *loss; the
 * parameter gradients are overwritten, and gh [rows, dim] (zeroed by the caller) gets
 * dLoss/dh added. */
int bw_scorer_loss(bw_scorer *s, const float *h, const int32_t *src, const int32_t *dst, const float *label, int64_t n,
		   double *loss, float *gh);

#endif /* BURROW_SCORER_H */
