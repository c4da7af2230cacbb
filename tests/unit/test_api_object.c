/* SPDX-License-Identifier: MIT */
/*
 * The public object and program API end to end, on clang-compiled programs
 * from tests/progs: open, list, find, load, test_run, and the maps the
 * programs wrote, read back through the map API.
 */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuext/gpuext.h"

#define PROGS TEST_BPF_DIR "/tests/progs/"

/* x86-64 struct pt_regs, as uprobe programs see it (168 bytes). */
enum { PT_REGS_SIZE = 168, PT_RAX = 80, PT_RSI = 104 };

static char last_msg[1024];

static int keep_message(enum gpuext_print_level level, const char *fmt, va_list ap)
{
	return vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
}

static int setup_print(void **state)
{
	gpuext_set_print(keep_message);
	last_msg[0] = '\0';
	return 0;
}

static void set_reg(unsigned char *regs, size_t off, uint64_t v)
{
	memcpy(regs + off, &v, 8);
}

static void test_hash_count_end_to_end(void **state)
{
	struct gpuext_object *obj = gpuext_object__open(PROGS "hash_count.bpf.o", NULL);
	struct gpuext_program *prog;
	int n = 0;

	assert_non_null(obj);
	gpuext_object__for_each_program(prog, obj)
		n++;
	assert_int_equal(n, 1);
	prog = gpuext_object__find_program_by_name(obj, "count_alloc");
	assert_non_null(prog);
	assert_string_equal(gpuext_program__name(prog), "count_alloc");
	assert_string_equal(gpuext_program__section(prog), "uprobe/cuMemAlloc_v2");
	assert_true(gpuext_program__insn_cnt(prog) > 5);
	assert_null(gpuext_object__find_program_by_name(obj, "nope"));
	assert_int_equal(errno, ENOENT);

	struct gpuext_map *sizes = gpuext_object__find_map_by_name(obj, "alloc_sizes");
	assert_non_null(sizes);
	assert_int_equal(gpuext_map__def(sizes)->type, GPUEXT_MAP_TYPE_HASH);
	assert_int_equal(gpuext_map__def(sizes)->key_size, 8);
	assert_int_equal(gpuext_map__def(sizes)->max_entries, 64);
	assert_null(gpuext_object__find_map_by_name(obj, "nope"));

	unsigned char regs[PT_REGS_SIZE] = {0};
	set_reg(regs, PT_RSI, 4096); /* PT_REGS_PARM2: the allocation size */
	struct gpuext_test_run_opts opts = {.sz = sizeof(opts), .ctx_in = regs,
					    .ctx_size_in = sizeof(regs)};
	/* Maps exist only after load. */
	assert_int_equal(gpuext_program__test_run(prog, &opts), -EINVAL);
	assert_non_null(strstr(last_msg, "prog 'count_alloc': test_run: the object is not loaded"));
	uint64_t key = 4096, val;
	assert_int_equal(gpuext_map__lookup_elem(sizes, &key, 8, &val, 8, 0), -EINVAL);

	assert_int_equal(gpuext_object__load(obj), 0);
	assert_int_equal(gpuext_object__load(obj), -EINVAL);
	assert_int_equal(gpuext_program__test_run(prog, &opts), 0);
	assert_int_equal(opts.retval, 1);
	assert_int_equal(gpuext_program__test_run(prog, &opts), 0);
	assert_int_equal(opts.retval, 2);
	opts.repeat = 10;
	assert_int_equal(gpuext_program__test_run(prog, &opts), 0);
	assert_int_equal(opts.retval, 12);
	assert_true(opts.duration < 1000000);
	/* The program's map, read from the user side. */
	assert_int_equal(gpuext_map__lookup_elem(sizes, &key, 8, &val, 8, 0), 0);
	assert_int_equal(val, 12);
	/* And written from the user side, seen by the program. */
	val = 100;
	assert_int_equal(gpuext_map__update_elem(sizes, &key, 8, &val, 8, GPUEXT_EXIST), 0);
	opts.repeat = 1;
	assert_int_equal(gpuext_program__test_run(prog, &opts), 0);
	assert_int_equal(opts.retval, 101);

	/* data_in instead of ctx_in, copied back through data_out. */
	unsigned char out[PT_REGS_SIZE];
	struct gpuext_test_run_opts d = {.sz = sizeof(d), .data_in = regs,
					 .data_size_in = sizeof(regs), .data_out = out,
					 .data_size_out = sizeof(out)};
	assert_int_equal(gpuext_program__test_run(prog, &d), 0);
	assert_int_equal(d.retval, 102);
	assert_int_equal(d.data_size_out, sizeof(regs));
	assert_memory_equal(out, regs, sizeof(regs));
	d.data_size_out = 8;
	assert_int_equal(gpuext_program__test_run(prog, &d), -ENOSPC);
	d.backend = 7;
	assert_int_equal(gpuext_program__test_run(prog, &d), -EINVAL);
	assert_non_null(strstr(last_msg, "unknown backend 7"));
	gpuext_object__close(obj);
}

