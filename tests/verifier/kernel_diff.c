/* SPDX-License-Identifier: MIT */
/*
 * kernel_diff - the verifier corpora against the Linux verifier (issue 3,
 * Must show 4).  Every case of tests/verifier/{accept,reject} is verified by
 * gpuext and loaded into the kernel (bpf(BPF_PROG_LOAD), as root) with the
 * same maps.  Every program the kernel rejects for a memory-safety reason
 * must be rejected by gpuext too; each disagreement is listed with both
 * messages.  Exit 1 if a memory-safety disagreement exists, 2 if the kernel
 * cannot load programs here (not root, no BPF).
 *
 * Program types: uprobe/uretprobe cases load as BPF_PROG_TYPE_KPROBE (the
 * same struct pt_regs); all others have no kernel counterpart and load as
 * KPROBE too, so the kernel's ctx rules and helper set differ from gpuext's
 * there: such kernel rejections are listed as "not memory safety" (ctx
 * layout, unknown helper, program-type rules), never silently dropped.
 *
 *   build/tests/verifier_kernel_diff [DIR...]
 */
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "bpf/asm.h"
#include "bpf/map.h"
#include "testutil.h"
#include "vfy_case.h"

/* Kernel messages that are about memory safety (the rest: ctx layout,
 * helpers, program type, privileges). */
static const char *const safety_reasons[] = {
	"invalid mem access", "out of bounds", "invalid stack", "invalid read from stack",
	"invalid indirect read", "min value is negative", "unbounded memory access",
	"!read_ok", "Unreleased reference", "infinite loop", "back-edge", "too large",
	"too complex", "jump out of range", "unreachable insn", "misaligned",
	"pointer arithmetic", "math between", "dereference of modified", "invalid size",
	"expected=", "type=", "R0 leaks addr", "leaks addr", "uninit", "invalid access",
	"BPF_EXIT instruction", "call stack", "combined stack", "recursive call",
	"invalid bpf_ld_imm64", "invalid func", "off=", "stack depth",
	"partial copy", "corrupted spill", "attempt to corrupt spilled", "reference has not",
	"release", "null", "value_size", "map_value", "R1 type", "R2 type", "R3 type",
	"R4 type", "R5 type", "is not a pointer", "variable", "arg#",
};
static const char *const not_safety[] = {
	"invalid bpf_context access", "unknown func", "program of this type cannot use",
	"cannot call GPL", "unsupported", "unknown opcode", "invalid BPF_LD_IMM",
	"invalid argument",
	/* a helper id Linux does not have (gpuext's: bpf_gpu_atomic_max, 513) */
	"invalid func unknown#",
	/* RFC 9669 defines division by zero; Linux rejects a constant divisor 0 */
	"div by zero",
};

/*
 * Reviewed disagreements where the kernel rejects and gpuext accepts: why
 * the program is safe under gpuext's rules.
 */
static const struct {
	const char *name, *why;
} explained[] = {
	{"null_checked_reg_zero",
	 "`jeq r0, r1` with r1 known to be 0 is a NULL check; Linux only takes `jeq r0, 0`"},
	{"ctx_const_offset_ptr",
	 "gpuext's pt_regs is plain memory (no ctx rewriting), so ctx + constant is an "
	 "ordinary pointer; Linux forbids modified ctx pointers because it rewrites ctx loads"},
	{"mapval_ptr_diff",
	 "the difference of two known offsets into one map value is a known number"},
	{"stack_spill32_bounds",
	 "a 4-byte spill read back whole keeps its u32 bounds at any 4-aligned offset; "
	 "Linux tracks narrow spills only at 8-aligned offsets"},
	{"link_sext_checked",
	 "the checked r2 is the sign-extended low half of r1 (a linked copy), so the check "
	 "bounds r1's s32 view and (r1 << 32) s>> 30 is in [0, 60]; Linux links only "
	 "plain copies"},
};

/* Kernel rejections that come from a program type Linux does not have. */
static int type_difference(const struct vcase *c, const char *log)
{
	int uprobe = c->prog_type && (!strncmp(c->prog_type, "uprobe/", 7) ||
				      !strncmp(c->prog_type, "uretprobe/", 10));
	if (uprobe)
		return 0;
	/* raw programs get r2 = size; device/CUPTI ctxs are records (variable offsets) */
	return !c->prog_type ? strstr(log, "R2 !read_ok") || strstr(log, "ctx") != NULL :
			       strstr(log, "ctx") != NULL;
}

static int is_safety(const char *log)
{
	for (size_t i = 0; i < sizeof(not_safety) / sizeof(not_safety[0]); i++)
		if (strstr(log, not_safety[i]))
			return 0;
	for (size_t i = 0; i < sizeof(safety_reasons) / sizeof(safety_reasons[0]); i++)
		if (strstr(log, safety_reasons[i]))
			return 1;
	return 1; /* unknown: counted as safety, so it is never hidden */
}

/* The kernel's reason: the last line of its log before the statistics. */
static const char *last_line(char *log)
{
	for (;;) {
		size_t n = strlen(log);
		while (n && log[n - 1] == '\n')
			log[--n] = '\0';
		char *nl = strrchr(log, '\n');
		char *line = nl ? nl + 1 : log;
		if (!nl || (strncmp(line, "processed ", 10) && strncmp(line, "verification time", 17) &&
			    strncmp(line, "stack depth", 11)))
			return line;
		*nl = '\0';
	}
}

