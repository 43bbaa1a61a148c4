/* Shared helpers for the benchmark programs (our own code, not liburing's). */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

static inline double now_sec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline double tv_sec(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec * 1e-6;
}

static inline double env_double(const char *name, double def)
{
	const char *s = getenv(name);
	return (s && *s) ? atof(s) : def;
}

/* The random block numbers of the randread programs (same sequence in
 * each, so they read the same blocks). */
static unsigned long long bench_rng = 0x9E3779B97F4A7C15ULL;
static inline unsigned long long xorshift(void)
{
	bench_rng ^= bench_rng << 13;
	bench_rng ^= bench_rng >> 7;
	bench_rng ^= bench_rng << 17;
	return bench_rng;
}

static inline void die(const char *what, int err)
{
	fprintf(stderr, "%s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}
#endif
