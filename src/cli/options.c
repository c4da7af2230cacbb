/* SPDX-License-Identifier: MIT */
/*
 * options.c - every command's options through libc's getopt_long, with the
 * CLI's conventions in one place (cli.h, struct cli_opts): -h/--help for
 * every command, long options also as --opt=value, options and positional
 * arguments in any order (in order: getopt's "-" mode, nothing permuted),
 * `--` ends the options, and errors that name the bad option and point to
 * `gpuext CMD --help`.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* The help option every command has, besides its own. */
static const struct option cli_opts_help = {"help", no_argument, NULL, 'h'};

static int cli_opts_setup(struct cli_opts *o)
{
	size_t n = 0;
	for (const struct option *l = o->longs; l && l->name; l++) {
		if (n + 2 > sizeof(o->longbuf) / sizeof(o->longbuf[0])) {
			cli_error("%s: too many options (an internal limit)", o->cmd ? o->cmd : "gpuext");
			return CLI_OPT_USAGE;
		}
		o->longbuf[n++] = *l;
	}
	o->longbuf[n++] = cli_opts_help;
	memset(&o->longbuf[n], 0, sizeof(o->longbuf[n]));
	/* "-": positional arguments are returned in order; ":": a missing
	 * value is reported as ':', not printed by getopt */
	int len = snprintf(o->shortbuf, sizeof(o->shortbuf), "%s:h%s",
			   o->stop_at_positional ? "+" : "-", o->shorts ? o->shorts : "");
	if (len < 0 || (size_t)len >= sizeof(o->shortbuf)) {
		cli_error("%s: too many options (an internal limit)", o->cmd ? o->cmd : "gpuext");
		return CLI_OPT_USAGE;
	}
	optind = 0; /* glibc: start over, also after an earlier command's parse */
	opterr = 0;
	o->started = 1;
	return 0;
}

/* The long option arg ("--name" or "--name=value") names, exactly or as a
 * unique prefix (*hits: how many it is a prefix of), or NULL. */
static const struct option *cli_opts_lookup(const struct cli_opts *o, const char *arg, int *hits)
{
	size_t n = strcspn(arg + 2, "=");
	const struct option *found = NULL;

	*hits = 0;
	for (const struct option *l = o->longbuf; l->name; l++) {
		if (strncmp(l->name, arg + 2, n))
			continue;
		if (strlen(l->name) == n) {
			*hits = 1;
			return l;
		}
		found = l;
		++*hits;
	}
	return *hits == 1 ? found : NULL;
}

/* getopt_long refused argv[at] (c: '?' or ':'): say why; CLI_OPT_USAGE. */
static int cli_opts_error(const struct cli_opts *o, int c, char *const *argv, int at)
{
	const char *arg = argv[at], *cmd = o->cmd ? o->cmd : "";
	char what[128];
	int hits;

	if (strncmp(arg, "--", 2)) { /* a short option, maybe in a cluster (-jo) */
		snprintf(what, sizeof(what), c == ':' ? "-%c needs a value" : "unknown option '-%c'",
			 optopt);
	} else {
		const struct option *l = cli_opts_lookup(o, arg, &hits);
		if (l && c == ':')
			snprintf(what, sizeof(what), "--%s needs a value", l->name);
		else if (l) /* known, so the refusal was its value */
			snprintf(what, sizeof(what), "--%s takes no value", l->name);
		else
			snprintf(what, sizeof(what), "%s option '%.*s'", hits ? "ambiguous" : "unknown",
				 (int)strcspn(arg, "="), arg);
	}
	cli_error("%s%s%s (see gpuext%s%s --help)", cmd, *cmd ? ": " : "", what, *cmd ? " " : "",
		  cmd);
	return CLI_OPT_USAGE;
}

int cli_opts_next(struct cli_opts *o, int argc, char **argv)
{
	if (!o->started) {
		int rc = cli_opts_setup(o);
		if (rc)
			return rc;
	}
	o->arg = NULL;
	o->name[0] = 0;
	if (o->rest) { /* after `--`: the rest are positional */
		if (o->rest >= argc)
			return CLI_OPT_END;
		o->arg = argv[o->rest++];
		return CLI_OPT_ARG;
	}
	int at = optind ? optind : 1, li = -1;
	int c = getopt_long(argc, argv, o->shortbuf, o->longbuf, &li);
	switch (c) {
	case -1:
		/* stopped at `--` (optind just past it) or at the end, or
		 * (stop_at_positional) at the first positional argument */
		o->next = optind;
		o->dashdash = optind == at + 1 && at < argc && !strcmp(argv[at], "--");
		if (!o->dashdash || o->keep_rest)
			return CLI_OPT_END;
		o->rest = optind;
		return cli_opts_next(o, argc, argv);
	case 1:
		o->arg = optarg;
		return CLI_OPT_ARG;
	case 'h':
		return CLI_OPT_HELP;
	case '?':
	case ':':
		return cli_opts_error(o, c, argv, at);
	default:
		o->arg = optarg;
		if (li >= 0)
			snprintf(o->name, sizeof(o->name), "--%s", o->longbuf[li].name);
		else
			snprintf(o->name, sizeof(o->name), "-%c", c);
		return c;
	}
}