static int kernel_load(const char *path, char *reason, size_t rlen, int *type_diff)
{
	size_t len;
	char *text = test_read_file(path, &len);
	struct vcase c;
	struct isa_insn *insns = NULL;
	size_t cnt = 0;
	int fds[VCASE_MAX_MAPS], nfd = 0, rc = -1;
	static char log[1 << 20];

	reason[0] = '\0';
	*type_diff = 0;
	if (!text || vcase_parse(text, &c)) {
		snprintf(reason, rlen, "cannot parse");
		free(text);
		return -2;
	}
	struct err e;
	if (asm_assemble(c.asm_text, &insns, &cnt, &e)) {
		snprintf(reason, rlen, "%s", e.msg);
		goto out;
	}
	if (c.maps) {
		struct map_def defs[VCASE_MAX_MAPS];
		size_t nd;
		if (vcase_map_defs(c.maps, defs, &nd, reason, rlen))
			goto out;
		for (size_t i = 0; i < nd; i++, nfd++) {
			LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = defs[i].flags);
			/* gpuext's own types have no kernel counterpart: a block-local
			 * array's values are an array's to both verifiers (the
			 * kernel knows nothing of device-only maps, a program-type rule) */
			uint32_t type = defs[i].type == MAP_TYPE_GPU_BLOCK_ARRAY ? BPF_MAP_TYPE_ARRAY
										 : defs[i].type;
			fds[nfd] = bpf_map_create(type, defs[i].name, defs[i].key_size,
						  defs[i].value_size, defs[i].max_entries, &mo);
			if (fds[nfd] < 0) {
				snprintf(reason, rlen, "map %zu: %s", i, strerror(errno));
				rc = -2;
				goto out;
			}
			/* Linux treats a map as read-only data once it is frozen. */
			if ((defs[i].flags & MAP_F_RDONLY_PROG) && bpf_map_freeze(fds[nfd])) {
				snprintf(reason, rlen, "map %zu: freeze: %s", i, strerror(errno));
				nfd++;
				goto out;
			}
		}
	}
	/* Map indexes become file descriptors (the pseudo-source numbers agree). */
	for (size_t i = 0; i + 1 < cnt; i++)
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW)) {
			if ((insns[i].src == BPF_PSEUDO_MAP_FD || insns[i].src == BPF_PSEUDO_MAP_VALUE) &&
			    insns[i].imm >= 0 && insns[i].imm < nfd)
				insns[i].imm = fds[insns[i].imm];
			i++;
		}
	LIBBPF_OPTS(bpf_prog_load_opts, po, .log_buf = log, .log_size = sizeof(log),
		    .log_level = 1);
	log[0] = '\0';
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "vfy_case", "GPL",
			       (const struct bpf_insn *)insns, cnt, &po);
	if (fd >= 0) {
		close(fd);
		rc = 0;
	} else {
		int err = errno;
		const char *why = log[0] ? last_line(log) : strerror(err);
		size_t n = strnlen(why, rlen - 1);
		memcpy(reason, why, n);
		reason[n] = '\0';
		*type_diff = type_difference(&c, reason);
		rc = err == EPERM ? -2 : 1;
	}
out:
	for (int i = 0; i < nfd; i++)
		close(fds[i]);
	free(insns);
	vcase_free(&c);
	free(text);
	return rc;
}

int main(int argc, char **argv)
{
	const char *dirs[] = {"tests/verifier/accept", "tests/verifier/reject"};
	int cases = 0, both = 0, only_gpuext = 0, only_kernel_safety = 0, only_kernel_other = 0;
	int neither = 0, only_kernel_explained = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	for (int d = 0; d < 2; d++) {
		DIR *dir = opendir(dirs[d]);
		struct dirent *de;
		if (!dir)
			continue;
		while ((de = readdir(dir))) {
			size_t l = strlen(de->d_name);
			char path[512], reason[1024], expect[256];
			if (l < 5 || strcmp(de->d_name + l - 4, ".txt"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dirs[d], de->d_name);
			struct err e = {""};
			int verdict = 0;
			if (vcase_run(path, &verdict, &e, expect, sizeof(expect)))
				continue;
			int type_diff;
			int k = kernel_load(path, reason, sizeof(reason), &type_diff);
			if (k == -2) {
				printf("%s: the kernel cannot load programs here: %s\n", path, reason);
				return 2;
			}
			cases++;
			if (k == 0 && verdict == 0)
				neither++;
			else if (k && verdict)
				both++;
			else if (verdict) {
				only_gpuext++;
				printf("gpuext only  %s\n    gpuext: %s\n", path, e.msg);
			} else if (is_safety(reason) && !type_diff) {
				const char *why = NULL;
				for (size_t x = 0; x < sizeof(explained) / sizeof(explained[0]); x++)
					if (!strncmp(de->d_name, explained[x].name, l - 4) &&
					    strlen(explained[x].name) == l - 4)
						why = explained[x].why;
				if (why) {
					only_kernel_explained++;
					printf("explained    %s\n    kernel: %s\n    gpuext accepts: %s\n",
					       path, reason, why);
				} else {
					only_kernel_safety++;
					printf("DISAGREE     %s\n    kernel (memory safety): %s\n", path,
					       reason);
				}
			} else {
				only_kernel_other++;
				printf("kernel only  %s\n    kernel (not memory safety): %s\n", path, reason);
			}
		}
		closedir(dir);
	}
	printf("%d cases: %d rejected by both, %d accepted by both, %d rejected by gpuext only, "
	       "%d by the kernel only for a memory-safety reason (%d more reviewed and "
	       "explained), %d by the kernel only for another reason\n",
	       cases, both, neither, only_gpuext, only_kernel_safety, only_kernel_explained,
	       only_kernel_other);
	return only_kernel_safety ? 1 : 0;
}
