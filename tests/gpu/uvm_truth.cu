/* SPDX-License-Identifier: MIT */
/*
 * uvm_truth - what the driver does with unified memory, measured three
 * ways in one process, no agent: CUPTI's unified-memory records (as
 * gpuext configures them), the nvidia-uvm tools event queue read by
 * src/cuda/uvm_tools.c, and the driver's aggregate counters (never
 * dropped).  The workload is examples/cuda/managed's: -mib MiB of managed
 * memory written on the host, a kernel adds 1 to every int (burst: one
 * launch over all of it; blocks: one launch and a synchronize per 2 MiB),
 * the host reads it all back.
 *
 *   uvm_truth [-mib N] [-pattern burst|blocks] [-cupti 0|1] [-uvmt 0|1]
 *             [-flush_ms F] [-cupti_at init|ctx] [-queue ENTRIES] [-dump N]
 *
 * Prints, per source, bytes and events per direction and migration cause,
 * the MiB of the allocation each direction covered (4 KiB pages), faults,
 * drops; and the first -dump records of each kind raw.  Built by
 * make (build/gpu/uvm_truth: nvcc, -lcupti -lcuda), run by tests/gpu/uvm_truth.sh;
 * a GPU diagnostic, not a test.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern "C" {
#include "cuda/uvm_tools.h"
}

#define CK(x)                                                                      \
	do {                                                                       \
		cudaError_t r_ = (x);                                              \
		if (r_ != cudaSuccess) {                                           \
			fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(r_));   \
			exit(1);                                                   \
		}                                                                  \
	} while (0)
#define CP(x)                                                                      \
	do {                                                                       \
		CUptiResult r_ = (x);                                              \
		if (r_ != CUPTI_SUCCESS) {                                         \
			const char *s_ = "?";                                      \
			cuptiGetResultString(r_, &s_);                             \
			fprintf(stderr, "%s: %s\n", #x, s_);                       \
		}                                                                  \
	} while (0)

__global__ void add_one(int *p, long n)
{
	for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
	     i += (long)gridDim.x * blockDim.x)
		p[i] += 1;
}

static uint64_t base_addr, alloc_bytes;

/* One source's tally. */
struct tally {
	const char *name;
	uint64_t events[16], bytes[16], cause_bytes[16][8], count_sum[16];
	uint8_t *cov[16]; /* per 4 KiB page of the allocation, per kind */
	uint64_t outside[16];
	int dumped[16];
	pthread_mutex_t lock;
};
static struct tally tc = {"cupti"}, tu = {"uvmtools"};
static int dump_n = 5;

static void tally_init(struct tally *t)
{
	pthread_mutex_init(&t->lock, NULL);
	for (int k = 0; k < 16; k++)
		t->cov[k] = (uint8_t *)calloc(alloc_bytes >> 12, 1);
}

static void tally_add(struct tally *t, unsigned kind, uint64_t addr, uint64_t bytes,
		      uint64_t count, unsigned flags, uint64_t raw_value)
{
	kind &= 15;
	pthread_mutex_lock(&t->lock);
	t->events[kind]++;
	t->bytes[kind] += bytes;
	t->count_sum[kind] += count;
	t->cause_bytes[kind][flags & 7] += bytes;
	uint64_t span = bytes ? bytes : 1;
	if (addr >= base_addr && addr < base_addr + alloc_bytes) {
		for (uint64_t a = addr; a < addr + span && a < base_addr + alloc_bytes; a += 4096)
			t->cov[kind][(a - base_addr) >> 12] = 1;
	} else {
		t->outside[kind]++;
	}
	if (t->dumped[kind] < dump_n) {
		t->dumped[kind]++;
		printf("RAW %s kind=%u addr=+0x%llx bytes=%llu count=%llu flags=%u value=%llu\n",
		       t->name, kind, (unsigned long long)(addr - base_addr),
		       (unsigned long long)bytes, (unsigned long long)count, flags,
		       (unsigned long long)raw_value);
	}
	pthread_mutex_unlock(&t->lock);
}

static void tally_print(struct tally *t)
{
	static const char *names[16] = {"?", "htod", "dtoh", "cpu_fault", "gpu_fault",
					"thrashing", "throttling", "remote_map", "dtod"};
	for (int k = 0; k < 16; k++) {
		if (!t->events[k])
			continue;
		uint64_t pages = 0;
		for (uint64_t i = 0; i < alloc_bytes >> 12; i++)
			pages += t->cov[k][i];
		printf("SUM %s %s events=%llu bytes=%llu (%.1f MiB) count_sum=%llu pages=%llu "
		       "(%.1f MiB) outside=%llu by_cause_MiB=",
		       t->name, names[k] ? names[k] : "other", (unsigned long long)t->events[k],
		       (unsigned long long)t->bytes[k], t->bytes[k] / 1048576.0,
		       (unsigned long long)t->count_sum[k], (unsigned long long)pages,
		       pages / 256.0, (unsigned long long)t->outside[k]);
		for (int c = 0; c < 8; c++)
			if (t->cause_bytes[k][c])
				printf("%d:%.1f,", c, t->cause_bytes[k][c] / 1048576.0);
		printf("\n");
	}
}

