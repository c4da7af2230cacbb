/* SPDX-License-Identifier: MIT */
/*
 * test_fatbin - the fatbin parser on real nvcc output: the .nv_fatbin
 * sections of the CUDA examples (build/examples, built by `make` where nvcc
 * exists; skipped elsewhere), their decoded PTX compared with `nvcc -ptx`
 * of the same source (build/examples/ref) and with cuobjdump where it is
 * installed, best-PTX choice per device, the wrapper found through
 * .nvFatBinSegment, and a corpus of corrupt fatbins made as patches of good
 * ones, each with its exact message.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "cuda/fatbin.h"

#define EX_DIR "build/examples"

/* ---- reading the examples ---------------------------------------------- */

/* A section of an ELF64 file, copied into an exactly sized buffer (so that
 * ASan sees any read past its end); *addr its link-time address. */
static uint8_t *elf_section(const char *path, const char *name, size_t *len, uint64_t *addr)
{
	size_t flen;
	char *file = test_read_file(path, &flen);
	uint8_t *out = NULL;

	if (!file)
		return NULL;
	Elf64_Ehdr eh;
	assert_true(flen >= sizeof(eh));
	memcpy(&eh, file, sizeof(eh));
	assert_true(eh.e_shoff + (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) <= flen);
	Elf64_Shdr *sh = malloc(eh.e_shnum * sizeof(*sh));
	memcpy(sh, file + eh.e_shoff, eh.e_shnum * sizeof(*sh));
	const char *names = file + sh[eh.e_shstrndx].sh_offset;
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		if (strcmp(names + sh[i].sh_name, name))
			continue;
		assert_true(sh[i].sh_offset + sh[i].sh_size <= flen);
		*len = sh[i].sh_size;
		*addr = sh[i].sh_addr;
		out = malloc(*len ? *len : 1);
		memcpy(out, file + sh[i].sh_offset, *len);
		break;
	}
	free(sh);
	free(file);
	return out;
}

/* The .nv_fatbin of build/examples/NAME; skips the test when not built. */
static uint8_t *example_fatbin(const char *name, size_t *len)
{
	char path[256];
	uint64_t addr;

	snprintf(path, sizeof(path), EX_DIR "/%s", name);
	if (access(path, R_OK)) {
		fprintf(stderr, "skip: %s not built (no nvcc?)\n", path);
		return NULL;
	}
	uint8_t *fb = elf_section(path, ".nv_fatbin", len, &addr);
	assert_non_null(fb);
	return fb;
}

/* PTX with comments dropped and every run of blanks made one space, empty
 * lines dropped: the fatbin stores PTX stripped that way, nvcc -ptx does not. */
static char *ptx_normalize(const char *ptx)
{
	char *out = malloc(strlen(ptx) + 2), *o = out;
	int line_start = 1, blank = 0;

	for (const char *p = ptx; *p; p++) {
		if (p[0] == '/' && p[1] == '/') {
			while (p[1] && p[1] != '\n')
				p++;
			continue;
		}
		if (*p == '\n') {
			if (!line_start)
				*o++ = '\n';
			line_start = 1;
			blank = 0;
		} else if (*p == ' ' || *p == '\t' || *p == '\r') {
			blank = 1;
		} else {
			if (blank && !line_start)
				*o++ = ' ';
			*o++ = *p;
			line_start = 0;
			blank = 0;
		}
	}
	*o = '\0';
	return out;
}

static void assert_ptx_equal_file(const char *ptx, const char *ref_path)
{
	char *ref = test_read_file(ref_path, NULL);
	assert_non_null(ref);
	char *a = ptx_normalize(ptx), *b = ptx_normalize(ref);
	if (strcmp(a, b)) {
		fprintf(stderr, "decoded PTX differs from %s\n--- decoded\n%s\n--- reference\n%s\n",
			ref_path, a, b);
		fail();
	}
	free(a), free(b), free(ref);
}

