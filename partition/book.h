/* book.h: the partition book (K+1 offsets: part p owns new global ids [offsets[p],
 * offsets[p+1])) and its one owner lookup, shared by burrow_parts_owner and distributed
 * training. */
#ifndef BURROW_PARTITION_BOOK_H
#define BURROW_PARTITION_BOOK_H

#include <stdint.h>

/* The part that owns gid in [offsets[0], offsets[K]): the last p < K with offsets[p] <= gid
 * (so an empty part never owns a node). */
static inline int bw_book_owner(const int64_t *offsets, int K, int64_t gid)
{
	int lo = 0, hi = K - 1;
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (offsets[mid] <= gid)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

#endif
