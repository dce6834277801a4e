/* dataset_internal.h: what the dataset reader and writer share. */
#ifndef BURROW_DATASET_INTERNAL_H
#define BURROW_DATASET_INTERNAL_H

#include "npy.h"

/* "train", "valid", "test", indexed by enum burrow_split. */
extern const char *const bw_split_names[3];

#endif
