/* store_sizing.h: what the training driver may know of the feature store's cache: how
 * many bytes a budget needs to hold a number of rows (graph/cache.c). */
#ifndef BURROW_STORE_SIZING_H
#define BURROW_STORE_SIZING_H

#include <stddef.h>

/* A budget with which the store's cache holds `rows` rows of row_bytes (the training
 * pipeline sizes "cache X% of the features" with it). */
size_t bw_cache_bytes_for(size_t rows, size_t row_bytes);

/* Bytes of one cached row of dim elements stored as file_elem bytes and gathered as out_elem:
 * the narrower of the two (a float16 file gathered as float32 is cached as stored), as the
 * store's info.cache_row_bytes says once it is open. */
static inline size_t bw_cache_row_bytes(size_t dim, size_t file_elem, size_t out_elem)
{
	return dim * (file_elem < out_elem ? file_elem : out_elem);
}

#endif
