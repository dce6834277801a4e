/* store_sizing.h: what the training driver may know of the feature store's cache: how
 * many bytes a budget needs to hold a number of rows (graph/cache.c). */
#ifndef BURROW_STORE_SIZING_H
#define BURROW_STORE_SIZING_H

#include <stddef.h>

/* A budget with which the store's cache holds `rows` rows of row_bytes (the training
 * pipeline sizes "cache X% of the features" with it). */
size_t bw_cache_bytes_for(size_t rows, size_t row_bytes);

#endif
