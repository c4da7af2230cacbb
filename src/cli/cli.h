/* SPDX-License-Identifier: MIT */
/*
 * cli.h - the `gpuext` command: one file per noun (prog.c, conformance.c,
 * ...), each handler `do_NOUN(argc, argv)` with argv[0] the noun itself.
 * Handlers return the process exit status (0 ok, 1 failure, 2 usage).
 */
#ifndef GPUEXT_CLI_H
#define GPUEXT_CLI_H

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

/* Is argv[i] one of "-h", "--help"?  Used by every handler. */
int cli_is_help(const char *arg);

/* An argument of a `CMD FILE SECTION` command that is no known option:
 * FILE, then SECTION.  0, or 2 (usage) after saying what is wrong. */
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
