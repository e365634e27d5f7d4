/* The C floor for sgd-prev on dense data (issue 27): the update of
 * pairwise's dense sgd-prev loop (sgdprev_fast.go, stepsDense, which
 * BenchmarkPrevStep's "fast" paths time) written plainly in C, with none of
 * its checks and none of its bookkeeping for bit-identity with the general
 * loop. Per step t = 1..T, both sides do:
 *
 *   draw i_t uniformly in [0, n) (PCG-DXSM, the generator math/rand/v2
 *   calls PCG, and Lemire's multiply-shift with its rejection test), 256
 *   draws at a time; pair it with the previous draw i_{t-1}; test the two
 *   labels in a bitmap; only when they differ (an "active" step) read the
 *   two rows, prefetched four active steps ahead, compute
 *   h = w·(x_i - x_j) and the hinge margin 1 - s·h (s = +1 when i is the
 *   positive record); when it is > 0, update w += η·s·(x_i - x_j) and,
 *   with the l2 ball, scale w back to radius 1 when |w|² > 1;
 *   η = 0.5/√T (the benchmark's ScaledConstant schedule).
 *
 * The output average, in the same pass over w as the update:
 *   paper  (the default, Σ η·w_{t-2} / Σ η): at an update the previous
 *          iterate is added to the sum with weight η·(steps since the last
 *          addition), then becomes the new w;
 *   window (the paper protocol's, the uniform average of w_1..w_T): at an
 *          update the old w is added times the steps it held.
 *
 * What the Go loop does beyond this floor: it adds the η's one by one
 * (per draw, and from a table) and the window's w repeatedly (not a
 * multiplication) so that its output is bit-identical to the general loop;
 * it adds the window's w at every active step, not only at updates; its
 * ball test sums |w|² in four parts and re-sums exactly near the radius.
 * The draws, labels, active steps and updates are the same algorithm; the
 * data are the same distribution as BenchmarkPrevStep's ijcnn1-shape
 * (shapedAUC: N(0,1) entries, +1 on feature 0 for positives, rows scaled
 * into the unit ball), from this program's own seeded generator.
 *
 * Prints CPU ns per step (CLOCK_PROCESS_CPUTIME_ID), the share of active
 * steps and of updates, and a checksum of the output.
 *
 *   cc -O2 -o floor floor.c -lm && ./floor N D POS STEPS paper|window l2|none
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef unsigned __int128 u128;

/* PCG-DXSM (O'Neill; the multiplier and increment of pcg-cpp's 128-bit
 * generator, the DXSM output function). */
