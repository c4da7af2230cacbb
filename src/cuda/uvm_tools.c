/* SPDX-License-Identifier: MIT */
/*
 * uvm_tools.c - the nvidia-uvm tools interface as an event source
 * (uvm_tools.h): two trackers on /dev/nvidia-uvm-tools bound to this
 * process's UVM address space (an event queue and the aggregate
 * counters), a drain thread, and the decoding of the driver's V2 entries.
 *
 * The driver writes each event into the queue under its lock and, when
 * the queue is full, drops it and counts it in the control page
 * (dropped[type]); it wakes poll() when the queue holds notification
 * threshold entries.  The drain thread polls with a timeout, so it also
 * drains below the threshold.  Migration events are written only when
 * the copy has completed (the driver's deferred work): UVM_TOOLS_FLUSH_EVENTS
 * pushes them out (uvmt_flush, at stop).
 *
 * Invariants: one tracker pair per process; the sink runs on the drain
 * thread or the thread calling uvmt_flush/uvmt_stop, under drain_lock,
 * never concurrently with itself.
 */
#include "uvm_tools.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* nvidia-uvm ioctl numbers on Linux (the raw numbers, no _IOC encoding). */
enum {
	UVMT_IOC_INIT_EVENT_TRACKER = 56,
	UVMT_IOC_SET_NOTIFICATION_THRESHOLD = 57,
	UVMT_IOC_EVENT_QUEUE_ENABLE_EVENTS = 58,
	UVMT_IOC_ENABLE_COUNTERS = 60,
	UVMT_IOC_FLUSH_EVENTS = 67,
	UVMT_IOC_INIT_EVENT_TRACKER_V2 = 76,
};

/* The driver's parameter blocks (its NvU64 fields are 8-byte aligned). */
struct uvmt_init_params {
	uint64_t queue_buffer;
	uint64_t queue_buffer_size; /* entries; 0: a counter tracker */
	uint64_t control_buffer;
	uint8_t processor[16];      /* counters of one processor (unused: all) */
	uint32_t all_processors;
	uint32_t uvm_fd;
	uint32_t rm_status;
};
struct uvmt_flags_params {
	uint64_t flags;
	uint32_t rm_status;
};
struct uvmt_threshold_params {
	uint32_t threshold;
	uint32_t rm_status;
};
struct uvmt_status_params {
	uint32_t rm_status;
};
_Static_assert(sizeof(struct uvmt_init_params) == 56, "UVM_TOOLS_INIT_EVENT_TRACKER_PARAMS");
_Static_assert(sizeof(struct uvmt_flags_params) == 16, "UVM_TOOLS_*_EVENTS/COUNTERS_PARAMS");
_Static_assert(sizeof(struct uvmt_control) == 528, "UvmToolsEventControlData");

/* Offsets inside a V2 entry, by event type (the driver's structs). */
enum {
	MIG_CAUSE = 1, MIG_SRC = 4, MIG_DST = 6, MIG_ADDR = 16, MIG_BYTES = 24,
	MIG_BEGIN = 32, MIG_END = 40,
	GF_GPU = 2, GF_ADDR = 8, GF_TS = 16, GF_ACCESS = 37,
	CF_ACCESS = 1, CF_ADDR = 8, CF_TS = 16, CF_PID = 24,
	MR_CAUSE = 1, MR_SRC = 4, MR_DST = 6, MR_ADDR = 8, MR_SIZE = 16, MR_TS = 24,
};

