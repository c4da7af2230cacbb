/* SPDX-License-Identifier: MIT */
#include "ptx_corpus.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/asm.h"
#include "bpf/prog.h"
#include "ptx/ptx_emit.h"
#include "ptx/ptx_wrap.h"
#include "testutil.h"

static int ptx_corpus_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void ptx_corpus_scan(const char *dir, char ***paths, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 5 || strcmp(de->d_name + l - 4, ".ptx"))
			continue;
		char **p = realloc(*paths, (*n + 1) * sizeof(char *));
		if (!p)
			break;
		*paths = p;
		if (asprintf(&p[*n], "%s/%s", dir, de->d_name) < 0)
			break;
		(*n)++;
	}
	closedir(d);
}

size_t ptx_corpus_list(char ***paths)
{
	size_t n = 0;

	*paths = NULL;
	ptx_corpus_scan(PTX_CORPUS_DIR, paths, &n);
	ptx_corpus_scan("build/examples/ref", paths, &n);
	if (getenv("GPUEXT_PTX_CORPUS_EXTRA"))
		ptx_corpus_scan(getenv("GPUEXT_PTX_CORPUS_EXTRA"), paths, &n);
	if (n)
		qsort(*paths, n, sizeof(char *), ptx_corpus_cmp);
	return n;
}

void ptx_corpus_free_list(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

int ptx_corpus_ptxas(const char *text, size_t len, const char *arch, char **log)
{
	char in[] = "/tmp/gpuext-inject-XXXXXX";
	int fd, st = -1;
	char cmd[512];

	*log = NULL;
	if (access(PTX_CORPUS_PTXAS, X_OK))
		return -1;
	if ((fd = mkstemp(in)) < 0)
		return -1;
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		unlink(in);
		return -1;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), PTX_CORPUS_PTXAS " -arch=%s %s -o /dev/null", arch, in);
	*log = test_run_cmd(cmd, &st);
	unlink(in);
	return st;
}

/* Programs of the probes: r1 is the memory context for mem, 0 otherwise. */
static const char *const ptx_corpus_progs[3][2] = {
	{"gx_ent", "call 501\nlddw %r1, map_value[0]+0\nlock add [%r1+0], %r0\n"
		   "mov %r2, 1\nlock add [%r1+8], %r2\nmov %r0, 0\nexit\n"},
	{"gx_ext", "call 501\nlddw %r1, map_value[0]+16\nlock add [%r1+0], %r0\n"
		   "mov %r2, 1\nlock add [%r1+8], %r2\nmov %r0, 0\nexit\n"},
	{"gx_mem", "mov %r6, %r1\ncall 501\nmov %r7, %r0\nlddw %r1, map_value[0]+32\n"
		   "lock add [%r1+0], %r7\nldxw %r2, [%r6+8]\nmul %r2, %r7\n"
		   "lock add [%r1+8], %r2\nmov %r2, 1\nlock add [%r1+16], %r2\n"
		   "mov %r0, 0\nexit\n"},
};

char *ptx_corpus_probes_mem(const char *target, const struct ptx_map_ref *refs,
			    char **mem_code)
{
	static const enum ptx_probe_kind kinds[3] = {PTX_PROBE_ENTRY, PTX_PROBE_EXIT,
						     PTX_PROBE_MEM};
	struct ptx_buf b = {0}, site = {0};
	struct map *maps[1] = {NULL};
	struct ptx_target t;

	if (ptx_target_parse(target, &t, NULL))
		return NULL;
	ptx_emit_runtime(&b);
	for (int i = 0; i < 3; i++) {
		struct isa_insn *insns;
		size_t cnt;
		struct err e = {{0}};
		if (asm_assemble(ptx_corpus_progs[i][1], &insns, &cnt, &e)) {
			ptx_buf_free(&b);
			ptx_buf_free(&site);
			return NULL;
		}
		struct prog p = {.name = (char *)ptx_corpus_progs[i][0], .insns = insns,
				 .insn_cnt = cnt, .maps = maps, .map_cnt = 1};
		struct ptx_emit_opts o = {.symbol = ptx_corpus_progs[i][0], .maps = refs};
		char sym[128];
		int err = mem_code && kinds[i] == PTX_PROBE_MEM
				  ? ptx_emit_mem_probe(&b, &b, &site, &p, &o, sym, NULL, &e)
				  : ptx_emit_prog(&b, &p, &o, NULL, &e);
		free(insns);
		if (err) {
			fprintf(stderr, "ptx_emit_prog: %s\n", e.msg);
			ptx_buf_free(&b);
			ptx_buf_free(&site);
			return NULL;
		}
		if (!(mem_code && kinds[i] == PTX_PROBE_MEM))
			ptx_emit_probe(&b, ptx_corpus_progs[i][0], kinds[i], PTX_MODE_WARP);
	}
	if (mem_code)
		*mem_code = ptx_buf_take(&site, NULL);
	return ptx_buf_take(&b, NULL);
}

char *ptx_corpus_probes(const char *target, const struct ptx_map_ref *refs)
{
	return ptx_corpus_probes_mem(target, refs, NULL);
}

/* Does word w (n chars) start with p followed by '.' or its end? */
static int ptx_corpus_op_is(const char *w, size_t n, const char *p)
{
	size_t l = strlen(p);
	return n >= l && !memcmp(w, p, l) && (n == l || w[l] == '.');
}

void ptx_corpus_count(const char *text, const char *kernel, size_t *mem, size_t *exits)
{
	char head[256];
	const char *s;
	int depth = 0, opened = 0;

	*mem = *exits = 0;
	snprintf(head, sizeof(head), ".entry %s(", kernel);
	if (!(s = strstr(text, head)))
		return;
	/* nvcc writes one statement per line: the body ends where the braces
	 * of the lines (comments left out) balance */
	for (const char *line = s; line && (!opened || depth > 0); line = strchr(line + 1, '\n')) {
		size_t n = strcspn(line + 1, "\n");
		const char *cmt = strstr(line + 1, "//");
		if (cmt && cmt < line + 1 + n)
			n = (size_t)(cmt - line - 1);
		for (size_t i = 0; i < n; i++) {
			depth += line[1 + i] == '{';
			depth -= line[1 + i] == '}';
			opened |= line[1 + i] == '{';
		}
		if (line == s)
			continue;
		const char *w = line + 1;
		while (*w == ' ' || *w == '\t' || *w == '{')
			w++;
		if (*w == '@') {
			while (*w && *w != ' ' && *w != '\t')
				w++;
			while (*w == ' ' || *w == '\t')
				w++;
		}
		n = strcspn(w, " \t;\n");
		if (ptx_corpus_op_is(w, n, "ret") || ptx_corpus_op_is(w, n, "exit")) {
			(*exits)++;
			continue;
		}
		if (!ptx_corpus_op_is(w, n, "ld") && !ptx_corpus_op_is(w, n, "ldu") &&
		    !ptx_corpus_op_is(w, n, "st") && !ptx_corpus_op_is(w, n, "atom") &&
		    !ptx_corpus_op_is(w, n, "red"))
			continue;
		char op[128];
		snprintf(op, sizeof(op), "%.*s.", (int)(n < 120 ? n : 120), w);
		if (strstr(op, ".shared") || strstr(op, ".local.") || strstr(op, ".param") ||
		    strstr(op, ".const.") || strstr(op, ".async"))
			continue;
		(*mem)++;
	}
}
