/* block.c: message-flow-graph blocks: structural checks, the transpose the backward pass
 * walks, GCN normalization, the early / late split of the overlap plan, and the copies of
 * all of it on a device. */
#include "block.h"

#include <math.h>
#include <string.h>

void bw_block_init(bw_block *b, int64_t num_dst, int64_t num_src, const int64_t *indptr, const int32_t *indices)
{
	memset(b, 0, sizeof *b);
	b->num_dst = num_dst;
	b->num_src = num_src;
	b->indptr = indptr;
	b->indices = indices;
}

int bw_block_check(const bw_block *b)
{
	if (b->num_dst < 0 || b->num_src < 0 || (!b->bipartite && b->num_src < b->num_dst))
		return bw_err(BURROW_E_INVAL, "block: %lld destination rows but %lld sources (need 0 <= dst <= src)",
			      (long long)b->num_dst, (long long)b->num_src);
	if (b->num_src > INT32_MAX)
		return bw_err(BURROW_E_UNSUPPORTED, "block: %lld sources do not fit int32 local ids", (long long)b->num_src);
	if (b->num_dst > INT32_MAX) /* a bipartite block's (the transpose lists rows as int32) */
		return bw_err(BURROW_E_UNSUPPORTED, "block: %lld destinations do not fit int32 local ids",
			      (long long)b->num_dst);
	if (!b->indptr || (bw_block_edges(b) > 0 && !b->indices))
		return bw_err(BURROW_E_INVAL, "block: missing indptr or indices");
	for (int64_t i = 0; i < b->num_dst; i++) {
		if (b->indptr[i + 1] < b->indptr[i])
			return bw_err(BURROW_E_FORMAT, "block: indptr decreases at row %lld", (long long)i);
		for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++)
			if (b->indices[e] < 0 || b->indices[e] >= b->num_src)
				return bw_err(BURROW_E_RANGE, "block: row %lld has source %d outside [0, %lld)", (long long)i,
					      b->indices[e], (long long)b->num_src);
	}
	return 0;
}

/* Counting-sort transpose: sources in id order, each listing its destination rows ascending. */
static int transpose(bw_block *b)
{
	const int64_t ns = b->num_src, nd = b->num_dst, ne = bw_block_edges(b), base = b->indptr[0];
	int64_t *tp = bw_calloc((size_t)ns + 1, sizeof *tp);
	int32_t *ti = bw_malloc((size_t)(ne ? ne : 1) * sizeof *ti);
	int64_t *pos = bw_malloc((size_t)(ns ? ns : 1) * sizeof *pos);
	float *tw = b->edge_weight ? bw_malloc((size_t)(ne ? ne : 1) * sizeof *tw) : NULL;
	if (!tp || !ti || !pos || (b->edge_weight && !tw)) {
		bw_free(tp);
		bw_free(ti);
		bw_free(pos);
		bw_free(tw);
		return BURROW_E_NOMEM;
	}
	for (int64_t e = base; e < base + ne; e++)
		tp[b->indices[e] + 1]++;
	for (int64_t j = 0; j < ns; j++)
		tp[j + 1] += tp[j];
	memcpy(pos, tp, (size_t)ns * sizeof *pos);
	for (int64_t i = 0; i < nd; i++)
		for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) {
			if (tw)
				tw[pos[b->indices[e]]] = b->edge_weight[e];
			ti[pos[b->indices[e]]++] = (int32_t)i;
		}
	bw_free(pos);
	b->t_indptr = tp;
	b->t_indices = ti;
	b->t_weight = tw;
	return 0;
}

/* GCN norms of a weighted block (PyG's gcn_norm with edge weights and a self loop of
 * weight 1): 1/sqrt(1 + the row's weights) for a destination (and the same source), and for
 * a source that is not a destination 1/sqrt(1 + the weights of the edges that read it). */
static int weighted_norms(bw_block *b, float *nb)
{
	const int64_t nd = b->num_dst, ns = b->num_src;
	double *deg = bw_calloc((size_t)(ns + 1), sizeof *deg);
	if (!deg) {
		bw_free(nb);
		return BURROW_E_NOMEM;
	}
	for (int64_t i = 0; i < nd; i++)
		for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) {
			deg[i] += b->edge_weight[e];
			if (b->indices[e] >= nd)
				deg[b->indices[e]] += b->edge_weight[e];
		}
	for (int64_t j = 0; j < ns; j++)
		nb[j < nd ? j : nd + j] = (float)(1.0 / sqrt(deg[j] + 1.0));
	memcpy(nb + nd, nb, (size_t)nd * sizeof *nb);
	bw_free(deg);
	b->norm_buf = nb;
	b->dst_norm = nb;
	b->src_norm = nb + nd;
	return 0;
}