/* Where cuobjdump exists: our PTX must appear in `cuobjdump -ptx` output. */
static void assert_ptx_in_cuobjdump(const char *bin, const char *ptx)
{
	char cmd[512];
	int status;

	snprintf(cmd, sizeof(cmd),
		 "p=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump); "
		 "[ -x \"$p\" ] || exit 77; \"$p\" -ptx %s", bin);
	char *out = test_run_cmd(cmd, &status);
	if (status == 77) {
		free(out);
		return; /* not installed here: nvcc -ptx is the reference */
	}
	assert_int_equal(status, 0);
	char *a = ptx_normalize(ptx), *b = ptx_normalize(out);
	if (!strstr(b, a)) {
		fprintf(stderr, "decoded PTX not in cuobjdump -ptx %s output\n", bin);
		fail();
	}
	free(a), free(b), free(out);
}

/* ---- decoding every example -------------------------------------------- */

struct fb_census {
	unsigned fatbins, ptx, elf, lz4, zstd;
};

/* Walk every entry, decompress it, check what it holds. */
static void fb_walk(const uint8_t *fb, size_t len, struct fb_census *c)
{
	struct fatbin_iter it;
	struct fatbin_entry ent;
	struct err e = {{0}};
	int rc;

	memset(c, 0, sizeof(*c));
	assert_int_equal(fatbin_iter_init(&it, fb, len, &e), 0);
	while ((rc = fatbin_iter_next(&it, &ent, &e)) == 1) {
		uint8_t *data;
		size_t n;
		if (fatbin_entry_contents(&ent, &data, &n, &e)) {
			fprintf(stderr, "%s\n", e.msg);
			fail();
		}
		assert_true(ent.payload >= fb && ent.payload + ent.payload_size <= fb + len);
		assert_int_equal(ent.version_major == 0 && ent.version_minor == 0, 0);
		if (ent.kind == FATBIN_KIND_ELF) {
			assert_memory_equal(data, ELFMAG, SELFMAG);
			c->elf++;
		} else {
			char target[32];
			assert_int_equal(ent.kind, FATBIN_KIND_PTX);
			snprintf(target, sizeof(target), ".target sm_%u", ent.arch);
			assert_non_null(strstr((char *)data, ".version "));
			assert_non_null(strstr((char *)data, target));
			assert_int_equal(ent.version_major, 9); /* nvcc 13 writes PTX ISA 9.x */
			c->ptx++;
		}
		c->lz4 += !!(ent.flags & FATBIN_FLAG_LZ4);
		c->zstd += !!(ent.flags & FATBIN_FLAG_ZSTD);
		free(data);
	}
	assert_int_equal(rc, 0);
	c->fatbins = it.fatbins;
}

static void test_decode_examples(void **state)
{
	static const struct {
		const char *name;
		unsigned ptx, lz4, zstd, elf_min;
	} cases[] = {
		/* nvcc 13 default: sm_75 ELF + ZSTD compute_75 PTX (plus cudart's ELF). */
		{"vecadd", 1, 0, 1, 2},
		{"gemm", 1, 0, 1, 2},
		{"reduce", 1, 0, 1, 2},
		{"imbalance", 1, 0, 1, 2},
		{"vecadd_shared", 1, 0, 1, 1},
		{"vecadd_nocompress", 1, 0, 0, 2},
		{"vecadd_lz4", 1, 1, 0, 2},
		{"vecadd_compress_all", 1, 0, 2, 2}, /* ELF compressed too */
		{"vecadd_multi", 2, 0, 2, 4},        /* sm_75, sm_80, sm_90 ELF; compute_80/90 PTX */
	};
	unsigned done = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len;
		uint8_t *fb = example_fatbin(cases[i].name, &len);
		struct fb_census c;
		if (!fb)
			continue;
		fb_walk(fb, len, &c);
		if (c.ptx != cases[i].ptx || c.lz4 != cases[i].lz4 || c.zstd < cases[i].zstd ||
		    c.elf < cases[i].elf_min) {
			fprintf(stderr, "%s: %u fatbins, %u PTX, %u ELF, %u LZ4, %u ZSTD\n", cases[i].name,
				c.fatbins, c.ptx, c.elf, c.lz4, c.zstd);
			fail();
		}
		free(fb);
		done++;
	}
	if (!done)
		skip();
}

