/* SPDX-License-Identifier: MIT */
/*
 * prog.c - `gpuext prog show|dump FILE`: what the loader sees in an object.
 * Subcommands come from prog_cmds[], which also generates the help.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bpf/btf.h"
#include "bpf/disasm.h"
#include "bpf/jit.h"
#include "bpf/object.h"
#include "cli.h"

const char *cli_map_type_name(unsigned type)
{
	switch (type) {
	case MAP_TYPE_HASH: return "hash";
	case MAP_TYPE_ARRAY: return "array";
	case MAP_TYPE_PERCPU_HASH: return "percpu_hash";
	case MAP_TYPE_PERCPU_ARRAY: return "percpu_array";
	case MAP_TYPE_LRU_HASH: return "lru_hash";
	case MAP_TYPE_RINGBUF: return "ringbuf";
	case MAP_TYPE_GPU_BLOCK_ARRAY: return "gpu_block_array";
	default: return "unknown";
	}
}

void cli_json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\u%04x", *s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

int cli_open_object(const char *path, struct object **obj)
{
	struct err e = {{0}};

	if (object_open(path, obj, &e)) {
		cli_error("%s", e.msg);
		return 1;
	}
	return 0;
}

static void prog_show_text(const struct object *obj)
{
	printf("%s: %zu program%s, %zu map%s, license \"%s\"\n", obj->name, obj->prog_cnt,
	       obj->prog_cnt == 1 ? "" : "s", obj->map_cnt, obj->map_cnt == 1 ? "" : "s",
	       obj->license);
	printf("\nprograms:\n  %-20s %-32s %-13s %-24s %s\n", "NAME", "SECTION", "TYPE",
	       "TARGET", "INSNS");
	for (size_t i = 0; i < obj->prog_cnt; i++) {
		const struct prog *p = obj->progs[i];
		printf("  %-20s %-32s %-13s %-24s %zu\n", p->name, p->section,
		       prog_type_name(p->type), p->target ? p->target : "-", p->insn_cnt);
	}
	size_t core = btf_ext_core_relo_cnt(obj->btf);
	if (core)
		printf("\nnote: %zu CO-RE relocation%s left as compiled (gpuext's contexts have "
		       "one fixed layout)\n", core, core == 1 ? "" : "s");
	if (!obj->map_cnt)
		return;
	printf("\nmaps:\n  %-20s %-13s %8s %10s %11s %s\n", "NAME", "TYPE", "KEY", "VALUE",
	       "MAX_ENTRIES", "FLAGS");
	for (size_t i = 0; i < obj->map_cnt; i++) {
		const struct map_def *d = &obj->maps[i].def;
		printf("  %-20s %-13s %8u %10u %11u 0x%x\n", d->name, cli_map_type_name(d->type),
		       d->key_size, d->value_size, d->max_entries, d->flags);
	}
}

static void prog_show_json(const struct object *obj)
{
	printf("{\"file\":");
	cli_json_str(stdout, obj->name);
	printf(",\"license\":");
	cli_json_str(stdout, obj->license);
	printf(",\"programs\":[");
	for (size_t i = 0; i < obj->prog_cnt; i++) {
		const struct prog *p = obj->progs[i];
		printf("%s{\"name\":", i ? "," : "");
		cli_json_str(stdout, p->name);
		printf(",\"section\":");
		cli_json_str(stdout, p->section);
		printf(",\"type\":\"%s\",\"target\":", prog_type_name(p->type));
		if (p->target)
			cli_json_str(stdout, p->target);
		else
			printf("null");
		printf(",\"insns\":%zu}", p->insn_cnt);
	}
	printf("],\"core_relos\":%zu,\"maps\":[", btf_ext_core_relo_cnt(obj->btf));
	for (size_t i = 0; i < obj->map_cnt; i++) {
		const struct map_def *d = &obj->maps[i].def;
		printf("%s{\"name\":", i ? "," : "");
		cli_json_str(stdout, d->name);
		printf(",\"type\":\"%s\",\"key_size\":%u,\"value_size\":%u,"
		       "\"max_entries\":%u,\"flags\":%u}",
		       cli_map_type_name(d->type), d->key_size, d->value_size,
		       d->max_entries, d->flags);
	}
	printf("]}\n");
}

static const struct cli_cmd *prog_cmd_find(const char *name);

/*
 * The arguments of `prog show|dump` (argv[0]): FILE and, up to max, a
 * SECTION|NAME, into args; its one flag option (longs) sets *flag.  -1 to
 * go on, else the exit status (after --help, or an error said).
 */
static int prog_args(int argc, char **argv, const struct option *longs, int *flag,
		     const char **args, int max)
{
	const struct cli_cmd *cmd = prog_cmd_find(argv[0]);
	char name[32];
	struct cli_opts o = {.cmd = name, .longs = longs};
	int n = 0, c;

	snprintf(name, sizeof(name), "prog %s", cmd->name);
	while ((c = cli_opts_next(&o, argc, argv)) != CLI_OPT_END) {
		if (c == CLI_OPT_HELP) {
			printf("Usage: gpuext prog %s %s\n  %s\n", cmd->name, cmd->usage, cmd->summary);
			return 0;
		} else if (c == CLI_OPT_ARG) {
			if (n < max)
				args[n] = o.arg;
			n++;
		} else if (c == CLI_OPT_LONG) {
			*flag = 1;
		} else {
			return 2;
		}
	}
	if (n < 1 || n > max) {
		cli_error("usage: gpuext prog %s %s", cmd->name, cmd->usage);
		return 2;
	}
	return -1;
}