static uint64_t rd64(const uint8_t *p, size_t off)
{
	uint64_t v;
	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint32_t rd32(const uint8_t *p, size_t off)
{
	uint32_t v;
	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint16_t rd16(const uint8_t *p, size_t off)
{
	uint16_t v;
	memcpy(&v, p + off, sizeof(v));
	return v;
}

/* UVM numbers processors CPU = 0, GPUs from 1. */
static uint32_t proc_id(uint16_t index)
{
	return index ? (uint32_t)index - 1 : GPUEXT_CUPTI_UVM_CPU;
}

static uint64_t shift(uint64_t t, int64_t off)
{
	return t ? t + (uint64_t)off : 0;
}

int uvmt_decode(const void *entry, int64_t off, struct gpuext_cupti_uvm *r)
{
	const uint8_t *p = entry;

	memset(r, 0, sizeof(*r));
	r->count = 1;
	switch (p[0]) {
	case UVMT_EV_MIGRATION:
		r->src = proc_id(rd16(p, MIG_SRC));
		r->dst = proc_id(rd16(p, MIG_DST));
		if (r->src == GPUEXT_CUPTI_UVM_CPU && r->dst == GPUEXT_CUPTI_UVM_CPU)
			return 0; /* between NUMA nodes of the host */
		r->kind = r->src == GPUEXT_CUPTI_UVM_CPU   ? GPUEXT_CUPTI_UVM_HTOD
			  : r->dst == GPUEXT_CUPTI_UVM_CPU ? GPUEXT_CUPTI_UVM_DTOH
							   : GPUEXT_CUPTI_UVM_DTOD;
		r->address = rd64(p, MIG_ADDR);
		r->bytes = rd64(p, MIG_BYTES);
		r->flags = p[MIG_CAUSE];
		r->start = shift(rd64(p, MIG_BEGIN), off);
		r->end = rd64(p, MIG_END) ? shift(rd64(p, MIG_END), off) : r->start;
		return 1;
	case UVMT_EV_GPU_FAULT:
		r->kind = GPUEXT_CUPTI_UVM_GPU_FAULT;
		r->dst = proc_id(rd16(p, GF_GPU));
		r->src = GPUEXT_CUPTI_UVM_CPU;
		r->address = rd64(p, GF_ADDR);
		r->start = r->end = shift(rd64(p, GF_TS), off);
		r->flags = p[GF_ACCESS];
		return 1;
	case UVMT_EV_CPU_FAULT:
		r->kind = GPUEXT_CUPTI_UVM_CPU_FAULT;
		r->src = r->dst = GPUEXT_CUPTI_UVM_CPU;
		r->address = rd64(p, CF_ADDR);
		r->start = r->end = shift(rd64(p, CF_TS), off);
		r->flags = p[CF_ACCESS];
		r->pid = rd32(p, CF_PID);
		return 1;
	case UVMT_EV_MAP_REMOTE:
		r->kind = GPUEXT_CUPTI_UVM_REMOTE_MAP;
		r->src = proc_id(rd16(p, MR_SRC));
		r->dst = proc_id(rd16(p, MR_DST));
		r->address = rd64(p, MR_ADDR);
		r->bytes = rd64(p, MR_SIZE);
		r->start = r->end = shift(rd64(p, MR_TS), off);
		r->flags = p[MR_CAUSE];
		return 1;
	default:
		return 0;
	}
}

size_t uvmt_ring_drain(const uint8_t *queue, struct uvmt_control *ctl, uint32_t count,
		       void (*fn)(void *arg, const uint8_t *entry), void *arg)
{
	uint32_t mask = count - 1;
	uint32_t get = __atomic_load_n(&ctl->get_behind, __ATOMIC_RELAXED) & mask;
	uint32_t put = __atomic_load_n(&ctl->put_behind, __ATOMIC_ACQUIRE) & mask;
	size_t n = 0;

	/* get_ahead marks the slots being read, get_behind gives them back
	 * (the driver tests fullness against get_behind) */
	__atomic_store_n(&ctl->get_ahead, put, __ATOMIC_RELAXED);
	for (; get != put; get = (get + 1) & mask, n++)
		fn(arg, queue + (size_t)get * UVMT_ENTRY_SIZE);
	__atomic_store_n(&ctl->get_behind, put, __ATOMIC_RELEASE);
	return n;
}

/* --- the live trackers --- */

static struct {
	int queue_fd, counter_fd;
	int uvm_fd; /* the CUDA driver's; flushes go through it */
	uint8_t *queue;
	size_t queue_bytes;
	uint32_t count;
	struct uvmt_control *ctl;
	uint64_t *counters; /* a page; the driver adds into it */
	uint64_t counters_base[UVMT_CNT_TOTAL];
	int counters_ok; /* the counter tracker took */
	int64_t raw_off;
	unsigned poll_ms;
	uvmt_sink_fn sink;
	void *arg;
	uint64_t records, by_type[UVMT_EV_TYPES];
	pthread_t thread;
	int thread_started;
	_Atomic int stop;
} t = {.queue_fd = -1, .counter_fd = -1};

static _Atomic int running;
static pid_t owner_pid;
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;

int uvmt_running(void)
{
	return atomic_load(&running) && getpid() == owner_pid;
}

void uvmt_gather_add(struct uvmt_gather *g, const struct gpuext_cupti_uvm *r, uvmt_sink_fn emit,
		     void *arg)
{
	if (r->kind != GPUEXT_CUPTI_UVM_GPU_FAULT) {
		emit(arg, r); /* may come between a fault's entries: passes */
		return;
	}
	if (g->have && g->pend.start == r->start && g->pend.address == r->address &&
	    g->pend.dst == r->dst) {
		g->pend.count++;
		return;
	}
	uvmt_gather_flush(g, emit, arg);
	g->pend = *r;
	g->have = 1;
}

void uvmt_gather_flush(struct uvmt_gather *g, uvmt_sink_fn emit, void *arg)
{
	if (g->have)
		emit(arg, &g->pend);
	g->have = 0;
}

static struct uvmt_gather gather;

static void emit(void *arg, const struct gpuext_cupti_uvm *r)
{
	(void)arg;
	if (t.sink) {
		t.records++;
		t.sink(t.arg, r);
	}
}

static void deliver(void *arg, const uint8_t *entry)
{
	struct gpuext_cupti_uvm r;

	(void)arg;
	t.by_type[entry[0] % UVMT_EV_TYPES]++;
	if (uvmt_decode(entry, t.raw_off, &r))
		uvmt_gather_add(&gather, &r, emit, NULL);
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Read what the queue holds; `quiet`: also hand over the fault being
 * gathered once the queue was found empty and the fault is older than
 * UVMT_GATHER_QUIET_NS (the driver writes a fault's entries within
 * microseconds; a drain between two of them must not split it). */
enum { UVMT_GATHER_QUIET_NS = 20 * 1000 * 1000 };
static void drain(int quiet)
{
	pthread_mutex_lock(&drain_lock);
	size_t n = t.ctl ? uvmt_ring_drain(t.queue, t.ctl, t.count, deliver, NULL) : 0;
	if (quiet && !n && gather.have && monotonic_ns() - gather.pend.start > UVMT_GATHER_QUIET_NS)
		uvmt_gather_flush(&gather, emit, NULL);
	pthread_mutex_unlock(&drain_lock);
}

/* Every entry is read and no more can come: hand over the last fault. */
static void drain_final(void)
{
	drain(0);
	pthread_mutex_lock(&drain_lock);
	uvmt_gather_flush(&gather, emit, NULL);
	pthread_mutex_unlock(&drain_lock);
}

static void *drain_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&t.stop)) {
		struct pollfd pfd = {.fd = t.queue_fd, .events = POLLIN};
		poll(&pfd, 1, (int)t.poll_ms);
		drain(1);
	}
	return NULL;
}

