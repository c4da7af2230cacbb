/* SPDX-License-Identifier: MIT */
/*
 * tenant - one tenant of a shared GPU, for the scheduling benchmark
 * (bench/sched_bench.sh): several of these run at once as separate
 * processes, each with its own CUDA context, as an inference server and
 * training jobs would.
 *
 *   tenant lc [-requests N] [-kernel-us U] [-gap-us G] [-out FILE]
 *       latency-critical: N requests, each one short kernel (8 blocks
 *       spinning U microseconds) launched and waited for, G microseconds
 *       apart.  Prints the request latency percentiles (host clock, launch
 *       to completion); -out writes every latency in microseconds.
 *   tenant be [-seconds S] [-work N] [-blocks B]
 *       best-effort: for S seconds, back-to-back kernels of B blocks of 256
 *       threads (default 528: 4 per SM of an H100/H200), each thread N
 *       iterations of an integer hash, at most two in flight.  Prints the
 *       kernels completed per second: the same work per kernel whatever
 *       share of the GPU the tenant is given (under MPS with a thread
 *       percentage the device reports fewer SMs; the grid stays).
 *
 * The latency-critical kernel spins on %globaltimer: a fixed service time.
 * The best-effort kernel computes: it makes progress only while its context
 * holds the GPU, so its throughput shows the share of the GPU a policy
 * leaves it (a kernel spinning on a wall clock would finish on time even
 * while switched out).  Each block writes a value the host checks, so a
 * kernel that did not run is noticed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "example_rt.cuh"

__device__ static unsigned long long global_ns(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* Every block spins ns nanoseconds, then writes its index + tag. */
__global__ void spin_kernel(unsigned *out, unsigned long long ns, unsigned tag)
{
	unsigned long long t0 = global_ns();
	while (global_ns() - t0 < ns)
		;
	if (threadIdx.x == 0)
		out[blockIdx.x] = blockIdx.x + tag;
}

/* Every thread hashes `work` times and stores the result in sink (so the
 * loop stays); thread 0 of each block writes its index + tag. */
__global__ void work_kernel(unsigned *out, unsigned *sink, unsigned work, unsigned tag)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x, x = i;
	for (unsigned k = 0; k < work; k++)
		x = (x ^ (x >> 13)) * 0x5bd1e995u + k;
	sink[i] = x;
	if (threadIdx.x == 0)
		out[blockIdx.x] = blockIdx.x + tag;
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double percentile(const double *sorted, long n, double p)
{
	long i = (long)ceil(p / 100.0 * n) - 1;
	return sorted[i < 0 ? 0 : i];
}

