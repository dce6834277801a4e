/* dataset_internal.h: what the dataset reader and writer share. */
#ifndef BURROW_DATASET_INTERNAL_H
#define BURROW_DATASET_INTERNAL_H

#include "npy.h"

/* "train", "valid", "test", indexed by enum burrow_split. */
extern const char *const bw_split_names[3];

/* Sane caps on meta.json's counts that size allocations before any file is read
 * (OGB's largest has 172 classes and 602 features). */
#define BW_MAX_CLASSES (1 << 20)
#define BW_MAX_FEAT_DIM (1 << 20)

/* Stream the graph into a dataset writer when it is too large to hold: indptr whole
 * ([num_nodes + 1], borrowed, written at once), then the ids row by row in any number
 * of pieces (int32 when num_nodes < 2^31, else int64), then end, which checks that
 * exactly indptr[num_nodes] ids arrived. Takes the place of burrow_writer_put_graph. */
int bw_writer_graph_begin(burrow_writer *w, const int64_t *indptr, int64_t num_nodes, bool symmetric);
int bw_writer_graph_append(burrow_writer *w, const void *ids, int64_t n);
int bw_writer_graph_end(burrow_writer *w);

#endif