static int ioctl_status(int fd, unsigned long nr, void *params, uint32_t *status)
{
	if (ioctl(fd, nr, params) < 0)
		return -errno;
	return *status ? -EIO : 0;
}

static int64_t raw_to_monotonic(void)
{
	struct timespec m, r;
	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_MONOTONIC_RAW, &r);
	return ((int64_t)m.tv_sec - r.tv_sec) * 1000000000 + (m.tv_nsec - r.tv_nsec);
}

/* Bind a fresh tools fd to uvm_fd as a queue (entries > 0) or counters. */
static int tracker_open(int uvm_fd, uint64_t entries, void *queue, void *control, int *out)
{
	int fd = open("/dev/nvidia-uvm-tools", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct uvmt_init_params p = {
		.queue_buffer = (uintptr_t)queue, .queue_buffer_size = entries,
		.control_buffer = (uintptr_t)control, .all_processors = 1,
		.uvm_fd = (uint32_t)uvm_fd,
	};
	int ret = ioctl_status(fd, entries ? UVMT_IOC_INIT_EVENT_TRACKER_V2
					   : UVMT_IOC_INIT_EVENT_TRACKER, &p, &p.rm_status);
	if (ret) {
		close(fd);
		return ret;
	}
	*out = fd;
	return 0;
}

/* Is fd open on the driver's /dev/nvidia-uvm (at exit the CUDA runtime may
 * have closed it, and the number been reused)? */
static int is_uvm_fd(int fd)
{
	char path[64], link[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t len = readlink(path, link, sizeof(link) - 1);
	return len > 0 && (link[len] = 0, !strcmp(link, "/dev/nvidia-uvm"));
}

/* The fds of this process open on /dev/nvidia-uvm, in directory order. */
static int uvm_fds(int *fds, int max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max)
		if (de->d_name[0] != '.' && is_uvm_fd(atoi(de->d_name)))
			fds[n++] = atoi(de->d_name);
	closedir(d);
	return n;
}

static void release(void)
{
	if (t.queue_fd >= 0)
		close(t.queue_fd);
	if (t.counter_fd >= 0)
		close(t.counter_fd);
	t.queue_fd = t.counter_fd = -1;
	if (t.queue)
		munmap(t.queue, t.queue_bytes);
	if (t.ctl)
		munmap(t.ctl, sizeof(*t.ctl));
	if (t.counters)
		munmap(t.counters, 4096);
	t.queue = NULL;
	t.ctl = NULL;
	t.counters = NULL;
}

static void *page_alloc(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Event types asked for: everything decoded plus the fault-buffer signals
 * (counted in by_type, for the record of what the driver did). */
static const uint64_t wanted_events =
	1ull << UVMT_EV_CPU_FAULT | 1ull << UVMT_EV_MIGRATION | 1ull << UVMT_EV_GPU_FAULT |
	1ull << UVMT_EV_GPU_FAULT_REPLAY | 1ull << UVMT_EV_FAULT_BUFFER_OVERFLOW |
	1ull << UVMT_EV_THRASHING | 1ull << UVMT_EV_MAP_REMOTE | 1ull << UVMT_EV_EVICTION;

static int attach(int uvm_fd, struct err *e)
{
	int ret = tracker_open(uvm_fd, t.count, t.queue, t.ctl, &t.queue_fd);
	if (ret)
		return err_set(e, -ret, "UVM tools: binding a %u-entry event queue to fd %d "
			       "(/dev/nvidia-uvm) failed: %s", t.count, uvm_fd,
			       ret == -EIO ? "the driver refused it" : strerror(-ret));
	struct uvmt_flags_params ev = {.flags = wanted_events};
	if ((ret = ioctl_status(t.queue_fd, UVMT_IOC_EVENT_QUEUE_ENABLE_EVENTS, &ev,
				&ev.rm_status)))
		return err_set(e, -ret, "UVM tools: enabling the events failed (status 0x%x)",
			       ev.rm_status);
	/* wake the drain thread at an eighth full, well before drops */
	struct uvmt_threshold_params th = {.threshold = t.count / 8};
	ioctl_status(t.queue_fd, UVMT_IOC_SET_NOTIFICATION_THRESHOLD, &th, &th.rm_status);
	/* the aggregate counters: optional (a cross-check, not the events) */
	struct uvmt_flags_params cnt = {.flags = (1ull << UVMT_CNT_TOTAL) - 1};
	if (!tracker_open(uvm_fd, 0, NULL, t.counters, &t.counter_fd) &&
	    ioctl_status(t.counter_fd, UVMT_IOC_ENABLE_COUNTERS, &cnt, &cnt.rm_status)) {
		close(t.counter_fd);
		t.counter_fd = -1;
	}
	t.counters_ok = t.counter_fd >= 0;
	if (t.counters_ok)
		memcpy(t.counters_base, t.counters, sizeof(t.counters_base));
	return 0;
}

int uvmt_start(const struct uvmt_opts *o, uvmt_sink_fn sink, void *arg, struct err *e)
{
	int fds[8], nfds, ret = 0;

	if (uvmt_running())
		return err_set(e, EBUSY, "UVM tools: already attached");
	t.count = o->queue_entries ? o->queue_entries : 1u << 18;
	if (t.count & (t.count - 1) || t.count < 2)
		return err_set(e, EINVAL, "UVM tools: queue of %u entries: not a power of 2",
			       t.count);
	if (access("/dev/nvidia-uvm-tools", R_OK | W_OK))
		return err_set(e, errno, "UVM tools: /dev/nvidia-uvm-tools: %s", strerror(errno));
	t.poll_ms = o->poll_ms ? o->poll_ms : 5;
	t.queue_bytes = (size_t)t.count * UVMT_ENTRY_SIZE;
	t.queue = page_alloc(t.queue_bytes);
	t.ctl = page_alloc(sizeof(*t.ctl));
	t.counters = page_alloc(4096);
	if (!t.queue || !t.ctl || !t.counters) {
		release();
		return err_set(e, ENOMEM, "UVM tools: no memory for a %zu-byte queue",
			       t.queue_bytes);
	}
	if (o->uvm_fd >= 0) {
		fds[0] = o->uvm_fd;
		nfds = 1;
	} else if (!(nfds = uvm_fds(fds, 8))) {
		release();
		return err_set(e, ENODEV, "UVM tools: this process has no /dev/nvidia-uvm open "
			       "(the CUDA driver is not initialised yet)");
	}
	/* The driver opens /dev/nvidia-uvm more than once (the address space,
	 * a helper for its mm): the first fd that takes a tracker is it. */
	for (int i = 0; i < nfds; i++) {
		if (!(ret = attach(fds[i], e))) {
			t.uvm_fd = fds[i];
			break;
		}
		release();
		t.queue = page_alloc(t.queue_bytes);
		t.ctl = page_alloc(sizeof(*t.ctl));
		t.counters = page_alloc(4096);
		if (!t.queue || !t.ctl || !t.counters) {
			ret = err_set(e, ENOMEM, "UVM tools: no memory");
			break;
		}
	}
	if (ret) {
		release();
		return ret;
	}
	t.raw_off = raw_to_monotonic();
	t.sink = sink;
	t.arg = arg;
	t.records = 0;
	gather.have = 0;
	memset(t.by_type, 0, sizeof(t.by_type));
	atomic_store(&t.stop, 0);
	t.thread_started = !pthread_create(&t.thread, NULL, drain_main, NULL);
	owner_pid = getpid();
	atomic_store(&running, 1);
	return 0;
}

void uvmt_flush(void)
{
	if (!uvmt_running())
		return;
	/* the flush is an ioctl of the address space's fd, not the tracker's */
	struct uvmt_status_params p = {0};
	if (is_uvm_fd(t.uvm_fd))
		ioctl_status(t.uvm_fd, UVMT_IOC_FLUSH_EVENTS, &p, &p.rm_status);
	drain_final();
}

void uvmt_stop(void)
{
	if (!uvmt_running())
		return;
	uvmt_flush();
	atomic_store(&running, 0);
	atomic_store(&t.stop, 1);
	if (t.thread_started)
		pthread_join(t.thread, NULL);
	t.thread_started = 0;
	drain_final();
	/* the pages stay mapped for uvmt_stats_get; the trackers close */
	if (t.queue_fd >= 0)
		close(t.queue_fd);
	if (t.counter_fd >= 0)
		close(t.counter_fd);
	t.queue_fd = t.counter_fd = -1;
}

void uvmt_stats_get(struct uvmt_stats *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&drain_lock);
	out->records = t.records;
	out->queue_entries = t.count;
	memcpy(out->by_type, t.by_type, sizeof(out->by_type));
	if (t.ctl)
		for (int i = 0; i < UVMT_EV_TYPES; i++) {
			out->dropped[i] = __atomic_load_n(&t.ctl->dropped[i], __ATOMIC_RELAXED);
			out->dropped_total += out->dropped[i];
		}
	if (t.counters && t.counters_ok) {
		out->counters_ok = 1;
		for (int i = 0; i < UVMT_CNT_TOTAL; i++)
			out->counters[i] = __atomic_load_n(&t.counters[i], __ATOMIC_RELAXED) -
					   t.counters_base[i];
	}
	pthread_mutex_unlock(&drain_lock);
}
