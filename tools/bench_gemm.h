/* bench_gemm.h: the GEMM rate burrow bench gemm measures, for bench train's ratio, and the load line both print. */
#ifndef BURROW_BENCH_GEMM_H
#define BURROW_BENCH_GEMM_H

#include <burrow.h>

#include <stddef.h>
#include <stdint.h>

/* The products of a layer with input [m, k] and weight [k, n]: its forward (A B), its
 * weight gradient (A^T G) and its input gradient (G W^T), each 2 m n k FLOPs. */
enum { GEMM_AB = 0, GEMM_ATG = 1, GEMM_GWT = 2, GEMM_SHAPES = 3 };

/* One shape timed through both paths (enum burrow_gemm_path), calls interleaved. */
typedef struct gemm_cell {
	int shape;
	int64_t m, k, n;
	double gflops[2];       /* median GFLOP/s of each path */
	double median_s[2];
	int repeats;            /* calls of each path */
	const char *kernel[2];  /* what each path ran */
} gemm_cell;

/* Time cell->shape at (m, k, n) on g for about `seconds` (at least 3 calls of each path). */
int bench_gemm_cell(burrow_gemm *g, gemm_cell *cell, double seconds);
/* The first three fields of /proc/loadavg into buf ("?" when unreadable). */
const char *bench_load(char *buf, size_t cap);
/* "A B", "A^T G", "G W^T" */
const char *bench_gemm_shape_name(int shape);

#endif