/* Did every block of the launch tagged `tag` write its value? */
static void check_blocks(const unsigned *dout, unsigned blocks, unsigned tag)
{
	unsigned *h = (unsigned *)malloc(blocks * sizeof(unsigned));
	CHECK(cudaMemcpy(h, dout, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
	for (unsigned b = 0; b < blocks; b++)
		if (h[b] != b + tag) {
			fprintf(stderr, "tenant: block %u of launch %u did not run\n", b, tag);
			exit(1);
		}
	free(h);
}

static int run_lc(long requests, long kernel_us, long gap_us, const char *out_path)
{
	enum { LC_BLOCKS = 8 };
	double *lat = (double *)malloc(requests * sizeof(double));
	unsigned *dout;
	cudaStream_t s;

	CHECK(cudaMalloc(&dout, LC_BLOCKS * sizeof(unsigned)));
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	/* warm-up: module load and first-launch costs stay out of the numbers */
	spin_kernel<<<LC_BLOCKS, 128, 0, s>>>(dout, 1000, 0);
	CHECK(cudaStreamSynchronize(s));
	for (long r = 0; r < requests; r++) {
		double t0 = now_us();
		spin_kernel<<<LC_BLOCKS, 128, 0, s>>>(dout, kernel_us * 1000ull, (unsigned)r);
		CHECK(cudaGetLastError());
		CHECK(cudaStreamSynchronize(s));
		lat[r] = now_us() - t0;
		if (gap_us)
			usleep((useconds_t)gap_us);
	}
	check_blocks(dout, LC_BLOCKS, (unsigned)(requests - 1));
	if (out_path) {
		FILE *f = fopen(out_path, "w");
		if (!f)
			return perror(out_path), 1;
		for (long r = 0; r < requests; r++)
			fprintf(f, "%.1f\n", lat[r]);
		fclose(f);
	}
	double sum = 0;
	for (long r = 0; r < requests; r++)
		sum += lat[r];
	qsort(lat, requests, sizeof(double), cmp_double);
	printf("lc: pid=%d requests=%ld kernel_us=%ld gap_us=%ld p50_us=%.1f p99_us=%.1f "
	       "mean_us=%.1f max_us=%.1f\n",
	       (int)getpid(), requests, kernel_us, gap_us, percentile(lat, requests, 50),
	       percentile(lat, requests, 99), sum / requests, lat[requests - 1]);
	free(lat);
	CHECK(cudaFree(dout));
	return 0;
}

static int run_be(double seconds, long work, long grid)
{
	unsigned *dout, *sink;
	cudaStream_t s;
	cudaEvent_t done[2];

	unsigned blocks = (unsigned)grid;
	CHECK(cudaMalloc(&dout, blocks * sizeof(unsigned)));
	CHECK(cudaMalloc(&sink, blocks * 256 * sizeof(unsigned)));
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int i = 0; i < 2; i++)
		CHECK(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
	double t0 = now_us(), end = t0 + seconds * 1e6;
	long launched = 0;
	/* two kernels in flight: the GPU never idles waiting for this host */
	while (now_us() < end) {
		if (launched >= 2)
			CHECK(cudaEventSynchronize(done[launched % 2]));
		work_kernel<<<blocks, 256, 0, s>>>(dout, sink, (unsigned)work, (unsigned)launched);
		CHECK(cudaGetLastError());
		CHECK(cudaEventRecord(done[launched % 2], s));
		launched++;
	}
	CHECK(cudaStreamSynchronize(s));
	double elapsed = (now_us() - t0) / 1e6;
	check_blocks(dout, blocks, (unsigned)(launched - 1));
	printf("be: pid=%d kernels=%ld work=%ld blocks=%u seconds=%.3f per_s=%.2f\n",
	       (int)getpid(), launched, work, blocks, elapsed, launched / elapsed);
	CHECK(cudaFree(dout));
	return 0;
}

/* The value of option `name` (1..max), or def. */
static long arg_long(int argc, char **argv, const char *name, long def, long max)
{
	for (int i = 2; i + 1 < argc; i++)
		if (!strcmp(argv[i], name)) {
			char *end;
			long v = strtol(argv[i + 1], &end, 0);
			if (*end || v < 1 || v > max) {
				fprintf(stderr, "tenant: bad value '%s' for %s (1..%ld)\n",
					argv[i + 1], name, max);
				exit(2);
			}
			return v;
		}
	return def;
}

int main(int argc, char **argv)
{
	const char *out = NULL;

	for (int i = 2; i + 1 < argc; i++)
		if (!strcmp(argv[i], "-out"))
			out = argv[i + 1];
	if (argc >= 2 && !strcmp(argv[1], "lc"))
		return run_lc(arg_long(argc, argv, "-requests", 2000, 10000000),
			      arg_long(argc, argv, "-kernel-us", 50, 1000000),
			      arg_long(argc, argv, "-gap-us", 1000, 10000000), out);
	if (argc >= 2 && !strcmp(argv[1], "be"))
		return run_be((double)arg_long(argc, argv, "-seconds", 5, 3600),
			      arg_long(argc, argv, "-work", 400000, 1000000000),
			      arg_long(argc, argv, "-blocks", 528, 1 << 20));
	fprintf(stderr,
		"usage: %s lc [-requests N] [-kernel-us U] [-gap-us G] [-out FILE]\n"
		"       %s be [-seconds S] [-work N] [-blocks B]\n",
		argv[0], argv[0]);
	return 2;
}