static int do_prog_show(int argc, char **argv)
{
	const char *file = NULL;
	struct object *obj;
	int rc = prog_args(argc, argv, NULL, NULL, &file, 1);

	if (rc >= 0)
		return rc;
	if (cli_open_object(file, &obj))
		return 1;
	if (cli_json)
		prog_show_json(obj);
	else
		prog_show_text(obj);
	object_free(obj);
	return 0;
}

/* One program: source lines from BTF before the instructions they cover. */
static void prog_dump_one(const struct object *obj, const struct prog *p)
{
	char buf[DISASM_BUF_SIZE];
	size_t line = 0;
	const struct prog_line *shown = NULL;

	printf("%s (section %s, %zu insns):\n", p->name, p->section, p->insn_cnt);
	for (size_t i = 0; i < p->insn_cnt;) {
		for (; line < p->line_cnt && p->lines[line].insn <= i; line++) {
			const struct prog_line *l = &p->lines[line];
			/* clang gives one record per column: show each line once. */
			if (l->insn != i || !l->text || !l->line ||
			    (shown && shown->line == l->line && !strcmp(shown->file, l->file)))
				continue;
			printf("; %s  [%s:%u]\n", l->text, l->file, l->line);
			shown = l;
		}
		const struct isa_insn *in = &p->insns[i];
		size_t n = disasm_insn(p->insns, p->insn_cnt, i, 0, buf, sizeof(buf));
		printf("%6zu: %s", i, buf);
		if (in->code == ISA_OPC_LD_IMM64 &&
		    (in->src == ISA_PSEUDO_MAP_FD || in->src == ISA_PSEUDO_MAP_VALUE) &&
		    (size_t)in->imm < obj->map_cnt)
			printf("\t; %s", obj->maps[in->imm].def.name);
		printf("\n");
		i += n;
	}
}

/*
 * The JIT's machine code for p.  Map references are compiled to the
 * addresses of the maps, so the maps are created first; compiling runs
 * nothing, so the program need not be verified to be shown.
 */
static int prog_dump_jited(struct object *obj, struct prog *p)
{
	struct err e = {{0}};
	size_t len;

	if ((p->map_cnt && object_create_maps(obj, &e)) || jit_compile(p, NULL, &e)) {
		cli_error("%s", e.msg);
		return 1;
	}
	printf("%s (section %s, %zu insns) JIT-compiled:\n", p->name, p->section, p->insn_cnt);
	const uint8_t *code = jit_code(p, &len);
	cli_jit_dump(stdout, code, len);
	return 0;
}

static int do_prog_dump(int argc, char **argv)
{
	static const struct option longs[] = {{"jited", no_argument, NULL, CLI_OPT_LONG}, {0}};
	const char *args[2] = {NULL, NULL};
	struct object *obj;
	int found = 0, jited = 0, rc = prog_args(argc, argv, longs, &jited, args, 2);

	if (rc >= 0)
		return rc;
	rc = 0;
	if (cli_open_object(args[0], &obj))
		return 1;
	for (size_t i = 0; i < obj->prog_cnt && !rc; i++) {
		struct prog *p = obj->progs[i];
		if (args[1] && strcmp(p->name, args[1]) && strcmp(p->section, args[1]))
			continue;
		if (found++)
			printf("\n");
		if (jited)
			rc = prog_dump_jited(obj, p);
		else
			prog_dump_one(obj, p);
	}
	if (!found)
		cli_error("%s: no program named or in section '%s'", args[0], args[1]);
	object_free(obj);
	return found && !rc ? 0 : 1;
}

static const struct cli_cmd prog_cmds[] = {
	{"show", do_prog_show, "FILE",
	 "programs (name, section, type, target, instructions), maps, license"},
	{"dump", do_prog_dump, "[--jited] FILE [SECTION|NAME]",
	 "disassembly with the source lines from BTF; --jited: the JIT's x86-64 code "
	 "(bytes, and objdump's disassembly if installed)"},
	{"verify", do_verify, "[--gpu] [--log-all] FILE [SECTION|NAME]...",
	 "run the verifier (same as `gpuext verify`)"},
};

static void prog_usage(FILE *out)
{
	fprintf(out, "Usage: gpuext prog COMMAND FILE ...\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(prog_cmds) / sizeof(prog_cmds[0]); i++)
		fprintf(out, "  prog %s %s\n      %s\n", prog_cmds[i].name, prog_cmds[i].usage,
			prog_cmds[i].summary);
}

static const struct cli_cmd *prog_cmd_find(const char *name)
{
	for (size_t i = 0; i < sizeof(prog_cmds) / sizeof(prog_cmds[0]); i++)
		if (!strcmp(name, prog_cmds[i].name))
			return &prog_cmds[i];
	return NULL;
}

int do_prog(int argc, char **argv)
{
	/* prog's own options, up to the subcommand: the rest are the subcommand's */
	struct cli_opts o = {.cmd = "prog", .keep_rest = 1, .stop_at_positional = 1};
	int c;

	while ((c = cli_opts_next(&o, argc, argv)) != CLI_OPT_END) {
		if (c != CLI_OPT_HELP)
			return 2;
		prog_usage(stdout);
		return 0;
	}
	if (o.next >= argc) {
		prog_usage(stderr);
		return 2;
	}
	const struct cli_cmd *cmd = prog_cmd_find(argv[o.next]);
	if (cmd)
		return cmd->fn(argc - o.next, argv + o.next);
	cli_error("unknown prog command '%s' (see gpuext prog --help)", argv[o.next]);
	return 2;
}
