/* SPDX-License-Identifier: MIT */
/*
 * main.c - `gpuext`: global options, then a noun from cli_cmds[].
 * The help text is generated from the same table.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cli_json;
int cli_verbose;

static int do_help(int argc, char **argv);

static const struct cli_cmd cli_cmds[] = {
	{"help", do_help, "", "this text"},
	{"asm", do_asm, "[-o OUT] FILE", "assemble eBPF text into bytecode"},
	{"disasm", do_disasm, "FILE", "disassemble raw eBPF bytecode"},
	{"conformance", do_conformance, "[--backend NAME] [--verbose] DIR|FILE...",
	 "run ISA conformance cases on a backend"},
	{"ptx", do_ptx, "FILE SECTION [--target sm_XX] [--mode warp|thread]",
	 "print the PTX a program becomes"},
	{"run-gpu", do_run_gpu, "FILE SECTION [--data FILE]",
	 "run a program once on the GPU and print r0"},
	{"verify", do_verify, "[--gpu] [--log-all] FILE [SECTION|NAME]...",
	 "verify programs and print OK or the error, with statistics"},
	{"prog", do_prog, "show|dump|verify FILE [SECTION|NAME]",
	 "list an object's programs and maps, or disassemble with source lines"},
	{"run", do_run, "[--tool NAME | FILE.bpf.o] [OPTIONS] -- CMD [ARGS]",
	 "run CMD with the agent preloaded: device and host probes, CUPTI, memory and "
	 "scheduling policies, events, maps (options: gpuext run --help)"},
	{"tools", do_tools, "", "list the shipped tools (gpuext run --tool NAME)"},
	{"attach", do_attach, "[-p PID] FILE.bpf.o [--duration S] [--json] [-o FILE]",
	 "attach an object's uprobes to a running process through kernel uprobes"},
	{"test-run", do_test_run, "FILE SECTION|NAME [--data FILE] [--repeat N] [--backend B]",
	 "run a program on given data; print r0 and the maps"},
	{"sim", do_sim,
	 "(--trace FILE | --gen PATTERN) (--budget B | --oversub X) [--policy P]... [--json]",
	 "simulate unified memory under a budget with memory policies"},
};

void cli_error(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (cli_json) {
		fputs("{\"error\":", stdout);
		cli_json_str(stdout, msg);
		fputs("}\n", stdout);
	}
	fprintf(stderr, "gpuext: %s\n", msg);
}

int cli_take_file_section(const char *cmd, const char *arg, const char **path,
			  const char **section)
{
	if (!*path) {
		*path = arg;
	} else if (!*section) {
		*section = arg;
	} else {
		cli_error("%s: too many arguments (see gpuext %s --help)", cmd, cmd);
		return 2;
	}
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: gpuext [-j|--json] [-v] COMMAND [ARGS]\n\n"
		     "eBPF for the GPU software stack.\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(cli_cmds) / sizeof(cli_cmds[0]); i++)
		fprintf(out, "  %-12s %s\n  %-12s   %s %s\n", cli_cmds[i].name,
			cli_cmds[i].summary, "", cli_cmds[i].name, cli_cmds[i].usage);
	fprintf(out, "\n`gpuext COMMAND --help` describes each command.  Long options take\n"
		     "--opt=value too; options may follow arguments; `--` ends them.\n");
}

static int do_help(int argc, char **argv)
{
	usage(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	enum { OPT_VERSION = CLI_OPT_LONG };
	static const struct option longs[] = {
		{"json", no_argument, NULL, 'j'},
		{"verbose", no_argument, NULL, 'v'},
		{"version", no_argument, NULL, OPT_VERSION},
		{0},
	};
	/* options up to the command; the command's own are its handler's */
	struct cli_opts o = {.shorts = "jv", .longs = longs,
			     .keep_rest = 1, .stop_at_positional = 1};
	int c;

	while ((c = cli_opts_next(&o, argc, argv)) != CLI_OPT_END) {
		switch (c) {
		case 'j':
			cli_json = 1;
			break;
		case 'v':
			cli_verbose = 1;
			break;
		case CLI_OPT_HELP:
			usage(stdout);
			return 0;
		case OPT_VERSION:
			puts("gpuext 0.1.0");
			return 0;
		default:
			return 2;
		}
	}
	int i = o.next;
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	for (size_t k = 0; k < sizeof(cli_cmds) / sizeof(cli_cmds[0]); k++)
		if (!strcmp(argv[i], cli_cmds[k].name))
			return cli_cmds[k].fn(argc - i, argv + i);
	cli_error("unknown command '%s' (see gpuext --help)", argv[i]);
	return 2;
}
