/* SPDX-License-Identifier: MIT */
/* Host helpers: prototypes, formatted output, safe reads, identity, maps. */
#include "testutil.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bpf/helpers.h"
#include "bpf/helpers_impl.h"
#include "bpf/map.h"
#include "ptx/ptx_helpers.h"

#define U(p) ((uint64_t)(uintptr_t)(p))

static uint64_t call(uint32_t id, uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	helper_fn fn = helper_table_default()->fn[id];
	assert_non_null(fn);
	return fn(a, b, c, d, e);
}

static void test_every_id_has_a_prototype(void **state)
{
#define CHECK_ID(name_, id_, str_)                                                \
	do {                                                                   \
		const struct helper_proto *p = helper_proto_find(id_);          \
		assert_non_null(p);                                            \
		assert_int_equal(p->id, id_);                                   \
		assert_string_equal(p->name, str_);                             \
		assert_non_null(p->fn);                                        \
		assert_true(p->flags & HELPER_F_HOST);                         \
		assert_ptr_equal(helper_table_default()->fn[id_], p->fn);       \
	} while (0);
	HELPER_IDS(CHECK_ID)
#undef CHECK_ID
	/* A helper marked for the GPU exists in the device runtime. */
#define CHECK_GPU(name_, id_, str_)                                            \
	if ((helper_proto_find(id_)->flags & HELPER_F_GPU) && !ptx_helper_find(id_)) \
		fail_msg("helper %s: HELPER_F_GPU, but the device runtime lacks it", str_);
	HELPER_IDS(CHECK_GPU)
#undef CHECK_GPU
	assert_null(helper_proto_find(0));
	assert_null(helper_proto_find(9));
	assert_null(helper_table_default()->fn[9]);
	const struct helper_proto *p = helper_proto_find(HELPER_RINGBUF_RESERVE);
	assert_int_equal(p->ret, RET_PTR_TO_RINGBUF_REC_OR_NULL);
	assert_int_equal(p->args[1], ARG_CONST_ALLOC_SIZE);
	p = helper_proto_find(HELPER_MAP_LOOKUP_ELEM);
	assert_int_equal(p->args[0], ARG_CONST_MAP_PTR);
	assert_int_equal(p->args[2], ARG_NONE);
}

/* A sink that keeps what trace_printk wrote. */
struct capture {
	char text[4096];
	size_t len;
};

static void capture_write(void *arg, const char *line, size_t len)
{
	struct capture *c = arg;
	memcpy(c->text + c->len, line, len);
	c->len += len;
	c->text[c->len] = '\0';
}

static struct capture cap;

static int setup_capture(void **state)
{
	memset(&cap, 0, sizeof(cap));
	helper_set_trace_sink(&(struct helper_trace_sink){capture_write, &cap});
	return 0;
}

static int teardown_capture(void **state)
{
	helper_set_trace_sink(NULL);
	return 0;
}

static int64_t printk(const char *fmt, uint64_t a, uint64_t b, uint64_t c)
{
	cap.len = 0;
	cap.text[0] = '\0';
	return (int64_t)call(HELPER_TRACE_PRINTK, U(fmt), strlen(fmt) + 1, a, b, c);
}

#define EXPECT_PRINTK(want, fmt, a, b, c)                                      \
	do {                                                                   \
		assert_int_equal(printk(fmt, a, b, c), strlen(want));          \
		assert_string_equal(cap.text, want);                           \
	} while (0)