static int block_norms(bw_block *b)
{
	const int64_t nd = b->num_dst, ns = b->num_src;
	float *nb = bw_malloc((size_t)(nd + ns + 1) * sizeof *nb);
	if (!nb)
		return BURROW_E_NOMEM;
	float *dn = nb, *sn = nb + nd;
	if (b->edge_weight)
		return weighted_norms(b, nb);
	for (int64_t i = 0; i < nd; i++)
		dn[i] = (float)(1.0 / sqrt((double)(b->indptr[i + 1] - b->indptr[i]) + 1.0));
	memcpy(sn, dn, (size_t)nd * sizeof *sn);
	if (ns > nd) {
		int64_t *cnt = bw_calloc((size_t)(ns - nd), sizeof *cnt);
		if (!cnt) {
			bw_free(nb);
			return BURROW_E_NOMEM;
		}
		for (int64_t e = b->indptr[0]; e < b->indptr[nd]; e++)
			if (b->indices[e] >= nd)
				cnt[b->indices[e] - nd]++;
		for (int64_t j = nd; j < ns; j++)
			sn[j] = (float)(1.0 / sqrt((double)cnt[j - nd] + 1.0));
		bw_free(cnt);
	}
	b->norm_buf = nb;
	b->dst_norm = dn;
	b->src_norm = sn;
	return 0;
}

int bw_block_prepare(bw_block *b, bool want_transpose, bool gcn)
{
	int st;
	if (want_transpose && !b->t_indptr && (st = transpose(b)))
		return st;
	if (gcn && (!b->dst_norm || !b->src_norm)) {
		if (b->bipartite)
			return bw_err(BURROW_E_INVAL, "block: GCN norms of a bipartite block (no destination is a source)");
		if (b->dst_norm || b->src_norm)
			return bw_err(BURROW_E_INVAL, "block: set both GCN norms or neither");
		if ((st = block_norms(b)))
			return st;
	}
	return 0;
}

int bw_block_split(bw_block *b, int64_t split)
{
	const int64_t nd = b->num_dst, ns = b->num_src;
	if (split < nd || split > ns)
		return bw_err(BURROW_E_INVAL, "block: split %lld outside [%lld, %lld]", (long long)split, (long long)nd,
			      (long long)ns);
	if (b->split == split && b->part_indptr[0])
		return 0;
	const int64_t ne = b->indptr[nd];
	int64_t *ip[2];
	int32_t *ix[2];
	for (int p = 0; p < 2; p++) {
		ip[p] = bw_malloc((size_t)(nd + 1) * sizeof *ip[p]);
		ix[p] = bw_malloc((size_t)(ne ? ne : 1) * sizeof *ix[p]);
	}
	if (!ip[0] || !ip[1] || !ix[0] || !ix[1]) {
		for (int p = 0; p < 2; p++) {
			bw_free(ip[p]);
			bw_free(ix[p]);
		}
		return BURROW_E_NOMEM;
	}
	/* both keep the block's edge numbering base, so offsets index like the block's own */
	int64_t k[2] = {b->indptr[0], b->indptr[0]};
	ip[0][0] = ip[1][0] = b->indptr[0];
	for (int64_t i = 0; i < nd; i++) {
		for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) {
			const int p = b->indices[e] >= split;
			ix[p][k[p]++] = b->indices[e];
		}
		ip[0][i + 1] = k[0];
		ip[1][i + 1] = k[1];
	}
	for (int p = 0; p < 2; p++) {
		bw_free(b->part_indptr[p]);
		bw_free(b->part_indices[p]);
		b->part_indptr[p] = ip[p];
		b->part_indices[p] = ix[p];
	}
	b->split = split;
	return 0;
}

/* One array on the device: the host array itself on a host-memory device. */
static int put(bw_block *b, int slot, const bw_device *dev, bw_stream *s, const void *src, size_t bytes,
	       const void **dst)
{
	int st = bw_dbuf_from_host_async(&b->d.buf[slot], dev, src, bytes, s);
	*dst = st ? NULL : b->d.buf[slot].ptr;
	return st;
}

int bw_block_upload(bw_block *b, const bw_device *dev) { return bw_block_upload_async(b, dev, NULL); }

