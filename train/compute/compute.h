/* compute.h: the compute layer for its users (the driver, distributed training): tensors
 * on devices (tensor.h), message-flow-graph blocks (block.h), backends and their registry
 * (backend.h), the dispatchers (ops.h), and the layers, models and optimizers on them
 * (model.h). Nothing here knows about datasets, stores or MPI: the driver (train/driver/)
 * and distributed training (train/dist/) sit above it. The backends' table (backend_impl.h)
 * is not for them: they ask bw_backend_supports and go through the dispatchers. */
#ifndef BURROW_COMPUTE_H
#define BURROW_COMPUTE_H

#include "backend.h"
#include "block.h"
#include "device.h"
#include "gemm_own.h"
#include "model.h"
#include "ops.h"
#include "tensor.h"

/* Until the driver asks bw_backend_supports(be, BW_OP_SPMM) and bw_backend_name(be) instead
 * of reading be->ops->spmm and be->ops->name (train/driver/trainer.c, sparse_features). */
#include "backend_impl.h"

#endif /* BURROW_COMPUTE_H */