static void test_printk_conversions(void **state)
{
	EXPECT_PRINTK("d=-5 i=7 u=4294967295\n", "d=%d i=%i u=%u\n", (uint64_t)-5, 7, (uint64_t)-1);
	EXPECT_PRINTK("x=ff X=AB%", "x=%x X=%X%%", 0x1ff00000000ull | 0xff, 0xab, 0);
	EXPECT_PRINTK("-1 18446744073709551615 ffffffffffffffff", "%ld %lu %lx", (uint64_t)-1,
		      (uint64_t)-1, (uint64_t)-1);
	EXPECT_PRINTK("-2 3 abcdef0123", "%lld %llu %llx", (uint64_t)-2, 3, 0xabcdef0123ull);
	EXPECT_PRINTK("p=0x1234 px=0xff", "p=%p px=%px", 0x1234, 0xff, 0);
	EXPECT_PRINTK("(null) 0x0 0x0", "%p %px %pK", 0, 0, 0);
	EXPECT_PRINTK("s=hello c=Z", "s=%s c=%c", U("hello"), 'Z', 0);
	EXPECT_PRINTK("[   42][42   ][00042]", "[%5d][%-5u][%05x]", 42, 42, 0x42);
	EXPECT_PRINTK("[+5][ 5]", "[%+d][% d]", 5, 5, 0);
	EXPECT_PRINTK("[   ab]", "[%5s]", U("ab"), 0, 0);
	/* A bad string pointer prints as empty, it does not crash. */
	EXPECT_PRINTK("s=<>", "s=<%s>", 8, 0, 0);
}

static void test_printk_rejects_what_linux_rejects(void **state)
{
	const char *bad[] = {"%.2d", "%q", "%d %d %d %d", "%lllx", "%pI4", "\x80", "%",
			     "%hd"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(printk(bad[i], 1, 2, 3), -EINVAL);
		assert_int_equal(cap.len, 0);
	}
	/* The format must be NUL-terminated within fmt_size. */
	assert_int_equal((int64_t)call(HELPER_TRACE_PRINTK, U("abc"), 3, 0, 0, 0), -EINVAL);
}

static void test_vprintk_and_snprintf(void **state)
{
	uint64_t args[5] = {1, 2, 3, 4, U("five")};
	const char *fmt = "%d %d %d %d %s";
	char out[8];

	cap.len = 0;
	assert_int_equal((int64_t)call(HELPER_TRACE_VPRINTK, U(fmt), strlen(fmt) + 1, U(args),
				       sizeof(args), 0), 12);
	assert_string_equal(cap.text, "1 2 3 4 five");
	assert_int_equal((int64_t)call(HELPER_TRACE_VPRINTK, U(fmt), strlen(fmt) + 1, U(args), 12,
				       0), -EINVAL);
	/* snprintf truncates and returns the size the whole result needs. */
	assert_int_equal((int64_t)call(HELPER_SNPRINTF, U(out), sizeof(out), U(fmt), U(args),
				       sizeof(args)), 13);
	assert_string_equal(out, "1 2 3 4");
	assert_int_equal((int64_t)call(HELPER_SNPRINTF, U(out), sizeof(out), U("%d %d"), U(args),
				       8), -EINVAL);
	assert_int_equal((int64_t)call(HELPER_SNPRINTF, U(out), sizeof(out), U("ok"), 0, 0), 3);
	assert_string_equal(out, "ok");
}

