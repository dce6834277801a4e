/* compute.h: the compute layer for its users (the driver, distributed training): tensors
 * on devices (tensor.h), message-flow-graph blocks (block.h), backends and their registry
 * (backend.h), the dispatchers (ops.h), and the layers, models and optimizers on them
 * (model.h; the relational ones: hmodel.h). Nothing here knows about datasets, stores or
 * MPI: the driver (train/driver/) and distributed training (train/dist/) sit above it. The backends' table (backend_impl.h)
 * is not for them: they ask bw_backend_supports and go through the dispatchers. */
#ifndef BURROW_COMPUTE_H
#define BURROW_COMPUTE_H

#include "backend.h"
#include "block.h"
#include "../../device/device.h"
#include "gemm_own.h"
#include "hmodel.h"
#include "model.h"
#include "ops.h"
#include "opcount.h"
#include "tensor.h"

#endif /* BURROW_COMPUTE_H */
