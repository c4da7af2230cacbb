/* SPDX-License-Identifier: MIT */
/*
 * test_run.c - `gpuext test-run FILE SECTION|NAME [--data FILE] [--repeat N]`:
 * run one program of an object on the host, like bpf_prog_test_run: r1
 * points to a copy of the data (the ctx), r2 holds its length.  Prints r0,
 * the time per run and every map's non-empty contents.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/jit.h"
#include "bpf/object.h"
#include "bpf/verifier.h"
#include "cli.h"

static const char test_run_usage[] =
	"Usage: gpuext [-j] test-run FILE SECTION|NAME [--data FILE] [--repeat N]\n"
	"                            [--backend interp|jit]\n"
	"\n"
	"Run one program of FILE on the host.  r1 points to a copy of the data FILE\n"
	"(the program's ctx or memory; empty without --data), r2 holds its length.\n"
	"The JIT runs only what the verifier accepts, with the data zero-padded to\n"
	"at least the largest ctx record; the interpreter checks every memory access\n"
	"against the data, the stack and the maps.  Prints r0, the time per run and\n"
	"the non-empty contents of every map (keys and values in hex; ring buffers:\n"
	"the records).\n"
	"  --data FILE   bytes to pass to the program\n"
	"  --repeat N    run N times (maps keep their contents between runs)\n"
	"  --backend B   jit (default) or interp\n";

/*
 * Bytes the JIT's ctx buffer has at least, zero past the data: every ctx
 * record the verifier lets a program read (pt_regs, launch and CUPTI
 * records, struct_ops arguments) is smaller, so a verified program never
 * reads past the buffer even when --data is shorter than its ctx.
 */
enum { TEST_RUN_JIT_CTX_MIN = 4096 };

static int test_run_read(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 4096;

	*len = 0;
	*buf = f ? malloc(cap) : NULL;
	if (!*buf) {
		cli_error("%s: %s", path, strerror(f ? ENOMEM : errno));
		if (f)
			fclose(f);
		return 1;
	}
	for (size_t got; (got = fread(*buf + *len, 1, cap - *len, f)) > 0;) {
		*len += got;
		if (*len == cap) {
			uint8_t *n = cap < (1u << 30) ? realloc(*buf, cap * 2) : NULL;
			if (!n) {
				cli_error("%s: too large", path);
				fclose(f);
				return 1;
			}
			*buf = n;
			cap *= 2;
		}
	}
	fclose(f);
	return 0;
}

static void test_run_hex(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf(cli_json ? "%02x" : (i ? " %02x" : "%02x"), p[i]);
}

static int test_run_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

struct test_run_rb {
	size_t n;
};

static int test_run_rb_record(void *arg, const void *data, size_t size)
{
	struct test_run_rb *rb = arg;

	if (cli_json)
		printf("%s\"", rb->n ? "," : "");
	else
		printf("    record %zu (%zu bytes): ", rb->n, size);
	test_run_hex(data, size);
	printf(cli_json ? "\"" : "\n");
	rb->n++;
	return 0;
}

/* "map NAME (TYPE):" or the start of its JSON object. */
static void test_run_map_header(const struct map_def *d, int *first_map)
{
	if (!cli_json) {
		printf("map %s (%s):\n", d->name, cli_map_type_name(d->type));
		return;
	}
	printf("%s{\"name\":", *first_map ? "" : ",");
	cli_json_str(stdout, d->name);
	printf(",\"type\":\"%s\",\"%s\":[", cli_map_type_name(d->type),
	       d->type == MAP_TYPE_RINGBUF ? "records" : "entries");
	*first_map = 0;
}

/* Entries of one map whose value is not all zero (for arrays), or all. */
static int test_run_print_map(struct object_map *m, int *first_map)
{
	const struct map_def *d = &m->def;
	struct test_run_rb rb = {0};

	if (d->type == MAP_TYPE_RINGBUF) {
		test_run_map_header(d, first_map);
		int n = map_ringbuf_consume(m->map, test_run_rb_record, &rb);
		printf(cli_json ? "]}" : "");
		return n < 0 ? n : 0;
	}
	unsigned cpus = map_nr_cpus(m->map);
	size_t slot = cpus > 1 ? (d->value_size + 7u) & ~7u : d->value_size;
	uint8_t *key = calloc(1, d->key_size + 1), *next = calloc(1, d->key_size + 1);
	uint8_t *val = calloc(cpus, slot + 1);
	int err = key && next && val ? 0 : -ENOMEM, have_key = 0, printed = 0;

	while (!err && !map_get_next_key(m->map, have_key ? key : NULL, next)) {
		memcpy(key, next, d->key_size);
		have_key = 1;
		if ((err = map_lookup_copy(m->map, key, val)))
			break;
		int is_array = d->type == MAP_TYPE_ARRAY || d->type == MAP_TYPE_PERCPU_ARRAY;
		if (is_array && test_run_zero(val, (size_t)cpus * slot))
			continue;
		if (!printed++)
			test_run_map_header(d, first_map);
		printf(cli_json ? "%s{\"key\":\"" : "%s    key ", printed > 1 && cli_json ? "," : "");
		test_run_hex(key, d->key_size);
		if (cpus == 1) {
			printf(cli_json ? "\",\"value\":\"" : ": ");
			test_run_hex(val, d->value_size);
			printf(cli_json ? "\"}" : "\n");
			continue;
		}
		/* Per-CPU: the slots of the CPUs that hold something. */
		printf(cli_json ? "\",\"cpus\":[" : ":\n");
		for (unsigned c = 0, n = 0; c < cpus; c++) {
			if (test_run_zero(val + c * slot, d->value_size))
				continue;
			printf(cli_json ? "%s{\"cpu\":%u,\"value\":\"" : "%s      cpu %u: ",
			       cli_json && n++ ? "," : "", c);
			test_run_hex(val + c * slot, d->value_size);
			printf(cli_json ? "\"}" : "\n");
		}
		printf(cli_json ? "]}" : "");
	}
	if (printed && cli_json)
		printf("]}");
	free(key);
	free(next);
	free(val);
	return err;
}

