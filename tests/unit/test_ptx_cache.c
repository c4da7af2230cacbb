/* SPDX-License-Identifier: MIT */
/*
 * test_ptx_cache.c - the on-disk module cache's file layer: a stored cubin
 * comes back only for the same tag and PTX; every kind of bad entry
 * (truncated, corrupt, foreign tag, other PTX under the name, bad magic,
 * not a file) is a miss with its reason; an unusable folder is an error
 * that names it; the folder comes from the environment as documented.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptx/ptx_cache.h"
#include "testutil.h"

static const char PTX[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
			  ".visible .entry k()\n{\n\tret;\n}\n";
static const char TAG[] = "gpuext module cache 1: sm_90, driver 13000, O-1";
static const unsigned char CUBIN[] = "\177ELF\2\1\1 some sass bytes";

struct dir {
	char path[64];
};

static void dir_make(struct dir *d)
{
	snprintf(d->path, sizeof(d->path), "/tmp/gpuext-cache-test-XXXXXX");
	assert_non_null(mkdtemp(d->path));
}

static void dir_remove(struct dir *d)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", d->path);
	free(test_run_cmd(cmd, NULL));
}

/* get (tag, ptx) and expect a miss whose reason contains why (NULL: none) */
static void expect_miss(const char *dir, const char *tag, const char *ptx, const char *why)
{
	size_t len = 0;
	const char *reason = "unset";
	void *c = ptx_cache_get(dir, tag, ptx, &len, &reason);
	assert_null(c);
	if (!why) {
		assert_null(reason);
	} else {
		assert_non_null(reason);
		if (!strstr(reason, why))
			fail_msg("reason '%s', expected '%s'", reason, why);
	}
}

static void entry_path(const char *dir, char *path, size_t len)
{
	assert_int_equal(ptx_cache_path(dir, TAG, PTX, path, len), 0);
}

/* Rewrite the stored entry through fn (bytes, size) -> new size. */
static void patch_entry(const char *dir, size_t (*fn)(unsigned char *, size_t))
{
	char path[256];
	size_t len;
	entry_path(dir, path, sizeof(path));
	unsigned char *b = (unsigned char *)test_read_file(path, &len);
	assert_non_null(b);
	len = fn(b, len);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, len, f), len);
	fclose(f);
	free(b);
}

static void test_round_trip(void **state)
{
	struct dir d;
	dir_make(&d);
	char sub[128];
	snprintf(sub, sizeof(sub), "%s/a/b", d.path); /* created on put */
	expect_miss(sub, TAG, PTX, NULL);
	assert_int_equal(ptx_cache_put(sub, TAG, PTX, CUBIN, sizeof(CUBIN), NULL), 0);
	size_t len = 0;
	const char *why;
	unsigned char *c = ptx_cache_get(sub, TAG, PTX, &len, &why);
	assert_non_null(c);
	assert_null(why);
	assert_int_equal(len, sizeof(CUBIN));
	assert_memory_equal(c, CUBIN, len);
	free(c);
	struct stat st;
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	/* another tag or other PTX: another entry name, a plain miss */
	expect_miss(sub, "gpuext module cache 1: sm_80, driver 13000, O-1", PTX, NULL);
	expect_miss(sub, TAG, ".version 8.0\n", NULL);
	/* stored again (a second process): replaced whole */
	assert_int_equal(ptx_cache_put(sub, TAG, PTX, CUBIN, sizeof(CUBIN), NULL), 0);
	c = ptx_cache_get(sub, TAG, PTX, &len, &why);
	assert_non_null(c);
	free(c);
	dir_remove(&d);
}