static void test_probe_read_never_crashes(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	char *two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char dst[32];
	const uint32_t ids[] = {HELPER_PROBE_READ, HELPER_PROBE_READ_USER, HELPER_PROBE_READ_KERNEL};

	assert_true(two != MAP_FAILED);
	munmap(two + page, page); /* the second page is now a hole */
	for (size_t i = 0; i < 3; i++) {
		memset(dst, 'x', sizeof(dst));
		assert_int_equal((int64_t)call(ids[i], U(dst), 16, 8, 0, 0), -EFAULT);
		for (int j = 0; j < 16; j++)
			assert_int_equal(dst[j], 0); /* zeroed on failure */
		assert_int_equal(dst[16], 'x');
		/* Straddling into the hole fails as a whole. */
		assert_int_equal((int64_t)call(ids[i], U(dst), 16, U(two + page - 8), 0, 0),
				 -EFAULT);
		assert_int_equal((int64_t)call(ids[i], U(dst), 6, U("hello"), 0, 0), 0);
		assert_string_equal(dst, "hello");
	}
	const uint32_t str_ids[] = {HELPER_PROBE_READ_STR, HELPER_PROBE_READ_USER_STR,
				    HELPER_PROBE_READ_KERNEL_STR};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal((int64_t)call(str_ids[i], U(dst), 32, U("hello"), 0, 0), 6);
		assert_string_equal(dst, "hello");
		/* Truncated to size - 1 and terminated. */
		assert_int_equal((int64_t)call(str_ids[i], U(dst), 4, U("hello"), 0, 0), 4);
		assert_string_equal(dst, "hel");
		/* A string that ends right before the hole is fine ... */
		memcpy(two + page - 3, "ab", 3);
		assert_int_equal((int64_t)call(str_ids[i], U(dst), 32, U(two + page - 3), 0, 0), 3);
		assert_string_equal(dst, "ab");
		/* ... one that runs into it is not. */
		memset(two + page - 3, 'z', 3);
		assert_int_equal((int64_t)call(str_ids[i], U(dst), 32, U(two + page - 3), 0, 0),
				 -EFAULT);
		assert_int_equal(dst[0], 0);
		assert_int_equal((int64_t)call(str_ids[i], U(dst), 32, 16, 0, 0), -EFAULT);
		assert_int_equal((int64_t)call(str_ids[i], U(dst), 0, U("x"), 0, 0), 0);
	}
	/* The fallback for sandboxes without process_vm_readv, on its own. */
	char big[3 * 4096];
	memset(big, 'q', sizeof(big));
	char *copy = malloc(sizeof(big));
	assert_int_equal(helper_read_via_pipe(copy, big, sizeof(big)), 0);
	assert_memory_equal(copy, big, sizeof(big));
	assert_int_equal(helper_read_via_pipe(copy, (void *)8, 16), -EFAULT);
	assert_int_equal(helper_read_via_pipe(copy, two + page - 8, 16), -EFAULT);
	free(copy);
	munmap(two, page);
}

static void *comm_thread(void *arg)
{
	char *out = arg;
	pthread_setname_np(pthread_self(), "gpx-helper-thr");
	call(HELPER_GET_CURRENT_COMM, U(out), 16, 0, 0, 0);
	call(HELPER_GET_CURRENT_COMM, U(out + 16), 4, 0, 0, 0);
	return NULL;
}

static void test_identity_helpers(void **state)
{
	char comm[32];
	pthread_t th;

	memset(comm, 'x', sizeof(comm));
	assert_int_equal(pthread_create(&th, NULL, comm_thread, comm), 0);
	pthread_join(th, NULL);
	assert_string_equal(comm, "gpx-helper-thr");
	assert_memory_equal(comm + 16, "gpx\0", 4);
	uint64_t pt = call(HELPER_GET_CURRENT_PID_TGID, 0, 0, 0, 0, 0);
	assert_int_equal(pt >> 32, getpid());
	assert_int_equal((uint32_t)pt, syscall(SYS_gettid));
	uint64_t ug = call(HELPER_GET_CURRENT_UID_GID, 0, 0, 0, 0, 0);
	assert_int_equal(ug >> 32, getgid());
	assert_int_equal((uint32_t)ug, getuid());
	assert_true(call(HELPER_GET_SMP_PROCESSOR_ID, 0, 0, 0, 0, 0) <
		    (uint64_t)sysconf(_SC_NPROCESSORS_CONF));
}

