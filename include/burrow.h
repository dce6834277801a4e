/* burrow.h: the one public header of libburrow, out-of-core graph neural network training.
 *
 * Burrow keeps a graph as a dataset directory (NumPy files plus meta.json, see
 * docs/format.md) and trains GNNs on it with the vertex features left on disk.
 * This header and the module headers it includes are the whole API and its
 * documentation; include this one (each module header also compiles alone):
 *
 *   burrow/core.h       version and limits, status and messages, logging, memory, dtypes
 *   burrow/graph.h      CSR graphs, dataset directories (open, verify, write), .npy files
 *   burrow/store.h      the feature store and its cache
 *   burrow/datasets.h   synthetic graphs, the OGB catalog, download, prep, import
 *   burrow/sampler.h    neighbor sampling of mini-batches
 *   burrow/train.h      the trainer, checkpoints, embeddings and predictions
 *   burrow/partition.h  partitioning into parts for distributed training
 *   burrow/dist.h       distributed training over MPI (libburrow_mpi)
 *   burrow/device.h     compute devices (CUDA)
 *
 * Conventions
 *   - Actions return int: 0 (BURROW_OK) is success, negative is an error
 *     (BURROW_E_*), positive is information (BURROW_DONE). burrow_strerror() names a
 *     status; burrow_last_error() gives the calling thread's last message, which
 *     names the file, line or id at fault.
 *   - Constructors are burrow_x_open(burrow_x **out, ...): *out is NULL on failure.
 *     Destructors accept NULL.
 *   - Options are plain structs filled by burrow_x_defaults(); set the fields you
 *     care about, so new fields never break callers.
 *   - Every options and stats struct opens with `size_t size`: _defaults() sets it
 *     for options; for stats the caller does (burrow_epoch_stats es = {.size =
 *     sizeof es}). A library newer than its caller reads only `size` bytes of the
 *     options (the rest keep their defaults) and writes only `size` bytes of the
 *     stats; a size smaller than the size field itself (0: not filled) is
 *     BURROW_E_INVAL naming the struct, and options from a newer caller with a field
 *     set past what this library knows are BURROW_E_UNSUPPORTED.
 *   - The library never prints or exits; messages go to the callback set with
 *     burrow_log_set().
 *   - CSR widths are fixed: 64-bit row offsets; vertex ids are int32 when the graph
 *     has fewer than 2^31 nodes, else int64 (burrow_csr.index_width says which).
 *
 * Example: generate a small graph and print its size.
 *
 *     burrow_gen_opts g;
 *     burrow_gen_defaults(&g, BURROW_GEN_CSBM);
 *     g.num_nodes = 10000;
 *     if (burrow_gen(&g, "data/csbm") < 0) { fprintf(stderr, "%s\n", burrow_last_error()); return 1; }
 *     burrow_dataset *ds;
 *     if (burrow_dataset_open(&ds, "data/csbm") < 0) { fprintf(stderr, "%s\n", burrow_last_error()); return 1; }
 *     const burrow_dataset_info *in = burrow_dataset_get_info(ds);
 *     printf("%lld nodes, %lld edges\n", (long long)in->num_nodes, (long long)in->num_edges);
 *     burrow_dataset_close(ds);
 */
#ifndef BURROW_H
#define BURROW_H

#include "burrow/core.h"
#include "burrow/graph.h"
#include "burrow/store.h"
#include "burrow/datasets.h"
#include "burrow/sampler.h"
#include "burrow/train.h"
#include "burrow/partition.h"
#include "burrow/dist.h"
#include "burrow/device.h"

#endif /* BURROW_H */