static u128 pcg_state;
static inline uint64_t pcg_next(void) {
	const u128 mul = ((u128)0x2360ed051fc65da4ull << 64) | 0x4385df649fccf645ull;
	const u128 inc = ((u128)0x5851f42d4c957f2dull << 64) | 0x14057b7ef767814full;
	pcg_state = pcg_state * mul + inc;
	uint64_t hi = (uint64_t)(pcg_state >> 64), lo = (uint64_t)pcg_state;
	hi ^= hi >> 32;
	hi *= 0xda942042e4dd58b5ull;
	hi ^= hi >> 48;
	return hi * (lo | 1);
}
/* uniform in [0, n): Lemire's multiply-shift with rejection */
static inline uint64_t below(uint64_t n) {
	u128 m = (u128)pcg_next() * n;
	uint64_t lo = (uint64_t)m;
	if (lo < n) {
		uint64_t thresh = -n % n;
		while (lo < thresh) {
			m = (u128)pcg_next() * n;
			lo = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}
static double unif(void) { return (pcg_next() >> 11) * 0x1p-53; }
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

static int n, d;
static double *x, *w, *sum, *prv;
static uint64_t *pos;
static long actives, updates;

#define BIT(a) ((pos[(a) >> 6] >> ((a) & 63)) & 1)

/* T steps; paper and ball are constants at each call site, so that the
 * compiler makes four loops without the tests inside. */
static inline __attribute__((always_inline)) void run(long T, int paper, int ball) {
	double eta = 0.5 / sqrt((double)T), r2 = 1;
	long tf = 0; /* paper: the step of the last addition to sum */
	long tw = 0; /* window: steps 1..tw are in sum */
	enum { B = 256, AHEAD = 4 };
	long dr[B + 1];
	int act[B];
	long prevdraw = (long)below(n);
	for (long tb = 0; tb < T; tb += B) {
		int m = T - tb < B ? (int)(T - tb) : B, na = 0;
		dr[0] = prevdraw;
		for (int q = 1; q <= m; q++) {
			long a = (long)below(n), b = dr[q - 1];
			dr[q] = a;
			act[na] = q;
			na += BIT(a) != BIT(b);
		}
		prevdraw = dr[m];
		actives += na;
		for (int ai = 0; ai < na; ai++) {
			if (ai + AHEAD < na) {
				int q = act[ai + AHEAD];
				const char *pa = (const char *)(x + dr[q] * d), *pb = (const char *)(x + dr[q - 1] * d);
				for (int o = 0; o < d * 8; o += 64) {
					__builtin_prefetch(pa + o);
					__builtin_prefetch(pb + o);
				}
				__builtin_prefetch(pa + d * 8 - 1);
				__builtin_prefetch(pb + d * 8 - 1);
			}
			int q = act[ai];
			long t = tb + q, i = dr[q], j = dr[q - 1];
			const double *xi = x + i * d, *xj = x + j * d;
			double h = 0;
			for (int k = 0; k < d; k++) h += w[k] * (xi[k] - xj[k]);
			double s = BIT(i) ? 1 : -1;
			if (1 - s * h <= 0) continue;
			updates++;
			double a = eta * s, n2 = 0;
			if (paper) {
				double pend = eta * (double)(t + 1 - tf); /* the next step's */
				tf = t + 1;
				for (int k = 0; k < d; k++) {
					double v = w[k] + a * (xi[k] - xj[k]);
					sum[k] += pend * prv[k];
					prv[k] = v;
					w[k] = v;
					if (ball) n2 += v * v;
				}
				if (ball && n2 > r2) {
					double c = 1 / sqrt(n2);
					for (int k = 0; k < d; k++) prv[k] = w[k] *= c;
				}
			} else {
				double c = (double)(t - 1 - tw); /* the steps the old w held */
				tw = t - 1;
				for (int k = 0; k < d; k++) {
					double o = w[k], v = o + a * (xi[k] - xj[k]);
					sum[k] += c * o;
					w[k] = v;
					if (ball) n2 += v * v;
				}
				if (ball && n2 > r2) {
					double c2 = 1 / sqrt(n2);
					for (int k = 0; k < d; k++) w[k] *= c2;
				}
			}
		}
	}
	if (!paper)
		for (int k = 0; k < d; k++) sum[k] += (double)(T - tw) * w[k];
}

int main(int argc, char **argv) {
	if (argc != 7) {
		fprintf(stderr, "usage: floor N D POS STEPS paper|window l2|none\n");
		return 2;
	}
	n = atoi(argv[1]);
	d = atoi(argv[2]);
	double pfrac = atof(argv[3]);
	long T = atol(argv[4]);
	int paper = strcmp(argv[5], "paper") == 0, ball = strcmp(argv[6], "l2") == 0;
	if (n < 2 || d < 1 || T < 1 || (!paper && strcmp(argv[5], "window")) || (!ball && strcmp(argv[6], "none"))) {
		fprintf(stderr, "floor: bad arguments\n");
		return 2;
	}
	pcg_state = 7;
	x = malloc((size_t)n * d * sizeof(double));
	pos = calloc((n + 63) / 64, 8);
	for (long i = 0; i < n; i++) {
		int y = unif() < pfrac;
		if (y) pos[i >> 6] |= 1ull << (i & 63);
		double *row = x + i * d, s = 0;
		for (int k = 0; k < d; k++) row[k] = gauss();
		if (y) row[0] += 1;
		for (int k = 0; k < d; k++) s += row[k] * row[k];
		if (s > 1)
			for (int k = 0; k < d; k++) row[k] /= sqrt(s);
	}
	w = calloc(d, 8);
	sum = calloc(d, 8);
	prv = calloc(d, 8);
	pcg_state = ((u128)1 << 64) | 2;
	double t0 = cpu();
	if (paper && ball) run(T, 1, 1);
	else if (paper) run(T, 1, 0);
	else if (ball) run(T, 0, 1);
	else run(T, 0, 0);
	double ns = (cpu() - t0) / (double)T;
	double chk = 0; /* the output, so that nothing is optimized away */
	for (int k = 0; k < d; k++) chk += sum[k] + w[k];
	printf("%.2f ns/step (n=%d d=%d %s %s; active %.3f, updates %.3f of the steps; checksum %.6g)\n",
	       ns, n, d, argv[5], argv[6], (double)actives / T, (double)updates / T, chk);
	return 0;
}