/* --- CUPTI --- */
static void CUPTIAPI buf_req(uint8_t **b, size_t *sz, size_t *max)
{
	*sz = 8 << 20;
	*b = (uint8_t *)aligned_alloc(8, *sz);
	*max = 0;
}

static uint64_t cupti_records, cupti_dropped;
static void CUPTIAPI buf_done(CUcontext ctx, uint32_t stream, uint8_t *b, size_t sz, size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t d = 0;
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &d) == CUPTI_SUCCESS)
		cupti_dropped += d;
	while (valid && cuptiActivityGetNextRecord(b, valid, &rec) == CUPTI_SUCCESS) {
		if (rec->kind != CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER)
			continue;
		const CUpti_ActivityUnifiedMemoryCounter3 *u =
			(const CUpti_ActivityUnifiedMemoryCounter3 *)rec;
		cupti_records++;
		int is_bytes = u->counterKind == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD ||
			       u->counterKind == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH ||
			       u->counterKind == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD ||
			       u->counterKind == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP;
		int is_gpuf = u->counterKind == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT;
		tally_add(&tc, u->counterKind, u->address, is_bytes ? u->value : 0,
			  is_gpuf ? u->value : 1, u->flags, u->value);
	}
	free(b);
}

static void cupti_setup(void)
{
	static const CUpti_ActivityUnifiedMemoryCounterKind ck[] = {
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD,
	};
	CUpti_ActivityUnifiedMemoryCounterConfig cfg[8];
	for (int i = 0; i < 8; i++) {
		memset(&cfg[i], 0, sizeof(cfg[i]));
		cfg[i].scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE;
		cfg[i].kind = ck[i];
		cfg[i].deviceId = 0;
		cfg[i].enable = 1;
	}
	CP(cuptiActivityRegisterCallbacks(buf_req, buf_done));
	CP(cuptiActivityConfigureUnifiedMemoryCounter(cfg, 8));
	CP(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER));
}

static volatile int stop_flusher;
static int flush_ms;
static void *flusher(void *arg)
{
	(void)arg;
	while (!stop_flusher) {
		usleep(flush_ms * 1000);
		cuptiActivityFlushAll(0);
	}
	return NULL;
}

static void uvmt_sink(void *arg, const struct gpuext_cupti_uvm *r)
{
	(void)arg;
	tally_add(&tu, r->kind, r->address, r->bytes, r->count, r->flags, r->bytes);
}