/* Every example's best PTX for sm_75 and sm_90 is what nvcc -ptx makes. */
static void test_ptx_equals_reference(void **state)
{
	static const char *const names[][2] = {
		{"vecadd", "vecadd"},           {"gemm", "gemm"},
		{"reduce", "reduce"},           {"imbalance", "imbalance"},
		{"vecadd_shared", "vecadd"},    {"vecadd_nocompress", "vecadd"},
		{"vecadd_lz4", "vecadd"},       {"vecadd_compress_all", "vecadd"},
	};
	unsigned done = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char ref[256], bin[256];
		size_t len;
		uint8_t *fb = example_fatbin(names[i][0], &len);
		if (!fb)
			continue;
		snprintf(ref, sizeof(ref), EX_DIR "/ref/%s.compute_75.ptx", names[i][1]);
		snprintf(bin, sizeof(bin), EX_DIR "/%s", names[i][0]);
		for (unsigned sm = 75; sm <= 90; sm += 15) {
			struct fatbin_entry ent;
			struct err e = {{0}};
			char *ptx;
			size_t ptx_len;
			if (fatbin_best_ptx(fb, len, sm, &ptx, &ptx_len, &ent, &e)) {
				fprintf(stderr, "%s: %s\n", names[i][0], e.msg);
				fail();
			}
			assert_int_equal(ent.arch, 75);
			assert_int_equal(strlen(ptx), ptx_len);
			assert_ptx_equal_file(ptx, ref);
			assert_ptx_in_cuobjdump(bin, ptx);
			free(ptx);
		}
		free(fb);
		done++;
	}
	if (!done)
		skip();
}

/* Several -gencode targets: compute_80 and compute_90 PTX, no compute_75;
 * 8 entries: cudart's fatbin (an ELF per target) and the program's five. */
static void test_best_ptx_multi(void **state)
{
	size_t len;
	uint8_t *fb = example_fatbin("vecadd_multi", &len);
	static const struct {
		unsigned sm, arch;
	} cases[] = {{80, 80}, {86, 80}, {89, 80}, {90, 90}, {100, 90}, {120, 90}};
	struct fatbin_entry ent;
	struct err e = {{0}};
	char *ptx;
	size_t ptx_len;

	if (!fb)
		skip();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char ref[128];
		assert_int_equal(fatbin_best_ptx(fb, len, cases[i].sm, &ptx, &ptx_len, &ent, &e), 0);
		assert_int_equal(ent.arch, cases[i].arch);
		snprintf(ref, sizeof(ref), EX_DIR "/ref/vecadd.compute_%u.ptx", cases[i].arch);
		assert_ptx_equal_file(ptx, ref);
		free(ptx);
	}
	assert_int_equal(fatbin_best_ptx(fb, len, 75, &ptx, &ptx_len, &ent, &e), -ENOENT);
	assert_null(ptx);
	assert_string_equal(e.msg, "fatbin: no PTX for sm_75 (8 entries; PTX present: compute_80, compute_90)");
	free(fb);
}

/* Arch- and family-specific PTX only runs where the driver accepts it. */
static void test_ptx_runs_on(void **state)
{
	assert_true(fatbin_ptx_runs_on(75, 0, 75));
	assert_true(fatbin_ptx_runs_on(75, 0, 90));
	assert_false(fatbin_ptx_runs_on(90, 0, 89));
	assert_true(fatbin_ptx_runs_on(90, FATBIN_FLAG_ARCH_SPECIFIC, 90));
	assert_false(fatbin_ptx_runs_on(90, FATBIN_FLAG_ARCH_SPECIFIC, 100));
	assert_true(fatbin_ptx_runs_on(100, FATBIN_FLAG_FAMILY_SPECIFIC, 103));
	assert_false(fatbin_ptx_runs_on(100, FATBIN_FLAG_FAMILY_SPECIFIC, 120));
	assert_false(fatbin_ptx_runs_on(103, FATBIN_FLAG_FAMILY_SPECIFIC, 100));
}

/* ---- the wrapper ---------------------------------------------------------- */

/* In the binary, .nvFatBinSegment holds cudart's wrapper; its data pointer
 * (link-time address, also the addend of its relocation) points at the
 * fatbin header of this program's fatbin inside .nv_fatbin.  Passing a
 * wrapper in memory gives the same PTX as the bytes, with no length. */