int bw_block_upload_async(bw_block *b, const bw_device *dev, bw_stream *s)
{
	bw_block_dev *d = &b->d;
	const int64_t nd = b->num_dst, ns = b->num_src, ne = b->indptr[nd];
	const size_t ip_bytes = (size_t)(nd + 1) * sizeof(int64_t), ix_bytes = (size_t)ne * sizeof(int32_t);
	int st;
	if (d->dev != dev) { /* buffers of another device go; those of dev (bw_block_reset) are reused */
		bw_dbuf keep[sizeof d->buf / sizeof *d->buf];
		for (int i = 0; i < (int)(sizeof d->buf / sizeof *d->buf); i++) {
			if (d->buf[i].dev != dev)
				bw_dbuf_free(&d->buf[i]);
			keep[i] = d->buf[i];
		}
		memset(d, 0, sizeof *d);
		memcpy(d->buf, keep, sizeof keep);
	}
	if (!d->dev) {
		if ((st = put(b, 0, dev, s, b->indptr, ip_bytes, (const void **)&d->indptr)) ||
		    (st = put(b, 1, dev, s, b->indices, ix_bytes, (const void **)&d->indices)))
			return st;
		d->part_indptr[BW_PART_ALL] = d->indptr;
		d->part_indices[BW_PART_ALL] = d->indices;
		d->dev = dev;
	}
	if (b->t_indptr && !d->has_transpose) {
		if ((st = put(b, 2, dev, s, b->t_indptr, (size_t)(ns + 1) * sizeof(int64_t), (const void **)&d->t_indptr)) ||
		    (st = put(b, 3, dev, s, b->t_indices, ix_bytes, (const void **)&d->t_indices)))
			return st;
		d->has_transpose = true;
	}
	if (b->dst_norm && b->src_norm && !d->has_norms) {
		if ((st = put(b, 4, dev, s, b->dst_norm, (size_t)nd * sizeof(float), (const void **)&d->dst_norm)) ||
		    (st = put(b, 5, dev, s, b->src_norm, (size_t)ns * sizeof(float), (const void **)&d->src_norm)))
			return st;
		d->has_norms = true;
	}
	if (b->part_indptr[0] && !d->has_split) {
		for (int p = 0; p < 2; p++)
			if ((st = put(b, 6 + 2 * p, dev, s, b->part_indptr[p], ip_bytes, (const void **)&d->part_indptr[1 + p])) ||
			    (st = put(b, 7 + 2 * p, dev, s, b->part_indices[p], ix_bytes, (const void **)&d->part_indices[1 + p])))
				return st;
		d->has_split = true;
	}
	d->edge_weight = b->edge_weight; /* host memory: read by the CPU's weighted aggregation only */
	d->t_weight = b->t_weight;
	return 0;
}

/* What prepare and split made on the host, freed; the device copies forgotten. */
static void release_host(bw_block *b)
{
	bw_free(b->t_indptr);
	bw_free(b->t_indices);
	bw_free(b->t_weight);
	b->t_weight = NULL;
	if (b->norm_buf) {
		bw_free(b->norm_buf);
		b->dst_norm = b->src_norm = NULL;
	}
	for (int p = 0; p < 2; p++) {
		bw_free(b->part_indptr[p]);
		bw_free(b->part_indices[p]);
		b->part_indptr[p] = NULL;
		b->part_indices[p] = NULL;
	}
	b->split = 0;
	b->t_indptr = NULL;
	b->t_indices = NULL;
	b->norm_buf = NULL;
}

void bw_block_release(bw_block *b)
{
	for (int i = 0; i < (int)(sizeof b->d.buf / sizeof *b->d.buf); i++)
		bw_dbuf_free(&b->d.buf[i]);
	memset(&b->d, 0, sizeof b->d);
	release_host(b);
}

void bw_block_reuse(bw_block *b, int64_t num_dst, int64_t num_src, const int64_t *indptr, const int32_t *indices)
{
	bw_dbuf keep[sizeof b->d.buf / sizeof *b->d.buf];
	release_host(b);
	memcpy(keep, b->d.buf, sizeof keep);
	bw_block_init(b, num_dst, num_src, indptr, indices);
	memcpy(b->d.buf, keep, sizeof keep);
}

void bw_gcn_norm_from_csr(const burrow_csr *g, const int64_t *ids, int64_t n, float *out, int threads)
{
#pragma omp parallel for schedule(dynamic, BW_CHUNK_ELEMS) num_threads(bw_threads(threads))
	for (int64_t k = 0; k < n; k++) {
		int64_t v = ids ? ids[k] : k;
		out[k] = (float)(1.0 / sqrt((double)(g->indptr[v + 1] - g->indptr[v]) + 1.0));
	}
}
