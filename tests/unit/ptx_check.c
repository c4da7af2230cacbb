/* SPDX-License-Identifier: MIT */
#include "ptx_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/ptx_parse.h"
#include "ptx_corpus.h"
#include "testutil.h"

void ptx_corpus_ptxas_ok(const char *text, const char *arch, const char *what,
			 const char *dump)
{
	char *log, path[256];
	int st = ptx_corpus_ptxas(text, strlen(text), arch, &log);

	if (st < 0)
		skip();
	if (st) {
		snprintf(path, sizeof(path), "build/%s", dump);
		FILE *f = fopen(path, "w");
		if (f) {
			fputs(text, f);
			fclose(f);
		}
		fail_msg("%s: ptxas -arch=%s rejected it (%s):\n%.3000s", what, arch, path, log);
	}
	free(log);
}

struct ptx_module *ptx_check_parse(const char *path, char **text)
{
	struct ptx_module *m = NULL;
	struct err e = {{0}};
	size_t len;

	*text = test_read_file(path, &len);
	if (!*text)
		fail_msg("%s: cannot read", path);
	if (ptx_parse(*text, len, &m, &e))
		fail_msg("%s: %s", path, e.msg);
	return m;
}
