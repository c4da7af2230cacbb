/* SPDX-License-Identifier: MIT */
/*
 * cli.h - the `gpuext` command: one file per noun (prog.c, conformance.c,
 * ...), each handler `do_NOUN(argc, argv)` with argv[0] the noun itself.
 * Handlers return the process exit status (0 ok, 1 failure, 2 usage).
 */
#ifndef GPUEXT_CLI_H
#define GPUEXT_CLI_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

struct cli_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;   /* one line: arguments */
	const char *summary; /* one line: what it does */
};

/* Print "gpuext: <message>" to stderr (and in JSON mode, as an object). */
__attribute__((format(printf, 1, 2))) void cli_error(const char *fmt, ...);

/*
 * A command's options, parsed with getopt_long (options.c):
 *
 *	struct cli_opts o = {.cmd = "asm", .shorts = "o:", .longs = asm_longs};
 *	while ((c = cli_opts_next(&o, argc, argv)) != CLI_OPT_END)
 *		switch (c) { case 'o': out = o.arg; break; case CLI_OPT_ARG: ...
 *
 * argv[0] is the command itself.  Every command has -h/--help
 * (CLI_OPT_HELP); long options also take --opt=value and unique prefixes.
 * Options and positional arguments (CLI_OPT_ARG, o.arg) come in the order
 * given, so options may follow positional arguments; `--` ends the options:
 * what follows is positional, or with keep_rest left for the caller at
 * argv[o.next] (`gpuext run ... -- CMD ARGS`).  A bad option, or one
 * without its value, is said on stderr naming it and `gpuext CMD --help`:
 * CLI_OPT_USAGE, to return 2.  An option's value is o.arg.
 */
enum {
	CLI_OPT_END = -1,   /* no more arguments (o.next: the first unparsed) */
	CLI_OPT_HELP = -2,  /* -h or --help */
	CLI_OPT_USAGE = -3, /* an error was said: exit status 2 */
	CLI_OPT_ARG = 1,    /* a positional argument */
	CLI_OPT_LONG = 0x100, /* first value for long options without a short form */
};
struct cli_opts {
	const char *cmd;             /* "run", "prog dump": for messages (NULL: gpuext's own) */
	const char *shorts;          /* getopt's short options ("o:p:"), or NULL */
	const struct option *longs;  /* {0}-terminated, or NULL */
	int keep_rest;               /* `--` ends the parse, the rest is the caller's */
	int stop_at_positional;      /* the first positional argument ends the parse */
	const char *arg;             /* the option's value, or the positional argument */
	char name[40];               /* the option as "--long" or "-s", for messages */
	int dashdash;                /* the parse ended at `--` */
	int next;                    /* after CLI_OPT_END: argv index not parsed */
	/* private */
	int started, rest;
	char shortbuf[64];
	struct option longbuf[32];
};
int cli_opts_next(struct cli_opts *o, int argc, char **argv);

/* A positional argument of a `CMD FILE SECTION` command: FILE, then
 * SECTION.  0, or 2 (usage) after saying there are too many. */
int cli_take_file_section(const char *cmd, const char *arg, const char **path,
			  const char **section);

/* Global options, parsed by main before the noun. */
extern int cli_json;    /* -j/--json: machine-readable output */
extern int cli_verbose; /* -v */

/* Read a whole file ("-": stdin), NUL-terminated; NULL with errno set. */
char *cli_read_file(const char *path, size_t *len);

/* Print JIT machine code: raw bytes, and objdump's disassembly if installed. */
void cli_jit_dump(FILE *out, const uint8_t *code, size_t len);

/* Handlers (one per file). */
int do_asm(int argc, char **argv);
int do_disasm(int argc, char **argv);
int do_conformance(int argc, char **argv);
int do_ptx(int argc, char **argv);
int do_run_gpu(int argc, char **argv);
int do_verify(int argc, char **argv); /* verify.c; also `prog verify` */
int do_prog(int argc, char **argv);      /* prog.c */
int do_test_run(int argc, char **argv);  /* test_run.c */
int do_run(int argc, char **argv);       /* run.c */
int do_tools(int argc, char **argv);     /* tools.c */
int do_sim(int argc, char **argv);       /* sim.c */
int do_attach(int argc, char **argv);    /* attach.c */

/* Shared by the handlers that read objects (prog.c). */
struct object;
/* object_open() or print its error: 0 or exit status 1. */
int cli_open_object(const char *path, struct object **obj);
const char *cli_map_type_name(unsigned type);
/* Write s as a JSON string literal. */
void cli_json_str(FILE *out, const char *s);
/* BYTES with an optional K/M/G/T suffix (powers of 1024) into *out; 2 after
 * an error naming cmd and opt (bytes.c). */
int cli_parse_bytes(const char *cmd, const char *opt, const char *s, uint64_t *out);

#endif /* GPUEXT_CLI_H */
