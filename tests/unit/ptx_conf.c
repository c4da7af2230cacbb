/* SPDX-License-Identifier: MIT */
#include "ptx_conf.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* Append the hex bytes of one line to *buf. */
static int ptx_conf_hex_line(const char *line, uint8_t **buf, size_t *len)
{
	for (const char *p = line; *p && *p != '\n';) {
		unsigned v;
		int n;
		if (*p == ' ' || *p == '\t') {
			p++;
			continue;
		}
		if (sscanf(p, "%2x%n", &v, &n) != 1)
			return -1;
		uint8_t *nb = realloc(*buf, *len + 1);
		if (!nb)
			return -1;
		*buf = nb;
		(*buf)[(*len)++] = (uint8_t)v;
		p += n;
	}
	return 0;
}

static int ptx_conf_parse(const char *path, struct ptx_conf_case *c)
{
	char *text = test_read_file(path, NULL);
	enum { NONE, PROGRAM, MEM, RESULT } sec = NONE;
	uint8_t *prog = NULL;
	size_t prog_len = 0;
	int err = 0;

	if (!text)
		return -1;
	for (char *line = strtok(text, "\n"); line && !err; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "-- ", 3)) {
			sec = !strcmp(line + 3, "program") ? PROGRAM
			      : !strcmp(line + 3, "mem")   ? MEM
			      : !strcmp(line + 3, "result") ? RESULT
							    : NONE;
			continue;
		}
		if (line[0] == '#')
			continue;
		if (sec == PROGRAM)
			err = ptx_conf_hex_line(line, &prog, &prog_len);
		else if (sec == MEM)
			err = ptx_conf_hex_line(line, &c->mem, &c->mem_len);
		else if (sec == RESULT)
			c->result = strtoull(line, NULL, 0);
	}
	free(text);
	if (err || prog_len == 0 || prog_len % 8) {
		free(prog);
		return -1;
	}
	c->insns = (struct isa_insn *)prog;
	c->insn_cnt = prog_len / 8;
	return 0;
}

static int cmp_case(const void *a, const void *b)
{
	return strcmp(((const struct ptx_conf_case *)a)->name,
		      ((const struct ptx_conf_case *)b)->name);
}

int ptx_conf_load_all(const char *dir, struct ptx_conf_case **out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct ptx_conf_case *cases = NULL;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char path[512];
		if (l < 5 || strcmp(de->d_name + l - 4, ".txt") || l >= sizeof(cases->name))
			continue;
		struct ptx_conf_case *nc = realloc(cases, (n + 1) * sizeof(*cases));
		if (!nc)
			break;
		cases = nc;
		memset(&cases[n], 0, sizeof(cases[n]));
		memcpy(cases[n].name, de->d_name, l - 4);
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (ptx_conf_parse(path, &cases[n]) == 0)
			n++;
	}
	closedir(d);
	qsort(cases, n, sizeof(*cases), cmp_case);
	*out = cases;
	return n;
}

void ptx_conf_free_all(struct ptx_conf_case *cases, int n)
{
	for (int i = 0; i < n; i++) {
		free(cases[i].insns);
		free(cases[i].mem);
	}
	free(cases);
}
