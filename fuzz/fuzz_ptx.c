/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ptx - the PTX parser, printer and injector on any text.  Checked
 * beyond "no crash, no out-of-bounds access" (ASan/UBSan):
 *   - a rejection always has a message naming a line;
 *   - printed and instrumented text is a C string of the length returned;
 *   - printing is a fixed point: parse(print(x)) prints print(x) again;
 *   - for every kernel, the instrumented text (entry, exit and mem probes,
 *     called or, depending on the input size, inline with one exit block and
 *     no_variables; every other kernel with only_kernel) parses again, has
 *     the kernel, and a failure to instrument explains itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/ptx_inject.h"

static void fuzz_check_msg(const struct err *e)
{
	if (!memchr(e->msg, '\0', sizeof(e->msg)) || !e->msg[0]) {
		fprintf(stderr, "error without a message\n");
		abort();
	}
}

static struct ptx_module *fuzz_parse(const char *text, size_t len, int must)
{
	struct ptx_module *m;
	struct err e = {{0}};

	if (ptx_parse(text, len, &m, &e) == 0)
		return m;
	fuzz_check_msg(&e);
	if (!strstr(e.msg, "line ") && !strstr(e.msg, "memory")) {
		fprintf(stderr, "parse error without a line: %s\n", e.msg);
		abort();
	}
	if (must) {
		fprintf(stderr, "our own output does not parse: %s\n%s\n", e.msg, text);
		abort();
	}
	return NULL;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct ptx_module *m = fuzz_parse((const char *)data, size, 0), *m2;
	struct err e = {{0}};
	char *out, *out2;
	size_t len, len2;

	if (!m)
		return 0;
	(void)ptx_module_target(m);
	if (ptx_print(m, &out, &len, &e)) {
		fuzz_check_msg(&e);
		ptx_module_free(m);
		return 0;
	}
	if (strlen(out) != len)
		abort();
	m2 = fuzz_parse(out, len, 1);
	if (ptx_print(m2, &out2, &len2, &e) == 0) {
		if (len2 != len || memcmp(out, out2, len)) {
			fprintf(stderr, "printing is not a fixed point:\n%s\n----\n%s\n", out, out2);
			abort();
		}
		free(out2);
	}
	ptx_module_free(m2);
	free(out);
	for (size_t k = 0; k < ptx_module_kernel_count(m) && k < 8; k++) {
		const char *name = ptx_module_kernel_name(m, k);
		int inl = (int)(((k + size) >> 1) & 1); /* both ways, whatever the kernel count */
		static const char block[] = "\t{\n\t.reg .b32 %gxp_m;\n\tactivemask.b32 %gxp_m;\n\t}\n";
		struct ptx_inject_opts o = {.kernel = name, .entry_sym = "gx_e_probe",
					    .exit_sym = "gx_x_probe", .mem_sym = "gx_m_probe",
					    .entry_code = inl ? block : NULL,
					    .exit_code = inl ? block : NULL,
					    .extra = ".func gx_e_probe()\n{\n\tret;\n}\n",
					    .min_version_major = 7, .min_version_minor = 8,
					    .only_kernel = (int)(k & 1), .no_variables = inl};
		if (ptx_inject(m, &o, &out, &len, &e)) {
			fuzz_check_msg(&e);
			continue;
		}
		if (strlen(out) != len)
			abort();
		m2 = fuzz_parse(out, len, 1);
		int found = 0;
		for (size_t j = 0; j < ptx_module_kernel_count(m2); j++)
			found |= !strcmp(ptx_module_kernel_name(m2, j), name);
		if (!found) {
			fprintf(stderr, "kernel %s lost by the injector\n", name);
			abort();
		}
		ptx_module_free(m2);
		free(out);
	}
	ptx_module_free(m);
	return 0;
}
