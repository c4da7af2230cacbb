/* SPDX-License-Identifier: MIT */
/*
 * run_gpu.c - `gpuext run-gpu FILE SECTION [--data FILE]`: run a program
 * once on the GPU as a standalone kernel and print r0.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/object.h"
#include "bpf/verifier.h"
#include "cli.h"
#include "ptx/ptx_rt.h"

static const char run_gpu_usage[] =
	"Usage: gpuext run-gpu FILE SECTION [--data FILE]\n\n"
	"Run the program of FILE named SECTION (section or function name) once on\n"
	"the first GPU, as a kernel of one thread, with r1 = a device copy of the\n"
	"--data file (or 0) and r2 = its length.  The object's maps are created in\n"
	"GPU memory (global data initialised).  Prints r0, then what the program\n"
	"printed with bpf_trace_printk, what it wrote to ring buffers (hex) and the\n"
	"non-zero elements of its maps.  The program is verified first with the\n"
	"device profile (GPU helpers, --data's length as the memory size): there\n"
	"is no way around that, since a bad access would fault the GPU context.\n"
	"Needs a CUDA driver and a GPU.\n";

enum { RUN_GPU_TRACE_RING = 1u << 20 };

static void print_hex(const char *prefix, const void *data, size_t len)
{
	const unsigned char *d = data;
	printf("%s", prefix);
	for (size_t i = 0; i < len; i++)
		printf("%02x%s", d[i], i + 1 < len ? " " : "");
	printf("\n");
}

struct run_gpu_map {
	const char *name;
	uint32_t key_size, value_size;
};

static int print_trace(void *arg, const void *data, size_t size)
{
	char line[1024];
	if (ptx_rt_trace_format(data, size, line, sizeof(line)) >= 0)
		printf("trace: %s%s", line, line[0] && line[strlen(line) - 1] == '\n' ? "" : "\n");
	return 0;
}

static int print_record(void *arg, const void *data, size_t size)
{
	char prefix[128];
	snprintf(prefix, sizeof(prefix), "%s: record of %zu bytes: ", (const char *)arg, size);
	print_hex(prefix, data, size);
	return 0;
}

static int print_elem(void *arg, const void *key, const void *values, unsigned nr)
{
	const struct run_gpu_map *m = arg;
	size_t stride = (m->value_size + 7) & ~7u;
	int nonzero = 0;
	for (size_t i = 0; i < nr * stride && !nonzero; i++)
		nonzero = ((const unsigned char *)values)[i] != 0;
	if (!nonzero)
		return 0;
	char prefix[128];
	snprintf(prefix, sizeof(prefix), "%s: key ", m->name);
	print_hex(prefix, key, m->key_size);
	for (unsigned s = 0; s < nr; s++) {
		snprintf(prefix, sizeof(prefix), nr > 1 ? "  sm slot %u: " : "  value: ", s);
		print_hex(prefix, (const char *)values + s * stride, m->value_size);
	}
	return 0;
}

int do_run_gpu(int argc, char **argv)
{
	const char *path = NULL, *section = NULL, *data_path = NULL;
	struct object *obj = NULL;
	struct ptx_rt *rt = NULL;
	struct ptx_rt_map **maps = NULL, *trace = NULL;
	struct err e = {{0}};
	char *data = NULL;
	size_t data_len = 0;
	uint64_t r0;
	int ret = 1;

	static const struct option longs[] = {{"data", required_argument, NULL, 'd'}, {0}};
	struct cli_opts o = {.cmd = "run-gpu", .longs = longs};
	int c;
	while ((c = cli_opts_next(&o, argc, argv)) != CLI_OPT_END) {
		if (c == CLI_OPT_HELP) {
			fputs(run_gpu_usage, stdout);
			return 0;
		} else if (c == 'd') {
			data_path = o.arg;
		} else if (c != CLI_OPT_ARG ||
			   cli_take_file_section("run-gpu", o.arg, &path, &section)) {
			return 2;
		}
	}
	if (!path || !section) {
		fputs(run_gpu_usage, stderr);
		return 2;
	}
	if (data_path && !(data = cli_read_file(data_path, &data_len))) {
		cli_error("%s: %s", data_path, strerror(errno));
		return 1;
	}
	/* host maps too: the verifier reads the map definitions through them */
	if (object_open(path, &obj, &e) || object_create_maps(obj, &e)) {
		cli_error("%s", e.msg);
		goto out;
	}
	struct prog *p = object_find_prog(obj, section);
	if (!p) {
		cli_error("%s: no program named or in section '%s'", path, section);
		goto out;
	}
	static char log[16384];
	struct vfy_opts vo = {.profile = VFY_PROFILE_GPU, .log_level = VFY_LOG_PATH,
			      .log_buf = log, .log_size = sizeof(log),
			      .mem_size = (uint32_t)data_len};
	if (verifier_check(p, &vo, NULL, &e)) {
		fputs(log, stderr);
		cli_error("%s: %s", path, e.msg);
		goto out;
	}
	if (ptx_rt_open(0, &rt, &e)) {
		cli_error("run-gpu: %s", e.msg);
		goto out;
	}
	maps = calloc(obj->map_cnt + 1, sizeof(*maps));
	if (!maps) {
		cli_error("run-gpu: out of memory");
		goto out;
	}
	for (size_t i = 0; i < obj->map_cnt; i++) {
		const struct object_map *om = &obj->maps[i];
		if (ptx_rt_map_create(rt, &om->def, &maps[i], &e) ||
		    (om->init && om->init_len <= om->def.value_size &&
		     ptx_rt_map_array_set(maps[i], 0, om->init, &e))) {
			cli_error("%s: %s", path, e.msg);
			goto out;
		}
	}
	struct map_def tdef = {.type = MAP_TYPE_RINGBUF, .max_entries = RUN_GPU_TRACE_RING,
			       .name = "trace_printk"};
	if (ptx_rt_map_create(rt, &tdef, &trace, &e) ||
	    ptx_rt_run_prog(rt, p, maps, trace, data, data_len, 0, &r0, &e)) {
		cli_error("%s: %s", path, e.msg);
		goto out;
	}
	printf("r0 = %" PRIu64 " (0x%" PRIx64 ")\n", r0, r0);
	ptx_rt_ringbuf_poll(trace, print_trace, NULL);
	for (size_t i = 0; i < obj->map_cnt; i++) {
		const struct map_def *d = &obj->maps[i].def;
		struct run_gpu_map rm = {d->name, d->key_size, d->value_size};
		uint64_t drops = 0;
		if (d->type == MAP_TYPE_RINGBUF) {
			ptx_rt_ringbuf_poll(maps[i], print_record, (void *)d->name);
			if (!ptx_rt_map_drops(maps[i], &drops, PTX_RT_COMPLETE, &e) && drops)
				printf("%s: %" PRIu64 " records dropped\n", d->name, drops);
		} else if (ptx_rt_map_foreach(maps[i], print_elem, &rm, &e)) {
			cli_error("%s: %s", d->name, e.msg);
			goto out;
		}
	}
	ret = 0;
out:
	for (size_t i = 0; maps && i < obj->map_cnt; i++)
		ptx_rt_map_free(maps[i]);
	ptx_rt_map_free(trace);
	free(maps);
	ptx_rt_close(rt);
	object_free(obj);
	free(data);
	return ret;
}