/* The JIT (the default backend) and the interpreter count in the same map. */
static void test_jit_backend_agrees(void **state)
{
	struct gpuext_object *obj = gpuext_object__open(PROGS "hash_count.bpf.o", NULL);
	unsigned char regs[PT_REGS_SIZE] = {0};

	assert_non_null(obj);
	assert_int_equal(gpuext_object__load(obj), 0);
	struct gpuext_program *prog = gpuext_object__next_program(obj, NULL);
	set_reg(regs, PT_RSI, 64);
	struct gpuext_test_run_opts opts = {.sz = sizeof(opts), .ctx_in = regs,
					    .ctx_size_in = sizeof(regs), .repeat = 5,
					    .backend = GPUEXT_BACKEND_INTERP};
	assert_int_equal(gpuext_program__test_run(prog, &opts), 0);
	assert_int_equal(opts.retval, 5);
	opts.backend = GPUEXT_BACKEND_JIT;
	assert_int_equal(gpuext_program__test_run(prog, &opts), 0);
	assert_int_equal(opts.retval, 10);
	opts.backend = GPUEXT_BACKEND_DEFAULT;
	assert_int_equal(gpuext_program__test_run(prog, &opts), 0);
	assert_int_equal(opts.retval, 15);
	gpuext_object__close(obj);
}

struct records {
	int n;
	size_t size[8];
	uint64_t word[8][2];
};

static int keep_record(void *ctx, const void *data, size_t size)
{
	struct records *r = ctx;
	r->size[r->n] = size;
	memcpy(r->word[r->n], data, size < 16 ? size : 16);
	r->n++;
	return 0;
}

static void test_ringbuf_program_and_consumer(void **state)
{
	struct gpuext_object *obj = gpuext_object__open(PROGS "ringbuf.bpf.o", NULL);
	unsigned char regs[PT_REGS_SIZE] = {0};
	struct records got = {0};

	assert_non_null(obj);
	assert_int_equal(gpuext_object__load(obj), 0);
	struct gpuext_program *prog = gpuext_object__find_program_by_name(obj, "memcpy_ret");
	struct gpuext_map *events = gpuext_object__find_map_by_name(obj, "events");
	assert_non_null(prog);
	assert_non_null(events);
	assert_int_equal(gpuext_map__def(events)->type, GPUEXT_MAP_TYPE_RINGBUF);
	struct gpuext_test_run_opts opts = {.sz = sizeof(opts), .ctx_in = regs,
					    .ctx_size_in = sizeof(regs)};
	/* Even return value: event submitted (16 + 8 bytes) and a 4-byte marker
	 * (4 + 8, rounded to 16).  The program returns the bytes waiting. */
	set_reg(regs, PT_RAX, 4);
	assert_int_equal(gpuext_program__test_run(prog, &opts), 0);
	assert_int_equal(opts.retval, 40);
	/* Odd: the event is discarded, but its space is used until consumed. */
	set_reg(regs, PT_RAX, 5);
	assert_int_equal(gpuext_program__test_run(prog, &opts), 0);
	assert_int_equal(opts.retval, 80);
	assert_int_equal(gpuext_map__ringbuf_consume(events, keep_record, &got), 3);
	assert_int_equal(got.size[0], 16);
	assert_int_equal(got.word[0][0], 1); /* seq */
	assert_int_equal(got.word[0][1], 4); /* ret */
	assert_int_equal(got.size[1], 4);
	assert_int_equal((uint32_t)got.word[1][0], 0xfeed0004);
	assert_int_equal((uint32_t)got.word[2][0], 0xfeed0005);
	gpuext_object__close(obj);
}