static void test_wrapper(void **state)
{
	size_t len, seg_len;
	uint64_t fb_addr, seg_addr, data;
	uint8_t *fb, *seg;
	struct err e = {{0}};
	char *ptx, *ptx2;
	size_t ptx_len, ptx2_len;

	if (access(EX_DIR "/vecadd", R_OK))
		skip();
	fb = elf_section(EX_DIR "/vecadd", ".nv_fatbin", &len, &fb_addr);
	seg = elf_section(EX_DIR "/vecadd", ".nvFatBinSegment", &seg_len, &seg_addr);
	assert_non_null(fb);
	assert_non_null(seg);
	assert_int_equal(seg_len % 24, 0);
	uint32_t magic, version;
	memcpy(&magic, seg, 4);
	memcpy(&version, seg + 4, 4);
	memcpy(&data, seg + 8, 8);
	assert_int_equal(magic, FATBIN_WRAPPER_MAGIC);
	assert_int_equal(version, 1);
	assert_true(data >= fb_addr && data < fb_addr + len);
	const uint8_t *own = fb + (data - fb_addr);

	/* Through a wrapper in memory, length unknown: that one fatbin only. */
	struct {
		uint32_t magic, version;
		const void *data;
		void *filename_or_fatbins;
	} wrapper = {FATBIN_WRAPPER_MAGIC, 1, own, NULL};
	assert_int_equal(fatbin_best_ptx(&wrapper, FATBIN_LEN_UNKNOWN, 90, &ptx, &ptx_len, NULL, &e), 0);
	assert_int_equal(fatbin_best_ptx(fb, len, 90, &ptx2, &ptx2_len, NULL, &e), 0);
	assert_string_equal(ptx, ptx2);
	assert_ptx_equal_file(ptx, EX_DIR "/ref/vecadd.compute_75.ptx");
	free(ptx), free(ptx2);

	/* The wrapper's fatbin is one of several in the section: cudart's own
	 * (ELF only) comes first. */
	struct fatbin_iter it;
	struct fatbin_entry ent;
	assert_int_equal(fatbin_iter_init(&it, &wrapper, FATBIN_LEN_UNKNOWN, &e), 0);
	unsigned n = 0;
	while (fatbin_iter_next(&it, &ent, &e) == 1)
		n++;
	assert_int_equal(it.fatbins, 1);
	assert_int_equal(n, 2); /* sm_75 ELF, compute_75 PTX */

	wrapper.version = 3;
	assert_int_equal(fatbin_iter_init(&it, &wrapper, FATBIN_LEN_UNKNOWN, &e), -ENOTSUP);
	assert_string_equal(e.msg, "fatbin wrapper: version 3 unsupported (expected 1 or 2)");
	wrapper.version = 1;
	wrapper.data = NULL;
	assert_int_equal(fatbin_iter_init(&it, &wrapper, FATBIN_LEN_UNKNOWN, &e), -EINVAL);
	assert_string_equal(e.msg, "fatbin wrapper: data pointer is NULL");
	/* Bytes of known length (a file) with a wrapper: its pointer is not ours. */
	assert_int_equal(fatbin_iter_init(&it, &wrapper, sizeof(wrapper), &e), -EINVAL);
	assert_string_equal(e.msg, "fatbin offset 0x0: a wrapper (magic 0x466243b1) in 24 bytes: its pointer is only valid in process (length unknown)");
	free(fb), free(seg);
}

/* Wrapper i of BIN's .nvFatBinSegment: its version, and a copy of the
 * section its data pointer points into (*sec, freed by the caller) with
 * *at the fatbin it points at.  Link-time addresses stand in for run-time
 * ones: the section's address plus the offset. */
static int wrapper_target(const char *bin, unsigned i, const char *const *sections, uint8_t **sec,
			  const uint8_t **at, uint32_t *version)
{
	size_t seg_len, len;
	uint64_t seg_addr, addr, data;
	uint8_t *seg = elf_section(bin, ".nvFatBinSegment", &seg_len, &seg_addr);
	uint32_t magic;

	assert_non_null(seg);
	assert_true(seg_len >= 24 * (i + 1));
	memcpy(&magic, seg + 24 * i, 4);
	memcpy(version, seg + 24 * i + 4, 4);
	memcpy(&data, seg + 24 * i + 8, 8);
	free(seg);
	assert_int_equal(magic, FATBIN_WRAPPER_MAGIC);
	for (int k = 0; sections[k]; k++) {
		*sec = elf_section(bin, sections[k], &len, &addr);
		if (*sec && data >= addr && data < addr + len) {
			*at = *sec + (data - addr);
			return k;
		}
		free(*sec);
	}
	fail_msg("wrapper %u of %s points into no known section", i, bin);
	return -1;
}