int do_test_run(int argc, char **argv)
{
	const char *path = NULL, *name = NULL, *data_path = NULL;
	long repeat = 1;
	enum prog_backend backend = PROG_BACKEND_JIT;
	uint8_t *data = NULL;
	size_t len = 0;
	struct object *obj = NULL;
	struct err e = {{0}};
	int rc = 1;

	enum { OPT_DATA = CLI_OPT_LONG, OPT_REPEAT, OPT_BACKEND };
	static const struct option longs[] = {
		{"data", required_argument, NULL, OPT_DATA},
		{"repeat", required_argument, NULL, OPT_REPEAT},
		{"backend", required_argument, NULL, OPT_BACKEND},
		{0},
	};
	struct cli_opts o = {.cmd = "test-run", .longs = longs};
	char *end;
	int c;
	while ((c = cli_opts_next(&o, argc, argv)) != CLI_OPT_END) {
		switch (c) {
		case CLI_OPT_HELP:
			fputs(test_run_usage, stdout);
			return 0;
		case OPT_DATA:
			data_path = o.arg;
			break;
		case OPT_REPEAT:
			repeat = strtol(o.arg, &end, 0);
			if (*end || repeat < 1 || repeat > 1000000000) {
				cli_error("--repeat: '%s' is not a count from 1 to 1e9", o.arg);
				return 2;
			}
			break;
		case OPT_BACKEND:
			if (!strcmp(o.arg, "interp"))
				backend = PROG_BACKEND_INTERP;
			else if (strcmp(o.arg, "jit")) {
				cli_error("--backend: '%s' is not interp or jit", o.arg);
				return 2;
			}
			break;
		case CLI_OPT_ARG:
			if (!path) {
				path = o.arg;
			} else if (!name) {
				name = o.arg;
			} else {
				cli_error("test-run: unexpected argument '%s' (see gpuext test-run --help)",
					  o.arg);
				return 2;
			}
			break;
		default:
			return 2;
		}
	}
	if (!name) {
		cli_error("usage: gpuext test-run FILE SECTION|NAME [--data FILE] [--repeat N] "
			  "[--backend interp|jit]");
		return 2;
	}
	if (data_path && test_run_read(data_path, &data, &len))
		return 1;
	if (!data && !(data = calloc(1, 1))) {
		cli_error("out of memory");
		return 1;
	}
	if (cli_open_object(path, &obj))
		goto out;
	struct prog *p = object_find_prog(obj, name);
	if (!p) {
		cli_error("%s: no program named or in section '%s'", path, name);
		goto out;
	}
	if (object_create_maps(obj, &e)) {
		cli_error("%s", e.msg);
		goto out;
	}
	/* The JIT trusts its input: only a verified program gets compiled. */
	if (backend == PROG_BACKEND_JIT &&
	    (verifier_check(p, NULL, NULL, &e) || jit_compile(p, NULL, &e))) {
		cli_error("%s: %s", path, e.msg);
		goto out;
	}
	/*
	 * Each run sees the same input: the program may write its ctx.  Runs
	 * are bounds-checked: an unverified program reading past the data it
	 * was given is reported, not undefined behaviour.
	 */
	size_t ctx_len = backend == PROG_BACKEND_JIT && len < TEST_RUN_JIT_CTX_MIN
				 ? TEST_RUN_JIT_CTX_MIN : len ? len : 1;
	uint8_t *ctx = calloc(1, ctx_len);
	uint64_t r0 = 0;
	struct timespec t0, t1;
	int err = ctx ? 0 : -ENOMEM;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; !err && i < repeat; i++) {
		memcpy(ctx, data, len);
		struct prog_run_opts opts = {.args = {(uintptr_t)ctx, len}, .bounds_check = 1,
					     .mem = ctx, .mem_len = len};
		err = prog_run(p, backend, &opts, &r0, &e);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	free(ctx);
	if (err) {
		cli_error("%s: %s", path, err == -ENOMEM ? "out of memory" : e.msg);
		goto out;
	}
	double ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (double)repeat;
	if (cli_json) {
		printf("{\"prog\":");
		cli_json_str(stdout, p->name);
		printf(",\"r0\":%llu,\"runs\":%ld,\"ns_per_run\":%.1f,\"maps\":[",
		       (unsigned long long)r0, repeat, ns);
	} else
		printf("%s: r0 = %llu (0x%llx), %ld run%s, %.1f ns/run\n", p->name,
		       (unsigned long long)r0, (unsigned long long)r0, repeat,
		       repeat == 1 ? "" : "s", ns);
	int first = 1;
	rc = 0;
	for (size_t i = 0; i < obj->map_cnt; i++)
		if (test_run_print_map(&obj->maps[i], &first)) {
			cli_error("%s: map '%s': cannot read", path, obj->maps[i].def.name);
			rc = 1;
		}
	if (cli_json)
		printf("]}\n");
out:
	object_free(obj);
	free(data);
	return rc;
}