static void test_errors_name_the_file_and_option(void **state)
{
	errno = 0;
	assert_null(gpuext_object__open("build/no/such/file.bpf.o", NULL));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(last_msg, "build/no/such/file.bpf.o"));

	struct gpuext_object_open_opts oo = {.sz = 4};
	assert_null(gpuext_object__open(PROGS "hash_count.bpf.o", &oo));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(last_msg, "libgpuext: gpuext_object__open: sz 4 is too small\n");
	oo = (struct gpuext_object_open_opts){.sz = sizeof(oo), .object_name = "counter"};
	struct gpuext_object *obj = gpuext_object__open(PROGS "hash_count.bpf.o", &oo);
	assert_non_null(obj);

	/* A caller built against a newer header, using a field we do not know. */
	struct {
		struct gpuext_test_run_opts o;
		uint64_t future;
	} big = {{.sz = sizeof(big)}, 1};
	struct gpuext_program *prog = gpuext_object__next_program(obj, NULL);
	assert_non_null(prog);
	assert_null(gpuext_object__next_program(obj, prog));
	assert_int_equal(gpuext_program__test_run(prog, &big.o), -EINVAL);
	assert_non_null(strstr(last_msg, "unknown non-zero field"));
	gpuext_object__close(obj);
}

/*
 * hash_count.bpf.o with the NULL check after bpf_map_lookup_elem inverted
 * ("if r0 == 0" made "if r0 != 0", a patch of the good object), so the NULL
 * path dereferences r0: the verifier must refuse it at load, naming the
 * program and the instruction.
 */
static void test_load_runs_the_verifier(void **state)
{
	static const unsigned char check[] = {0x85, 0, 0, 0, 1, 0, 0, 0, 0x15, 0x00, 0x03, 0x00};
	size_t len;
	char *elf = test_read_file(PROGS "hash_count.bpf.o", &len);
	char path[] = "/tmp/gpuext-unsafe-XXXXXX";

	assert_non_null(elf);
	unsigned char *at = memmem(elf, len, check, sizeof(check));
	assert_non_null(at);
	at[8] = 0x55; /* jeq -> jne */
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, elf, len), (ssize_t)len);
	close(fd);
	free(elf);

	struct gpuext_object *obj = gpuext_object__open(path, NULL);
	assert_non_null(obj);
	assert_int_equal(gpuext_object__load(obj), -EACCES);
	assert_non_null(strstr(last_msg, "prog 'count_alloc': insn 10"));
	struct gpuext_test_run_opts opts = {.sz = sizeof(opts)};
	assert_int_equal(gpuext_program__test_run(gpuext_object__next_program(obj, NULL), &opts),
			 -EINVAL);
	gpuext_object__close(obj);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_hash_count_end_to_end, setup_print),
		cmocka_unit_test_setup(test_ringbuf_program_and_consumer, setup_print),
		cmocka_unit_test_setup(test_errors_name_the_file_and_option, setup_print),
		cmocka_unit_test_setup(test_load_runs_the_verifier, setup_print),
		cmocka_unit_test_setup(test_jit_backend_agrees, setup_print),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