/* -rdc=true: the version-2 wrapper's fatbin (.nv_fatbin, linked by nvlink)
 * has no PTX; the version-1 wrapper's (__nv_relfatbin) has it, with the
 * ptxas option --compile-only in a 96-byte entry header. */
static void test_rdc(void **state)
{
	static const char *const sections[] = {".nv_fatbin", "__nv_relfatbin", NULL};
	const char *bin = EX_DIR "/vecadd_rdc";
	struct fatbin_entry ent;
	struct err e = {{0}};
	uint8_t *sec;
	const uint8_t *at;
	uint32_t version;
	char *ptx;
	size_t ptx_len;

	if (access(bin, R_OK))
		skip();
	struct {
		uint32_t magic, version;
		const void *data;
		void *more;
	} wrapper = {FATBIN_WRAPPER_MAGIC, 0, NULL, NULL};

	assert_int_equal(wrapper_target(bin, 0, sections, &sec, &at, &version), 0);
	assert_int_equal(version, 2);
	wrapper.version = version;
	wrapper.data = at;
	assert_int_equal(fatbin_best_ptx(&wrapper, FATBIN_LEN_UNKNOWN, 90, &ptx, &ptx_len, &ent, &e), -ENOENT);
	assert_string_equal(e.msg, "fatbin: no PTX for sm_90 (1 entries; PTX present: none)");
	free(sec);

	assert_int_equal(wrapper_target(bin, 1, sections, &sec, &at, &version), 1);
	assert_int_equal(version, 1);
	wrapper.version = version;
	wrapper.data = at;
	assert_int_equal(fatbin_best_ptx(&wrapper, FATBIN_LEN_UNKNOWN, 90, &ptx, &ptx_len, &ent, &e), 0);
	assert_int_equal(ent.header_size, 96);
	assert_int_equal(ent.arch, 75);
	assert_true(ent.options_len >= strlen("--compile-only"));
	assert_memory_equal(ent.options, "--compile-only", strlen("--compile-only"));
	assert_non_null(strstr(ptx, ".entry vecadd("));
	free(ptx);
	free(sec);
}

/* -G: entries name their source file (the header grows by the name's
 * length); the PTX carries its ptxas options; the debug ELF is compressed. */
static void test_debug(void **state)
{
	size_t len;
	uint8_t *fb = example_fatbin("vecadd_debug", &len);
	struct fatbin_iter it;
	struct fatbin_entry ent;
	struct err e = {{0}};
	const char *src = "examples/cuda/vecadd.cu";
	unsigned named = 0, ptx = 0;

	if (!fb)
		skip();
	assert_int_equal(fatbin_iter_init(&it, fb, len, &e), 0);
	while (fatbin_iter_next(&it, &ent, &e) == 1) {
		if (!(ent.flags & FATBIN_FLAG_DEBUG))
			continue;
		assert_non_null(memmem(ent.name, ent.name_len, src, strlen(src)));
		assert_true(ent.header_size >= 64 + strlen(src));
		assert_true(ent.flags & FATBIN_FLAG_ZSTD);
		if (ent.kind == FATBIN_KIND_PTX) {
			assert_non_null(memmem(ent.options, ent.options_len, "-g ", 3));
			ptx++;
		}
		named++;
	}
	assert_true(named >= 2);
	assert_int_equal(ptx, 1);
	free(fb);
}

/* ---- corrupt fatbins -------------------------------------------------------- */

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* Parse everything (all entries, all contents); the first error or 0. */
static int fb_first_error(const uint8_t *image, size_t len, struct err *e)
{
	/* An exactly sized copy, so that ASan catches any read past the end. */
	uint8_t *copy = malloc(len ? len : 1);
	struct fatbin_iter it;
	struct fatbin_entry ent;
	int rc;

	memcpy(copy, image, len);
	rc = fatbin_iter_init(&it, copy, len, e);
	while (rc == 0 && (rc = fatbin_iter_next(&it, &ent, e)) == 1) {
		uint8_t *data;
		size_t n;
		rc = fatbin_entry_contents(&ent, &data, &n, e);
		if (rc == 0)
			free(data);
	}
	free(copy);
	return rc;
}

/* Offsets of a section's second fatbin header and of its PTX entry. */
struct fb_layout {
	size_t fatbin2, ptx, ptx_hsize, ptx_size;
	unsigned ptx_index;
};