static size_t flip_last(unsigned char *b, size_t n) { b[n - 1] ^= 0x40; return n; }
static size_t truncate_one(unsigned char *b, size_t n) { return n - 1; }
static size_t truncate_hdr(unsigned char *b, size_t n) { return 10; }
static size_t bad_magic(unsigned char *b, size_t n) { b[0] = 'X'; return n; }
static size_t foreign_tag(unsigned char *b, size_t n)
{
	/* the tag's "sm_90" becomes "sm_91": as written by another GPU's run
	 * under this name (only a collision could do that, or an edit) */
	unsigned char *p = memmem(b, n, "sm_90", 5);
	assert_non_null(p);
	p[4] = '1';
	return n;
}
static size_t other_ptx(unsigned char *b, size_t n)
{
	unsigned char *p = memmem(b, n, ".entry k()", 10);
	assert_non_null(p);
	p[8] = 'j';
	return n;
}
static size_t not_elf(unsigned char *b, size_t n)
{
	unsigned char *p = memmem(b, n, "\177ELF", 4);
	assert_non_null(p);
	p[1] = 'X';
	return n;
}

static void test_bad_entries(void **state)
{
	static const struct {
		size_t (*fn)(unsigned char *, size_t);
		const char *why;
	} cases[] = {
		{flip_last, "corrupt"},      {truncate_one, "truncated"},
		{truncate_hdr, "truncated"}, {bad_magic, "bad magic"},
		{foreign_tag, "tag differs"}, {other_ptx, "other PTX"},
		{not_elf, "corrupt"},
	};
	struct dir d;
	dir_make(&d);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(ptx_cache_put(d.path, TAG, PTX, CUBIN, sizeof(CUBIN), NULL), 0);
		patch_entry(d.path, cases[i].fn);
		expect_miss(d.path, TAG, PTX, cases[i].why);
	}
	/* a folder where the entry should be */
	char path[256];
	entry_path(d.path, path, sizeof(path));
	unlink(path);
	assert_int_equal(mkdir(path, 0700), 0);
	expect_miss(d.path, TAG, PTX, "not a regular file");
	/* and storing over it fails with a message, leaving no temporary file */
	struct err e = {{0}};
	assert_true(ptx_cache_put(d.path, TAG, PTX, CUBIN, sizeof(CUBIN), &e) < 0);
	assert_non_null(strstr(e.msg, path));
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "ls %s | grep -c tmp", d.path);
	char *out = test_run_cmd(cmd, NULL);
	assert_string_equal(out, "0\n");
	free(out);
	dir_remove(&d);
}

static void test_unusable_folder(void **state)
{
	struct dir d;
	dir_make(&d);
	char file[128], under[160];
	snprintf(file, sizeof(file), "%s/plain-file", d.path);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(under, sizeof(under), "%s/cache", file);
	struct err e = {{0}};
	assert_true(ptx_cache_put(under, TAG, PTX, CUBIN, sizeof(CUBIN), &e) < 0);
	if (!strstr(e.msg, "cannot create cache folder") || !strstr(e.msg, under))
		fail_msg("message: %s", e.msg);
	expect_miss(under, TAG, PTX, NULL);
	dir_remove(&d);
}

static void test_folder_from_environment(void **state)
{
	char dir[256];
	setenv("GPUEXT_CACHE_DISABLE", "1", 1);
	setenv("GPUEXT_CACHE_PATH", "/x/y", 1);
	assert_int_equal(ptx_cache_dir(dir, sizeof(dir)), -1);
	setenv("GPUEXT_CACHE_DISABLE", "0", 1);
	assert_int_equal(ptx_cache_dir(dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/x/y");
	unsetenv("GPUEXT_CACHE_PATH");
	setenv("XDG_CACHE_HOME", "/xdg", 1);
	assert_int_equal(ptx_cache_dir(dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/xdg/gpuext");
	setenv("XDG_CACHE_HOME", "relative", 1); /* not absolute: ignored (XDG spec) */
	setenv("HOME", "/home/u", 1);
	assert_int_equal(ptx_cache_dir(dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/home/u/.cache/gpuext");
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	assert_int_equal(ptx_cache_dir(dir, sizeof(dir)), -1);
	setenv("GPUEXT_CACHE_PATH", "/a-long-name", 1);
	assert_int_equal(ptx_cache_dir(dir, 8), -1); /* does not fit */
	setenv("GPUEXT_CACHE_DISABLE", "1", 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_bad_entries),
		cmocka_unit_test(test_unusable_folder),
		cmocka_unit_test(test_folder_from_environment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
