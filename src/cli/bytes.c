/* SPDX-License-Identifier: MIT */
/*
 * bytes.c - sizes on the command line (`sim --size 4G`, `run --mem-budget 2G`).
 */
#include <errno.h>
#include <stdlib.h>

#include "cli.h"

/* BYTES with an optional K/M/G/T suffix (powers of 1024). */
int cli_parse_bytes(const char *cmd, const char *opt, const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	double mult = 1;

	switch (*end) {
	case 'k': case 'K': mult = 1024.0; end++; break;
	case 'm': case 'M': mult = 1048576.0; end++; break;
	case 'g': case 'G': mult = 1073741824.0; end++; break;
	case 't': case 'T': mult = 1099511627776.0; end++; break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (errno || end == s || *end || !(v > 0) || v * mult > 1.8e19) {
		cli_error("%s: %s: '%s' is not a size in bytes (e.g. 512M, 2G)", cmd, opt, s);
		return 2;
	}
	*out = (uint64_t)(v * mult);
	return 0;
}
