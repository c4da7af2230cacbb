/* SPDX-License-Identifier: MIT */
/*
 * map_bench.c - throughput of the host maps under 1..16 threads:
 * hash lookups (read), lookups with an atomic add into the value, replacing
 * updates, and 16-byte ring buffer outputs with one consumer thread.
 * `make map-bench` runs it; results go to bench/results/ by hand.
 *
 * The hash has 4096 entries of which 1024 keys are used, each thread with
 * its own pseudo-random key sequence; the ring buffer is 16 MiB, so nothing
 * is dropped unless the consumer falls behind (the count is printed).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bpf/map.h"

enum { BENCH_OPS = 2000000, BENCH_KEYS = 1024, BENCH_MAX_THREADS = 16 };

static struct map *bench_hash, *bench_ring;
static atomic_int bench_go, bench_stop;

static double bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static uint64_t bench_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (*s >> 40) % BENCH_KEYS;
}

static void *bench_lookup(void *arg)
{
	uint64_t s = (uintptr_t)arg * 7919, sum = 0;

	while (!atomic_load(&bench_go))
		;
	for (int i = 0; i < BENCH_OPS; i++) {
		uint64_t k = bench_next(&s);
		sum += *(volatile uint64_t *)map_lookup(bench_hash, &k);
	}
	return (void *)(uintptr_t)sum;
}

static void *bench_lookup_add(void *arg)
{
	uint64_t s = (uintptr_t)arg * 7919;

	while (!atomic_load(&bench_go))
		;
	for (int i = 0; i < BENCH_OPS; i++) {
		uint64_t k = bench_next(&s);
		__atomic_fetch_add((uint64_t *)map_lookup(bench_hash, &k), 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *bench_update(void *arg)
{
	uint64_t s = (uintptr_t)arg * 7919;

	while (!atomic_load(&bench_go))
		;
	for (int i = 0; i < BENCH_OPS; i++) {
		uint64_t k = bench_next(&s);
		map_update(bench_hash, &k, &s, MAP_ANY);
	}
	return NULL;
}

static void *bench_output(void *arg)
{
	uint64_t rec[2] = {1, 2};

	while (!atomic_load(&bench_go))
		;
	for (int i = 0; i < BENCH_OPS; i++)
		map_ringbuf_output(bench_ring, rec, sizeof(rec), 0);
	return NULL;
}

static int bench_ignore(void *arg, const void *data, size_t size)
{
	return 0;
}

static void *bench_consume(void *arg)
{
	long n = 0;

	while (!atomic_load(&bench_stop))
		n += map_ringbuf_consume(bench_ring, bench_ignore, NULL);
	n += map_ringbuf_consume(bench_ring, bench_ignore, NULL);
	return (void *)n;
}

/* Millions of operations per second, all threads together. */
static double bench_run(void *(*fn)(void *), int threads)
{
	pthread_t th[BENCH_MAX_THREADS];

	atomic_store(&bench_go, 0);
	for (int t = 0; t < threads; t++)
		if (pthread_create(&th[t], NULL, fn, (void *)(uintptr_t)(t + 1)))
			exit(1);
	double start = bench_now_ns();
	atomic_store(&bench_go, 1);
	for (int t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
	return (double)threads * BENCH_OPS / (bench_now_ns() - start) * 1e3;
}

int main(void)
{
	struct map_def hd = {.type = MAP_TYPE_HASH, .key_size = 8, .value_size = 8,
			     .max_entries = 4096, .name = "bench_hash"};
	struct map_def rd = {.type = MAP_TYPE_RINGBUF, .max_entries = 1 << 24, .name = "bench_ring"};
	struct err e;
	static const struct {
		const char *name;
		void *(*fn)(void *);
	} hash_cases[] = {{"hash lookup", bench_lookup},
			  {"hash lookup + atomic add", bench_lookup_add},
			  {"hash update (replace)", bench_update}};

	if (map_create(&hd, &bench_hash, &e) || map_create(&rd, &bench_ring, &e)) {
		fprintf(stderr, "map_bench: %s\n", e.msg);
		return 1;
	}
	for (uint64_t k = 0; k < BENCH_KEYS; k++)
		map_update(bench_hash, &k, &k, MAP_NOEXIST);
	printf("%-28s %7s %10s\n", "operation", "threads", "Mops/s");
	for (size_t c = 0; c < sizeof(hash_cases) / sizeof(hash_cases[0]); c++)
		for (int t = 1; t <= BENCH_MAX_THREADS; t *= 2)
			printf("%-28s %7d %10.1f\n", hash_cases[c].name, t, bench_run(hash_cases[c].fn, t));
	for (int t = 1; t <= BENCH_MAX_THREADS; t *= 2) {
		pthread_t consumer;
		void *consumed;
		uint64_t dropped = map_ringbuf_dropped(bench_ring);
		atomic_store(&bench_stop, 0);
		if (pthread_create(&consumer, NULL, bench_consume, NULL))
			return 1;
		double mops = bench_run(bench_output, t);
		atomic_store(&bench_stop, 1);
		pthread_join(consumer, &consumed);
		printf("%-28s %7d %10.1f   (consumed %ld, dropped %llu)\n", "ringbuf output 16 B", t,
		       mops, (long)(intptr_t)consumed,
		       (unsigned long long)(map_ringbuf_dropped(bench_ring) - dropped));
	}
	map_free(bench_hash);
	map_free(bench_ring);
	return 0;
}