/* How many fds of this process are open on /dev/nvidia-uvm. */
static int count_uvm_fds(void)
{
	int n = 0;
	for (int fd = 0; fd < 1024; fd++) {
		char path[64], link[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		ssize_t len = readlink(path, link, sizeof(link) - 1);
		n += len > 0 && (link[len] = 0, !strcmp(link, "/dev/nvidia-uvm"));
	}
	return n;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	long mib = 256;
	int use_cupti = 1, use_uvmt = 1, blocks = 0, cupti_at_init = 1, uvmt_at_init = 0;
	unsigned queue = 0;
	pthread_t ft;

	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];
		if (!strcmp(k, "-mib")) mib = atol(v);
		else if (!strcmp(k, "-pattern")) blocks = !strcmp(v, "blocks");
		else if (!strcmp(k, "-cupti")) use_cupti = atoi(v);
		else if (!strcmp(k, "-uvmt")) use_uvmt = atoi(v);
		else if (!strcmp(k, "-flush_ms")) flush_ms = atoi(v);
		else if (!strcmp(k, "-cupti_at")) cupti_at_init = !strcmp(v, "init");
		else if (!strcmp(k, "-uvmt_at")) uvmt_at_init = !strcmp(v, "init");
		else if (!strcmp(k, "-queue")) queue = (unsigned)strtoul(v, NULL, 0);
		else if (!strcmp(k, "-dump")) dump_n = atoi(v);
		else { fprintf(stderr, "unknown option %s\n", k); return 2; }
	}
	alloc_bytes = (uint64_t)mib << 20;
	printf("CONFIG mib=%ld pattern=%s cupti=%d cupti_at=%s flush_ms=%d uvmt=%d queue=%u\n", mib,
	       blocks ? "blocks" : "burst", use_cupti, cupti_at_init ? "init" : "ctx", flush_ms,
	       use_uvmt, queue);
	if (cuInit(0) != CUDA_SUCCESS)
		return fprintf(stderr, "cuInit failed\n"), 1;
	printf("FDS after cuInit: %d open on /dev/nvidia-uvm\n", count_uvm_fds());
	struct err e;
	struct uvmt_opts uo = {queue, 2, -1};
	if (use_uvmt && uvmt_at_init && uvmt_start(&uo, uvmt_sink, NULL, &e)) {
		printf("UVMT start at cuInit failed: %s (trying again after the context)\n", e.msg);
		uvmt_at_init = 0;
	} else if (use_uvmt && uvmt_at_init) {
		printf("UVMT started at cuInit\n");
	}
	if (use_cupti && cupti_at_init)
		cupti_setup();
	CK(cudaFree(0));
	printf("FDS after the context: %d open on /dev/nvidia-uvm\n", count_uvm_fds());
	if (use_cupti && !cupti_at_init)
		cupti_setup();
	if (use_cupti && flush_ms)
		pthread_create(&ft, NULL, flusher, NULL);
	if (use_uvmt && !uvmt_at_init && uvmt_start(&uo, uvmt_sink, NULL, &e)) {
		printf("UVMT start failed: %s\n", e.msg);
		use_uvmt = 0;
	}
	int *p;
	long n = (long)(alloc_bytes / sizeof(int));
	CK(cudaMallocManaged(&p, alloc_bytes));
	base_addr = (uint64_t)(uintptr_t)p;
	tally_init(&tc);
	tally_init(&tu);
	double t0 = now_ms();
	for (long i = 0; i < n; i++)
		p[i] = (int)(i * 7);
	double t1 = now_ms();
	if (blocks) {
		long per = (2l << 20) / sizeof(int);
		for (long off = 0; off < n; off += per) {
			add_one<<<64, 256>>>(p + off, per < n - off ? per : n - off);
			CK(cudaDeviceSynchronize());
		}
	} else {
		add_one<<<1024, 256>>>(p, n);
		CK(cudaDeviceSynchronize());
	}
	double t2 = now_ms();
	long bad = 0;
	for (long i = 0; i < n; i++)
		bad += p[i] != (int)(i * 7) + 1;
	double t3 = now_ms();
	printf("TIMES host_write_ms=%.1f kernel_ms=%.1f host_read_ms=%.1f bad=%ld\n", t1 - t0,
	       t2 - t1, t3 - t2, bad);
	if (use_uvmt)
		uvmt_flush();
	if (use_cupti) {
		stop_flusher = 1;
		if (flush_ms)
			pthread_join(ft, NULL);
		CP(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
		size_t d = 0;
		if (cuptiActivityGetNumDroppedRecords(NULL, 0, &d) == CUPTI_SUCCESS)
			cupti_dropped += d;
		printf("CUPTI records=%llu dropped=%llu\n", (unsigned long long)cupti_records,
		       (unsigned long long)cupti_dropped);
		tally_print(&tc);
	}
	if (use_uvmt) {
		struct uvmt_stats st;
		uvmt_stop();
		uvmt_stats_get(&st);
		printf("UVMT queue=%u records=%llu dropped_total=%llu", st.queue_entries,
		       (unsigned long long)st.records, (unsigned long long)st.dropped_total);
		for (int i = 0; i < UVMT_EV_TYPES; i++)
			if (st.by_type[i] || st.dropped[i])
				printf(" type%d=%llu/dropped%llu", i, (unsigned long long)st.by_type[i],
				       (unsigned long long)st.dropped[i]);
		printf("\n");
		if (st.counters_ok)
			printf("COUNTERS htod=%llu (%.1f MiB) dtoh=%llu (%.1f MiB) cpu_faults=%llu "
			       "gpu_faults=%llu prefetch_htod=%llu prefetch_dtoh=%llu\n",
			       (unsigned long long)st.counters[UVMT_CNT_HTOD_BYTES],
			       st.counters[UVMT_CNT_HTOD_BYTES] / 1048576.0,
			       (unsigned long long)st.counters[UVMT_CNT_DTOH_BYTES],
			       st.counters[UVMT_CNT_DTOH_BYTES] / 1048576.0,
			       (unsigned long long)st.counters[UVMT_CNT_CPU_FAULTS],
			       (unsigned long long)st.counters[UVMT_CNT_GPU_FAULTS],
			       (unsigned long long)st.counters[UVMT_CNT_PREFETCH_HTOD_BYTES],
			       (unsigned long long)st.counters[UVMT_CNT_PREFETCH_DTOH_BYTES]);
		else
			printf("COUNTERS unavailable\n");
		tally_print(&tu);
	}
	CK(cudaFree(p));
	return bad != 0;
}
