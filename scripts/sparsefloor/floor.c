/* The C floor for sgd-prev on sparse data (issue 27): the same update as
 * pairwise/sgdprev_sparse.go (the lazy O(nnz) loop) written plainly in C,
 * with none of its checks: previous-instance pairs drawn uniformly
 * (Lemire's multiply-shift), a bitmap label test, the hinge loss, the unit
 * l2 ball kept as w = alpha*v with a running |v|^2 (no error bound, no
 * exact recompute), the paper or window average by per-coordinate
 * timestamps. Data: n records, nnz nonzeros per row at uniform random
 * columns, N(0,1) values (+0.5 on even columns of positives), rows
 * scaled into the unit ball; 30 % positives; the shape of
 * BenchmarkPrevSparseStep. Prints CPU ns per step.
 *
 * The draws are taken 256 at a time and the rows of the active steps
 * four ahead are prefetched (__builtin_prefetch), as the Go loop does:
 * without it the floor waits on memory at most steps once the rows
 * (n*nnz*12 bytes) leave the caches.
 *
 *   cc -O2 -o floor floor.c -lm && ./floor N D STEPS paper|window l2|none
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t s0 = 0x9E3779B97F4A7C15ull, s1 = 0xD1B54A32D192ED03ull;
static uint64_t next(void) { /* xoroshiro128+ */
	uint64_t a = s0, b = s1, r = a + b;
	b ^= a;
	s0 = ((a << 24) | (a >> 40)) ^ b ^ (b << 16);
	s1 = (b << 37) | (b >> 27);
	return r;
}
static uint64_t below(uint64_t n) {
	__uint128_t m = (__uint128_t)next() * n;
	return (uint64_t)(m >> 64);
}
static double unif(void) { return (next() >> 11) * 0x1p-53; }
static double gauss(void) {
	double u = unif(), v = unif();
	if (u < 1e-300) u = 1e-300;
	return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}
static double cpu(void) {
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
	if (argc != 6) {
		fprintf(stderr, "usage: floor N D STEPS paper|window l2|none\n");
		return 2;
	}
	int n = atoi(argv[1]), nnz = 12, d = atoi(argv[2]);
	long T = atol(argv[3]);
	int window = strcmp(argv[4], "window") == 0, ball = strcmp(argv[5], "l2") == 0;
	long *ptr = malloc((n + 1) * sizeof(long));
	int32_t *idx = malloc((size_t)n * nnz * sizeof(int32_t));
	double *val = malloc((size_t)n * nnz * sizeof(double));
	uint64_t *pos = calloc((n + 63) / 64, 8);
	ptr[0] = 0;
	for (int i = 0; i < n; i++) {
		int y = unif() < 0.3;
		if (y) pos[i >> 6] |= 1ull << (i & 63);
		int32_t *c = idx + (long)i * nnz;
		for (int k = 0; k < nnz;) { /* distinct, sorted by insertion */
			int32_t x = (int32_t)below(d), dup = 0;
			for (int m = 0; m < k; m++) dup |= c[m] == x;
			if (dup) continue;
			int m = k++;
			while (m > 0 && c[m - 1] > x) { c[m] = c[m - 1]; m--; }
			c[m] = x;
		}
		double s = 0, *v = val + (long)i * nnz;
		for (int k = 0; k < nnz; k++) {
			v[k] = gauss() + (y && c[k] % 2 == 0 ? 0.5 : 0);
			s += v[k] * v[k];
		}
		if (s > 1)
			for (int k = 0; k < nnz; k++) v[k] /= sqrt(s);
		ptr[i + 1] = ptr[i] + nnz;
	}
	double *v = calloc(d, 8), *S = calloc(d, 8), *st = calloc(d, 8);
	double alpha = 1, n2 = 0, clock = 0, r = 1, eta = 0.5 / sqrt((double)T);
	long counted = 0;
	long prev = below(n);
	enum { B = 256, AHEAD = 4 };
	long dr[B + 1];
	int act[B];
	double t0 = cpu();
	for (long tb = 0; tb < T; tb += B) {
		int m = T - tb < B ? (int)(T - tb) : B, na = 0;
		dr[0] = prev;
		for (int q = 1; q <= m; q++) {
			dr[q] = below(n);
			long a = dr[q], b = dr[q - 1];
			act[na] = q;
			na += (pos[a >> 6] >> (a & 63) & 1) != (pos[b >> 6] >> (b & 63) & 1);
		}
		prev = dr[m];
	for (int ai = 0; ai < na; ai++) {
		if (ai + AHEAD < na) {
			int q = act[ai + AHEAD];
			long a = dr[q], b = dr[q - 1];
			__builtin_prefetch(idx + ptr[a]);
			__builtin_prefetch(val + ptr[a]);
			__builtin_prefetch(val + ptr[a] + 8);
			__builtin_prefetch(idx + ptr[b]);
			__builtin_prefetch(val + ptr[b]);
			__builtin_prefetch(val + ptr[b] + 8);
		}
		long t = tb + act[ai], i = dr[act[ai]], j = dr[act[ai] - 1];
		int bi = pos[i >> 6] >> (i & 63) & 1;
		double h = 0;
		for (long k = ptr[i]; k < ptr[i + 1]; k++) h += val[k] * v[idx[k]];
		for (long k = ptr[j]; k < ptr[j + 1]; k++) h -= val[k] * v[idx[k]];
		h *= alpha;
		double sg = bi ? 1 : -1;
		if (1 - sg * h <= 0) continue;
		clock += alpha * (double)(t - 1 - counted);
		counted = t - 1;
		double b = eta * sg / alpha;
		for (int side = 0; side < 2; side++, b = -b) {
			long a = side ? j : i;
			for (long k = ptr[a]; k < ptr[a + 1]; k++) {
				int32_t c = idx[k];
				S[c] += v[c] * (clock - st[c]);
				st[c] = clock;
				double o = v[c], nv = o + b * val[k];
				v[c] = nv;
				n2 += nv * nv - o * o;
			}
		}
		if (ball && alpha * alpha * n2 > r * r) {
			alpha *= r / sqrt(alpha * alpha * n2);
			if (alpha < 0.5) {
				for (int k = 0; k < d; k++) {
					S[k] += v[k] * (clock - st[k]);
					st[k] = 0;
					v[k] *= alpha;
				}
				clock = 0;
				alpha = 1;
				n2 = 0;
				for (int k = 0; k < d; k++) n2 += v[k] * v[k];
			}
		}
	}
	}
	double ns = (cpu() - t0) / (double)T;
	/* the output, so that nothing is optimized away */
	clock += alpha * (double)(T - counted);
	double chk = 0;
	for (int k = 0; k < d; k++) chk += S[k] + v[k] * (clock - st[k]);
	printf("%.2f ns/step (n=%d d=%d %s %s, checksum %.3g)\n", ns, n, d, argv[4], argv[5], chk);
	(void)window;
	return 0;
}
