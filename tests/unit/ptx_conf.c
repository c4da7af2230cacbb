/* SPDX-License-Identifier: MIT */
#include "ptx_conf.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_case(const void *a, const void *b)
{
	return strcmp(((const struct conf_case *)a)->name, ((const struct conf_case *)b)->name);
}

int ptx_conf_load_all(const char *dir, struct conf_case **out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct conf_case *cases = NULL;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char path[1024];
		struct err e;
		if (l < 5 || strcmp(de->d_name + l - 4, ".txt"))
			continue;
		struct conf_case *nc = realloc(cases, (n + 1) * sizeof(*cases));
		if (!nc)
			break;
		cases = nc;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (conf_case_load(path, &cases[n], &e) == 0)
			n++;
		else
			fprintf(stderr, "%s\n", e.msg);
	}
	closedir(d);
	qsort(cases, n, sizeof(*cases), cmp_case);
	*out = cases;
	return n;
}

void ptx_conf_free_all(struct conf_case *cases, int n)
{
	for (int i = 0; i < n; i++)
		conf_case_free(&cases[i]);
	free(cases);
}