static void test_time_and_random(void **state)
{
	struct timespec ts;
	uint64_t a = call(HELPER_KTIME_GET_NS, 0, 0, 0, 0, 0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t b = call(HELPER_KTIME_GET_NS, 0, 0, 0, 0, 0);
	uint64_t mid = (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
	assert_true(a <= mid && mid <= b);
	clock_gettime(CLOCK_BOOTTIME, &ts);
	uint64_t boot = call(HELPER_KTIME_GET_BOOT_NS, 0, 0, 0, 0, 0);
	assert_true(boot >= (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec);
	/* Random: 32-bit values, many distinct, both halves of the range seen. */
	uint64_t seen_high = 0, seen_low = 0, same = 0, prev = 1ull << 40;
	for (int i = 0; i < 1000; i++) {
		uint64_t r = call(HELPER_GET_PRANDOM_U32, 0, 0, 0, 0, 0);
		assert_true(r <= UINT32_MAX);
		seen_high |= r >> 31, seen_low |= !(r >> 31);
		same += r == prev;
		prev = r;
	}
	assert_true(seen_high && seen_low);
	assert_true(same < 2);
}

static void test_map_and_ringbuf_helpers(void **state)
{
	struct map_def hd = {.type = MAP_TYPE_HASH, .key_size = 4, .value_size = 8,
			     .max_entries = 4, .name = "h"};
	struct map_def rd = {.type = MAP_TYPE_RINGBUF, .max_entries = 4096, .name = "r"};
	struct map *h, *r;
	uint32_t k = 5;
	uint64_t v = 99;

	assert_int_equal(map_create(&hd, &h, NULL), 0);
	assert_int_equal(map_create(&rd, &r, NULL), 0);
	assert_int_equal(call(HELPER_MAP_LOOKUP_ELEM, U(h), U(&k), 0, 0, 0), 0);
	assert_int_equal(call(HELPER_MAP_UPDATE_ELEM, U(h), U(&k), U(&v), MAP_NOEXIST, 0), 0);
	assert_int_equal((int64_t)call(HELPER_MAP_UPDATE_ELEM, U(h), U(&k), U(&v), MAP_NOEXIST, 0),
			 -EEXIST);
	uint64_t *p = (uint64_t *)(uintptr_t)call(HELPER_MAP_LOOKUP_ELEM, U(h), U(&k), 0, 0, 0);
	assert_int_equal(*p, 99);
	assert_int_equal(call(HELPER_MAP_DELETE_ELEM, U(h), U(&k), 0, 0, 0), 0);
	assert_int_equal((int64_t)call(HELPER_MAP_DELETE_ELEM, U(h), U(&k), 0, 0, 0), -ENOENT);

	assert_int_equal(call(HELPER_RINGBUF_OUTPUT, U(r), U(&v), 8, 0, 0), 0);
	void *rec = (void *)(uintptr_t)call(HELPER_RINGBUF_RESERVE, U(r), 16, 0, 0, 0);
	assert_non_null(rec);
	assert_int_equal(call(HELPER_RINGBUF_QUERY, U(r), 0, 0, 0, 0), 16 + 24);
	call(HELPER_RINGBUF_DISCARD, U(rec), 0, 0, 0, 0);
	rec = (void *)(uintptr_t)call(HELPER_RINGBUF_RESERVE, U(r), 8, 0, 0, 0);
	memcpy(rec, &k, 4);
	call(HELPER_RINGBUF_SUBMIT, U(rec), 0, 0, 0, 0);
	assert_int_equal(call(HELPER_RINGBUF_QUERY, U(r), 1, 0, 0, 0), 4096);
	assert_int_equal(call(HELPER_RINGBUF_RESERVE, U(r), 8192, 0, 0, 0), 0);
	assert_int_equal(map_ringbuf_dropped(r), 1);
	map_free(h);
	map_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_id_has_a_prototype),
		cmocka_unit_test_setup_teardown(test_printk_conversions, setup_capture,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_printk_rejects_what_linux_rejects,
						setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_vprintk_and_snprintf, setup_capture,
						teardown_capture),
		cmocka_unit_test(test_probe_read_never_crashes),
		cmocka_unit_test(test_identity_helpers),
		cmocka_unit_test(test_time_and_random),
		cmocka_unit_test(test_map_and_ringbuf_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
