/* SPDX-License-Identifier: MIT */
/*
 * conformance.c - `gpuext conformance [--backend NAME] [--verbose] PATH...`:
 * run ISA conformance cases (shared/conformance format) on a backend.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bpf/conformance.h"
#include "bpf/interp.h"
#include "cli.h"
#include "ptx/ptx_rt.h"

/* The JIT as a conformance backend: prog_run compiles the case and runs it. */
static int conf_jit_run(const struct prog *p, const struct prog_run_opts *opts, uint64_t *r0,
			struct err *e)
{
	return prog_run(p, PROG_BACKEND_JIT, opts, r0, e);
}

/* The backends a case can run on (the first is the default): add a row for
 * a new one. */
static const struct conf_backend conf_backends[] = {
	{"jit", conf_jit_run, 1},
	{"interp", interp_run, 1},
	{"ptx", ptx_rt_conformance_run, 1}, /* needs a GPU */
};

static const char conformance_usage[] =
	"Usage: gpuext conformance [--backend NAME] [--verbose] DIR|FILE...\n\n"
	"Run eBPF ISA conformance cases (NAME.txt files: -- asm, -- program, -- mem,\n"
	"-- result) on a backend and compare r0.  Prints one line per failure and,\n"
	"last, 'N passed, M failed[, K skipped]'.  Exits 1 if any case fails.\n"
	"--verbose also prints passing and skipped cases.\n\nBackends:";

struct conf_totals {
	size_t passed, failed, skipped;
};

static void conf_run_file(const char *path, const struct conf_backend *b, int verbose,
			  struct conf_totals *t)
{
	struct conf_case c;
	struct err e = {{0}};
	char why[600];

	if (conf_case_load(path, &c, &e)) {
		printf("FAIL %s\n", e.msg);
		t->failed++;
		return;
	}
	switch (conf_case_run(&c, b, why, sizeof(why))) {
	case CONF_PASS:
		t->passed++;
		if (verbose)
			printf("PASS %s\n", c.name);
		break;
	case CONF_SKIP:
		t->skipped++;
		if (verbose)
			printf("SKIP %s: %s\n", c.name, why);
		break;
	case CONF_FAIL:
		t->failed++;
		printf("FAIL %s: %s\n", c.name, why);
		break;
	}
	conf_case_free(&c);
}

static int conf_cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every NAME.txt in dir, in name order.  -1 if dir cannot be read. */
static int conf_run_dir(const char *dir, const struct conf_backend *b, int verbose,
			struct conf_totals *t)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t cnt = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (n < 5 || strcmp(de->d_name + n - 4, ".txt"))
			continue;
		char **nn = realloc(names, (cnt + 1) * sizeof(*names));
		if (!nn || !(nn[cnt] = strdup(de->d_name))) {
			names = nn ? nn : names;
			break;
		}
		names = nn;
		cnt++;
	}
	closedir(d);
	qsort(names, cnt, sizeof(*names), conf_cmp_names);
	for (size_t i = 0; i < cnt; i++) {
		char *path;
		if (asprintf(&path, "%s/%s", dir, names[i]) >= 0) {
			conf_run_file(path, b, verbose, t);
			free(path);
		}
		free(names[i]);
	}
	free(names);
	return 0;
}

int do_conformance(int argc, char **argv)
{
	const struct conf_backend *b = &conf_backends[0];
	struct conf_totals t = {0};
	int verbose = cli_verbose, npaths = 0, c;
	size_t nb = sizeof(conf_backends) / sizeof(conf_backends[0]);
	static const struct option longs[] = {
		{"backend", required_argument, NULL, 'b'},
		{"verbose", no_argument, NULL, 'v'},
		{0},
	};
	struct cli_opts o = {.cmd = "conformance", .shorts = "v", .longs = longs};
	/* the paths, in order, once every option (wherever it stands) is known */
	const char **paths = calloc((size_t)argc, sizeof(*paths));

	if (!paths) {
		cli_error("conformance: out of memory");
		return 1;
	}
	while ((c = cli_opts_next(&o, argc, argv)) != CLI_OPT_END) {
		if (c == CLI_OPT_HELP) {
			fputs(conformance_usage, stdout);
			for (size_t k = 0; k < nb; k++)
				printf(" %s", conf_backends[k].name);
			printf("\n");
			free(paths);
			return 0;
		} else if (c == 'b') {
			b = NULL;
			for (size_t k = 0; k < nb && !b; k++)
				if (!strcmp(conf_backends[k].name, o.arg))
					b = &conf_backends[k];
			if (!b) {
				cli_error("conformance: unknown backend '%s' (see gpuext conformance --help)",
					  o.arg);
				free(paths);
				return 2;
			}
		} else if (c == 'v') {
			verbose = 1;
		} else if (c == CLI_OPT_ARG) {
			paths[npaths++] = o.arg;
		} else {
			free(paths);
			return 2;
		}
	}
	if (!npaths) {
		cli_error("conformance: no case folder or file given (see gpuext conformance --help)");
		free(paths);
		return 2;
	}
	for (int i = 0; i < npaths; i++) {
		struct stat st;
		if (stat(paths[i], &st)) {
			printf("FAIL %s: %s\n", paths[i], strerror(errno));
			t.failed++;
		} else if (S_ISDIR(st.st_mode)) {
			if (conf_run_dir(paths[i], b, verbose, &t)) {
				printf("FAIL %s: %s\n", paths[i], strerror(errno));
				t.failed++;
			}
		} else {
			conf_run_file(paths[i], b, verbose, &t);
		}
	}
	free(paths);
	if (t.skipped)
		printf("%zu passed, %zu failed, %zu skipped\n", t.passed, t.failed, t.skipped);
	else
		printf("%zu passed, %zu failed\n", t.passed, t.failed);
	return t.failed ? 1 : 0;
}