static void fb_find(const uint8_t *fb, size_t len, struct fb_layout *l)
{
	struct fatbin_iter it;
	struct fatbin_entry ent;
	struct err e;

	memset(l, 0, sizeof(*l));
	assert_int_equal(fatbin_iter_init(&it, fb, len, &e), 0);
	while (fatbin_iter_next(&it, &ent, &e) == 1) {
		if (ent.fatbin == 1 && !l->fatbin2)
			l->fatbin2 = ent.offset - 16;
		if (ent.kind == FATBIN_KIND_PTX) {
			l->ptx = ent.offset;
			l->ptx_index = ent.index;
			l->ptx_hsize = ent.header_size;
			l->ptx_size = (size_t)get64(fb + ent.offset + 8);
		}
	}
	assert_true(l->fatbin2 && l->ptx);
}

/* Patch a copy of fb, parse it, compare the message. */
static void expect_error(const uint8_t *fb, size_t len, size_t new_len, void (*patch)(uint8_t *, const struct fb_layout *),
			 const struct fb_layout *l, const char *want)
{
	uint8_t *buf = calloc(1, new_len > len ? new_len : len);
	struct err e = {{0}};

	memcpy(buf, fb, len);
	if (patch)
		patch(buf, l);
	int rc = fb_first_error(buf, new_len, &e);
	if (rc >= 0 || strcmp(e.msg, want)) {
		fprintf(stderr, "rc %d\n got: %s\nwant: %s\n", rc, rc < 0 ? e.msg : "(no error)", want);
		fail();
	}
	free(buf);
}

static void p_magic(uint8_t *b, const struct fb_layout *l) { put32(b, 0xdeadbeef); }
static void p_magic2(uint8_t *b, const struct fb_layout *l) { put32(b + l->fatbin2, 0x12345678); }
static void p_version(uint8_t *b, const struct fb_layout *l) { put16(b + 4, 2); }
static void p_fhsize(uint8_t *b, const struct fb_layout *l) { put16(b + 6, 8); }
static void p_entry_size(uint8_t *b, const struct fb_layout *l) { put64(b + l->ptx + 8, 1ull << 40); }
static void p_hsize_small(uint8_t *b, const struct fb_layout *l) { put32(b + l->ptx + 4, 32); }
static void p_hsize_large(uint8_t *b, const struct fb_layout *l) { put32(b + l->ptx + 4, 65536); }
static void p_hsize_past(uint8_t *b, const struct fb_layout *l) { put32(b + l->ptx + 4, 4000); }
static void p_csize_big(uint8_t *b, const struct fb_layout *l) { put32(b + l->ptx + 16, (uint32_t)l->ptx_size + 8); }
static void p_csize_zero(uint8_t *b, const struct fb_layout *l) { put32(b + l->ptx + 16, 0); }
static void p_csize_short(uint8_t *b, const struct fb_layout *l) { put32(b + l->ptx + 16, get32(b + l->ptx + 16) - 16); }
static void p_usize_up(uint8_t *b, const struct fb_layout *l) { put64(b + l->ptx + 56, get64(b + l->ptx + 56) + 1); }
static void p_usize_down(uint8_t *b, const struct fb_layout *l) { put64(b + l->ptx + 56, get64(b + l->ptx + 56) - 1); }
static void p_usize_16m(uint8_t *b, const struct fb_layout *l) { put64(b + l->ptx + 56, 1ull << 24); }
static void p_usize_huge(uint8_t *b, const struct fb_layout *l) { put64(b + l->ptx + 56, 1ull << 40); }
static void p_both(uint8_t *b, const struct fb_layout *l) { put64(b + l->ptx + 40, get64(b + l->ptx + 40) | 0xa000); }
static void p_name(uint8_t *b, const struct fb_layout *l) { put32(b + l->ptx + 32, 78), put32(b + l->ptx + 36, 10); }
static void p_opts(uint8_t *b, const struct fb_layout *l) { put32(b + l->ptx + 20, 76); }
static void p_opts_str(uint8_t *b, const struct fb_layout *l) { put32(b + l->ptx + 64, 0x48), put32(b + l->ptx + 68, 9); }
static void p_zstd_junk(uint8_t *b, const struct fb_layout *l) { put32(b + l->ptx + l->ptx_hsize, 0x11223344); }
/* Shrink the second fatbin so that the PTX entry's header is cut at 40 bytes. */
static void p_entry_cut(uint8_t *b, const struct fb_layout *l)
{
	put64(b + l->fatbin2 + 8, l->ptx + 40 - (l->fatbin2 + 16));
}

static void test_corrupt_zstd(void **state)
{
	size_t len;
	uint8_t *fb = example_fatbin("vecadd", &len);
	struct fb_layout l;
	char want[512];

	if (!fb)
		skip();
	fb_find(fb, len, &l);
	assert_int_equal(l.ptx_hsize, 80);
	size_t p = l.ptx;
	unsigned i = l.ptx_index;
	uint64_t usize = get64(fb + p + 56), fat2 = get64(fb + l.fatbin2 + 8);
	assert_int_equal(fb_first_error(fb, len, NULL), 0);

	expect_error(fb, len, 2, NULL, &l, "fatbin offset 0x0: image of 2 bytes is too short for a magic");
	expect_error(fb, len, 10, NULL, &l, "fatbin offset 0x0: fatbin header truncated (10 bytes, need 16)");
	expect_error(fb, len, len, p_magic, &l, "fatbin offset 0x0: bad fatbin magic 0xdeadbeef (expected 0xba55ed50)");
	expect_error(fb, len, len, p_version, &l, "fatbin offset 0x0: fatbin version 2 unsupported (expected 1)");
	expect_error(fb, len, len, p_fhsize, &l, "fatbin offset 0x0: fatbin header size 8 too small (minimum 16)");
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: bad fatbin magic 0x12345678 (expected 0xba55ed50)", l.fatbin2);
	expect_error(fb, len, len, p_magic2, &l, want);
	/* Truncations: inside the second fatbin, and trailing bytes after the last. */
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: fat size 0x%llx past the end (84 bytes left after the header)",
		 l.fatbin2, (unsigned long long)fat2);
	expect_error(fb, len, l.fatbin2 + 100, NULL, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: fatbin header truncated (8 bytes, need 16)", len);
	expect_error(fb, len, len + 8, NULL, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u: header truncated (40 bytes left in the fatbin, need 64)", p, i);
	expect_error(fb, len, p + 40, p_entry_cut, &l, want);
	/* Entry sizes. */
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u: payload size 0x10000000000 past the end of the fatbin (%zu bytes left)", p, i, l.ptx_size);
	expect_error(fb, len, len, p_entry_size, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u: header size 32 too small (minimum 64)", p, i);
	expect_error(fb, len, len, p_hsize_small, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u: header size 65536 too large (maximum 4096)", p, i);
	expect_error(fb, len, len, p_hsize_large, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u: header size 4000 past the end of the fatbin (%zu bytes left)", p, i, 80 + l.ptx_size);
	expect_error(fb, len, len, p_hsize_past, &l, want);
	/* Compression fields that lie. */
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u: compressed size 0x%zx not within the payload (0x%zx bytes)", p, i, l.ptx_size + 8, l.ptx_size);
	expect_error(fb, len, len, p_csize_big, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u: compressed size 0x0 not within the payload (0x%zx bytes)", p, i, l.ptx_size);
	expect_error(fb, len, len, p_csize_zero, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u (PTX sm_75): ZSTD payload: Src size is incorrect", p, i);
	expect_error(fb, len, len, p_csize_short, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u (PTX sm_75): ZSTD frame holds 0x%llx bytes, the header says 0x%llx", p, i, (unsigned long long)usize, (unsigned long long)usize + 1);
	expect_error(fb, len, len, p_usize_up, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u (PTX sm_75): ZSTD frame holds 0x%llx bytes, the header says 0x%llx", p, i, (unsigned long long)usize, (unsigned long long)usize - 1);
	expect_error(fb, len, len, p_usize_down, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u: uncompressed size 0x10000000000 out of range (1 to 0x10000000)", p, i);
	expect_error(fb, len, len, p_usize_huge, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u (PTX sm_75): ZSTD frame holds 0x%llx bytes, the header says 0x1000000", p, i, (unsigned long long)usize);
	expect_error(fb, len, len, p_usize_16m, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u: flags 0xa011 claim both LZ4 and ZSTD", p, i);
	expect_error(fb, len, len, p_both, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u (PTX sm_75): ZSTD payload: Unknown frame descriptor", p, i);
	expect_error(fb, len, len, p_zstd_junk, &l, want);
	/* Strings in the header. */
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u: name (offset 78, 10 bytes) outside the entry header (80 bytes)", p, i);
	expect_error(fb, len, len, p_name, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u: options descriptor at 0x4c outside the entry header (80 bytes)", p, i);
	expect_error(fb, len, len, p_opts, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u: options (offset 72, 9 bytes) outside the entry header (80 bytes)", p, i);
	expect_error(fb, len, len, p_opts_str, &l, want);

	/* The first fatbin (cudart's) has no PTX. */
	struct err e;
	char *ptx;
	size_t ptx_len;
	assert_int_equal(fatbin_best_ptx(fb, l.fatbin2, 90, &ptx, &ptx_len, NULL, &e), -ENOENT);
	assert_string_equal(e.msg, "fatbin: no PTX for sm_90 (1 entries; PTX present: none)");
	free(fb);
}

static void test_corrupt_lz4(void **state)
{
	size_t len;
	uint8_t *fb = example_fatbin("vecadd_lz4", &len);
	struct fb_layout l;
	char want[512];

	if (!fb)
		skip();
	fb_find(fb, len, &l);
	size_t p = l.ptx;
	unsigned i = l.ptx_index;
	uint64_t usize = get64(fb + p + 56);
	assert_int_equal(fb_first_error(fb, len, NULL), 0);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u (PTX sm_75): LZ4 payload decompressed to 0x%llx bytes, the header says 0x%llx", p, i, (unsigned long long)usize, (unsigned long long)usize + 1);
	expect_error(fb, len, len, p_usize_up, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u (PTX sm_75): LZ4 payload is corrupt or larger than the header's 0x%llx bytes", p, i, (unsigned long long)usize - 1);
	expect_error(fb, len, len, p_usize_down, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u (PTX sm_75): LZ4 payload is corrupt or larger than the header's 0x%llx bytes", p, i, (unsigned long long)usize);
	expect_error(fb, len, len, p_csize_short, &l, want);
	snprintf(want, sizeof(want), "fatbin offset 0x%zx: entry %u (PTX sm_75): LZ4 payload of 0x%x bytes cannot hold the header's 0x1000000 bytes (255:1 at most)", p, i, get32(fb + p + 16));
	expect_error(fb, len, len, p_usize_16m, &l, want);
	free(fb);
}

/* Length unknown: the header's fat size is believed only up to the limit. */
static void test_unknown_length(void **state)
{
	uint8_t hdr[16];
	struct fatbin_iter it;
	struct fatbin_entry ent;
	struct err e;

	put32(hdr, FATBIN_MAGIC);
	put16(hdr + 4, 1);
	put16(hdr + 6, 16);
	put64(hdr + 8, 1ull << 40);
	assert_int_equal(fatbin_iter_init(&it, hdr, FATBIN_LEN_UNKNOWN, &e), -EINVAL);
	assert_string_equal(e.msg, "fatbin offset 0x0: fat size 0x10000000000 larger than the limit 0x40000000");
	put64(hdr + 8, 0); /* an empty fatbin: no entries */
	assert_int_equal(fatbin_iter_init(&it, hdr, FATBIN_LEN_UNKNOWN, &e), 0);
	assert_int_equal(fatbin_iter_next(&it, &ent, &e), 0);
	put32(hdr, 0x7f454c46);
	assert_int_equal(fatbin_iter_init(&it, hdr, FATBIN_LEN_UNKNOWN, &e), -EINVAL);
	assert_string_equal(e.msg, "fatbin offset 0x0: bad fatbin magic 0x7f454c46 (expected 0xba55ed50)");
	assert_int_equal(fatbin_iter_init(&it, NULL, 16, &e), -EINVAL);
	assert_string_equal(e.msg, "fatbin: no image (NULL)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_examples),
		cmocka_unit_test(test_ptx_equals_reference),
		cmocka_unit_test(test_best_ptx_multi),
		cmocka_unit_test(test_ptx_runs_on),
		cmocka_unit_test(test_wrapper),
		cmocka_unit_test(test_rdc),
		cmocka_unit_test(test_debug),
		cmocka_unit_test(test_corrupt_zstd),
		cmocka_unit_test(test_corrupt_lz4),
		cmocka_unit_test(test_unknown_length),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
