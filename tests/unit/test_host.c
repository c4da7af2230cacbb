/* SPDX-License-Identifier: MIT */
/*
 * The kernel-uprobe backend (src/host/) and `gpuext attach` / `gpuext run
 * --kernel-uprobes`.  What needs no kernel runs everywhere: symbol offsets
 * checked against where the dynamic linker really put the function in this
 * process, /proc/PID/maps, target resolution, the CLI's errors.  What loads
 * programs into the kernel (tests/progs/kuprobe.bpf.c on the fake driver's
 * cuDriverGetVersion) skips, saying why, where bpf() is refused.
 */
#include "testutil.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/object.h"
#include "bpf/verifier.h"
#include "host/host.h"

#define FAKE_LIB "build/fakecuda/libcuda.so.1"
#define LOOP "build/fakecuda/version_loop"
#define PROG "build/bpf/tests/progs/kuprobe.bpf.o"

typedef int version_fn(int *);

static void *fake_lib;
static version_fn *fake_version;
static char fake_path[PATH_MAX];

static int setup(void **state)
{
	if (!(fake_lib = dlopen(FAKE_LIB, RTLD_NOW | RTLD_LOCAL)) ||
	    !(fake_version = (version_fn *)dlsym(fake_lib, "cuDriverGetVersion")) ||
	    !realpath(FAKE_LIB, fake_path)) {
		fprintf(stderr, "test_host: %s: %s\n", FAKE_LIB, dlerror());
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	dlclose(fake_lib);
	return 0;
}

/* The file offset of fn as the loader mapped it: from /proc/self/maps. */
static uint64_t mapped_file_offset(const void *fn)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 256];
	uint64_t found = 0;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end, off;
		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &off) == 3 &&
		    (uintptr_t)fn >= start && (uintptr_t)fn < end)
			found = (uintptr_t)fn - start + off;
	}
	fclose(f);
	return found;
}

static void test_elf_offset_is_where_the_loader_put_it(void **state)
{
	struct err e = {{0}};
	uint64_t off = 0;
	assert_int_equal(host_elf_func_offset(fake_path, "cuDriverGetVersion", &off, &e), 0);
	assert_true(off > 0);
	assert_int_equal(off, mapped_file_offset((void *)fake_version));
	/* A libc function through .dynsym (libc is stripped of .symtab). */
	void *libc_getppid = dlsym(RTLD_DEFAULT, "getppid");
	Dl_info di;
	assert_true(dladdr(libc_getppid, &di) && di.dli_fname);
	assert_int_equal(host_elf_func_offset(di.dli_fname, "getppid", &off, &e), 0);
	assert_int_equal(off, mapped_file_offset(libc_getppid));
}

static void test_elf_errors_name_file_and_function(void **state)
{
	struct err e = {{0}};
	uint64_t off;
	assert_int_equal(host_elf_func_offset(fake_path, "cuNoSuchThing", &off, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "no function 'cuNoSuchThing'"));
	assert_non_null(strstr(e.msg, "libcuda.so.1"));
	/* an undefined (imported) symbol is not a definition: malloc in the fake */
	assert_int_equal(host_elf_func_offset(fake_path, "malloc", &off, &e), -ENOENT);
	assert_int_equal(host_elf_func_offset("tests/run.sh", "main", &off, &e), -ENOEXEC);
	assert_non_null(strstr(e.msg, "tests/run.sh: not a 64-bit little-endian ELF file"));
	assert_int_equal(host_elf_func_offset("no/such/file.so", "f", &off, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "no/such/file.so: No such file"));
}

/* Every prefix of the library: an error or the right offset, never a crash. */
static void test_elf_truncated_files(void **state)
{
	size_t len;
	char *buf = test_read_file(fake_path, &len);
	char tmp[] = "/tmp/gpuext-host-XXXXXX";
	uint64_t want, off;
	assert_non_null(buf);
	assert_int_equal(host_elf_func_offset(fake_path, "cuDriverGetVersion", &want, NULL), 0);
	int fd = mkstemp(tmp);
	assert_true(fd >= 0);
	close(fd);
	for (size_t cut = 0; cut < len; cut += len / 61 + 1) {
		FILE *f = fopen(tmp, "w");
		assert_non_null(f);
		assert_int_equal(fwrite(buf, 1, cut, f), cut);
		fclose(f);
		struct err e = {{0}};
		int err = host_elf_func_offset(tmp, "cuDriverGetVersion", &off, &e);
		if (!err)
			assert_int_equal(off, want);
		else
			assert_non_null(strstr(e.msg, tmp));
	}
	unlink(tmp);
	free(buf);
}

static void test_proc_libs_of_this_process(void **state)
{
	struct host_libs libs;
	struct err e = {{0}};
	int have_fake = 0;
	assert_int_equal(host_proc_libs(getpid(), &libs, &e), 0);
	for (size_t i = 0; i < libs.cnt; i++) {
		assert_int_equal(libs.paths[i][0], '/');
		have_fake |= !strcmp(libs.paths[i], fake_path);
		for (size_t k = 0; k < i; k++)
			assert_string_not_equal(libs.paths[i], libs.paths[k]);
	}
	assert_true(have_fake);
	host_libs_free(&libs);
	assert_int_equal(host_proc_libs(999999999, &libs, &e), -ESRCH);
	assert_string_equal(e.msg, "no process 999999999");
}

static void test_resolve_target_forms(void **state)
{
	struct host_target t;
	struct err e = {{0}};
	uint64_t want = mapped_file_offset((void *)fake_version);
	static const char *const forms[] = {
		"cuDriverGetVersion", "libcuda.so.1:cuDriverGetVersion",
		"libcuda.so:cuDriverGetVersion", /* a versioned file matches the plain name */
	};
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		assert_int_equal(host_resolve(forms[i], getpid(), 0, &t, &e), 0);
		assert_string_equal(t.path, fake_path);
		assert_string_equal(t.func, "cuDriverGetVersion");
		assert_int_equal(t.offset, want);
	}
	char target[PATH_MAX + 32];
	snprintf(target, sizeof(target), "%s:cuDriverGetVersion", fake_path);
	assert_int_equal(host_resolve(target, -1, 0, &t, &e), 0);
	assert_int_equal(t.offset, want);
	/* no process: the dynamic linker's search (this process has it loaded) */
	assert_int_equal(host_resolve("libcuda.so.1:cuDriverGetVersion", -1, 0, &t, &e), 0);
	assert_string_equal(t.path, fake_path);
}

static void test_resolve_errors(void **state)
{
	struct host_target t;
	struct err e = {{0}};
	assert_int_equal(host_resolve("cuNoSuchThing", getpid(), 0, &t, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "function 'cuNoSuchThing' not found in the"));
	assert_non_null(strstr(e.msg, "executable files process"));
	assert_int_equal(host_resolve("libnope.so:f", getpid(), 0, &t, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "has no library libnope.so mapped"));
	/* with search, a library the process has not mapped is the linker's */
	assert_int_equal(host_resolve("libnope.so:f", getpid(), 1, &t, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "library libnope.so not found"));
	assert_int_equal(host_resolve("f", 999999999, 0, &t, &e), -ESRCH);
	static const char *const bad[] = {":f", "lib.so:", "a/b", ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(host_resolve(bad[i], getpid(), 0, &t, &e), -EINVAL);
		assert_non_null(strstr(e.msg, "expected FUNC, LIB:FUNC or PATH:FUNC"));
	}
}

static void test_library_names_match_their_files(void **state)
{
	assert_true(host_lib_matches("/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05",
				     "libcuda.so.1"));
	assert_true(host_lib_matches("/usr/lib/libcuda.so.1", "libcuda.so.1"));
	assert_true(host_lib_matches("/usr/lib/libcuda.so", "libcuda.so.1"));
	assert_true(host_lib_matches("/x/libcudart.so.13.0.48", "libcudart.so"));
	assert_true(host_lib_matches("/x/libfoo", "libfoo"));
	assert_false(host_lib_matches("/usr/lib/libcudart.so.13", "libcuda.so.1"));
	assert_false(host_lib_matches("/usr/lib/libcuda.sox", "libcuda.so"));
	assert_false(host_lib_matches("/usr/lib/libnvidia-ml.so.1", "libcuda.so.1"));
}

static void test_section_targets(void **state)
{
	const char *t;
	int ret;
	assert_true(host_section_target("uprobe/libcuda.so.1:cuInit", &t, &ret));
	assert_string_equal(t, "libcuda.so.1:cuInit");
	assert_int_equal(ret, 0);
	assert_true(host_section_target("uretprobe/cuInit", &t, &ret));
	assert_string_equal(t, "cuInit");
	assert_int_equal(ret, 1);
	assert_false(host_section_target("uprobe/", &t, &ret));
	assert_false(host_section_target("gpu/entry/vecadd", &t, &ret));
}

/* Load kuprobe.bpf.o into the kernel, or skip saying why. */
static struct host *open_kernel(struct object **obj)
{
	struct err e = {{0}};
	struct host *h = NULL;
	assert_int_equal(object_open(PROG, obj, &e), 0);
	assert_int_equal(object_create_maps(*obj, &e), 0);
	for (size_t i = 0; i < (*obj)->prog_cnt; i++)
		assert_int_equal(verifier_check((*obj)->progs[i], NULL, NULL, &e), 0);
	int err = host_open(*obj, &h, &e);
	if (err == -EPERM || err == -EACCES || err == -ENOSYS) {
		fprintf(stderr, "test_host: kernel BPF refused here (%s): skipped\n", e.msg);
		object_free(*obj);
		*obj = NULL;
		return NULL;
	}
	assert_int_equal(err, 0);
	return h;
}

struct records {
	unsigned n, mine;
};

static int on_record(void *arg, const char *map, const void *data, size_t size)
{
	struct records *r = arg;
	uint32_t pid;
	assert_string_equal(map, "kevents");
	assert_int_equal(size, sizeof(pid));
	memcpy(&pid, data, sizeof(pid));
	r->n++;
	r->mine += pid == (uint32_t)getpid();
	return 0;
}

static uint64_t kcount(struct host *h, uint32_t key)
{
	uint64_t v = 0;
	assert_int_equal(host_map_lookup(h, "kcalls", &key, &v, sizeof(v), NULL), 0);
	return v;
}

static void test_kernel_uprobes_count_this_process(void **state)
{
	struct object *obj;
	struct host *h = open_kernel(&obj);
	struct err e = {{0}};
	if (!h)
		skip();
	int n = host_attach_all(h, getpid(), 0, 0, &e);
	if (n < 0 && strstr(e.msg, "not available here")) {
		fprintf(stderr, "test_host: %s: skipped\n", e.msg);
		host_close(h);
		object_free(obj);
		skip();
	}
	assert_int_equal(n, 3);
	int v = 0;
	for (int i = 0; i < 100; i++)
		assert_int_equal(fake_version(&v), 0);
	struct records r = {0};
	while (host_poll(h, 100, on_record, &r) > 0)
		;
	assert_int_equal(r.n, 100);
	assert_int_equal(r.mine, 100);
	for (uint32_t k = 0; k < 3; k++)
		assert_int_equal(kcount(h, k), 100);
	host_detach(h);
	for (int i = 0; i < 10; i++)
		fake_version(&v);
	assert_int_equal(kcount(h, 0), 100); /* detached: no more counts */
	/* the kernel's map into the object's, for `gpuext run`'s printers */
	assert_int_equal(host_copy_maps(h, obj, &e), 0);
	uint64_t got = 0;
	uint32_t key = 1;
	assert_int_equal(map_lookup_copy(object_find_map(obj, "kcalls")->map, &key, &got), 0);
	assert_int_equal(got, 100);
	host_close(h);
	object_free(obj);
}

/* Is kernel BPF refused here?  (What the CLI tests below skip on.) */
static int cli_refused(const char *out)
{
	if (!strstr(out, "needs root, or CAP_BPF and CAP_PERFMON") &&
	    !strstr(out, "not available here"))
		return 0;
	fprintf(stderr, "test_host: kernel BPF refused here: skipped\n");
	return 1;
}

/* Run cmd (kernel uprobes): its output, which the caller frees; the test is
 * skipped where kernel BPF is refused and fails on a non-zero status. */
static char *run_kernel_cmd(const char *cmd)
{
	int st;
	char *out = test_run_cmd(cmd, &st);
	assert_non_null(out);
	if (cli_refused(out)) {
		free(out);
		skip();
	}
	if (st)
		fail_msg("%s: status %d:\n%s", cmd, st, out);
	return out;
}

static void test_cli_attach_errors(void **state)
{
	char cmd[512];
	int st;
	const char *cli = test_cli_path();
	struct {
		const char *args, *msg;
		int status;
	} cases[] = {
		{"--help", "Usage: gpuext attach [-p PID] FILE.bpf.o", 0},
		{"", "Usage: gpuext attach", 2},
		{"-p abc " PROG, "attach: -p needs a process id, got 'abc'", 2},
		{"-p 1 --duration 0 " PROG, "--duration needs a positive number of seconds", 2},
		{"-p 999999999 " PROG, "attach: no process 999999999", 1},
		{"--frob " PROG, "attach: unknown option '--frob'", 2},
		{"-p 1 nope.bpf.o", "nope.bpf.o", 1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(cmd, sizeof(cmd), "%s attach %s", cli, cases[i].args);
		char *out = test_run_cmd(cmd, &st);
		assert_non_null(out);
		if (!strstr(out, cases[i].msg))
			fail_msg("'%s': expected '%s' in:\n%s", cmd, cases[i].msg, out);
		assert_int_equal(st, cases[i].status);
		free(out);
	}
	/* a process without the driver: the function is not in its libraries */
	snprintf(cmd, sizeof(cmd), "(sleep 5 & p=$!; %s attach -p $p %s; st=$?; kill $p; exit $st)",
		 cli, PROG);
	char *out = test_run_cmd(cmd, &st);
	assert_non_null(out);
	assert_int_equal(st, 1);
	assert_non_null(strstr(out, "section 'uprobe/cuDriverGetVersion': function "
				    "'cuDriverGetVersion' not found in the"));
	free(out);
}

/* The value of KEY in the "map kcalls:" summary of out, -1 if absent. */
static long summary_value(const char *out, int key)
{
	const char *m = strstr(out, "map kcalls:");
	char pat[32];
	snprintf(pat, sizeof(pat), "\n  %d: ", key);
	const char *p = m ? strstr(m, pat) : NULL;
	return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

static void test_cli_run_kernel_uprobes_exact(void **state)
{
	char cmd[512];
	/* the plain build's agent: the sanitizer build's cannot preload into LOOP */
	snprintf(cmd, sizeof(cmd), "GPUEXT_AGENT=build/libgpuext-agent.so %s run --kernel-uprobes "
		 "%s -- %s 37", test_cli_path(), PROG, LOOP);
	char *out = run_kernel_cmd(cmd);
	assert_non_null(strstr(out, "calls=37 version=13000"));
	for (int k = 0; k < 3; k++)
		assert_int_equal(summary_value(out, k), 37);
	size_t events = 0;
	for (const char *p = out; (p = strstr(p, "kevents: ")); p++)
		events++;
	assert_int_equal(events, 37);
	free(out);
}

static void test_cli_attach_running_process(void **state)
{
	char cmd[768];
	/* 300 calls 10 ms apart; attached once the driver is mapped, until it exits */
	snprintf(cmd, sizeof(cmd),
		 "(%s 300 10 & p=$!; "
		 "for i in $(seq 100); do grep -q libcuda /proc/$p/maps && break; sleep 0.02; done; "
		 "%s attach -p $p %s; st=$?; wait $p || st=9; exit $st)",
		 LOOP, test_cli_path(), PROG);
	char *out = run_kernel_cmd(cmd);
	assert_non_null(strstr(out, "3 probes attached to process"));
	assert_non_null(strstr(out, "(process exited)"));
	long n = summary_value(out, 0);
	if (n <= 0 || n > 300)
		fail_msg("counted %ld of 300 calls:\n%s", n, out);
	/* the probes attach one after another to a process already calling:
	 * the call in flight then may be seen at entry or return only */
	long r = summary_value(out, 1);
	if (r < n - 1 || r > n + 1)
		fail_msg("%ld entries but %ld returns:\n%s", n, r, out);
	free(out);
}

/* No -p: every process that runs the library's function. */
/* Attach to every process: counts the calls of every process that maps the
 * probed library file.  A private copy of the fake libcuda (its own inode),
 * named by LD_LIBRARY_PATH for both the CLI and the loop, keeps the calls of
 * other processes using build/fakecuda (tests running beside this one) out
 * of the count; a second loop on build/fakecuda's file checks that. */
static void test_cli_attach_every_process(void **state)
{
	char dir[] = "/tmp/gpuext-host-XXXXXX", cmd[1024];
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "(cp %s %s/ || exit 1; (sleep 0.5; LD_LIBRARY_PATH=%s %s 40 5 > /dev/null) & "
		 "(sleep 0.5; LD_LIBRARY_PATH=build/fakecuda %s 25 5 > /dev/null) & "
		 "LD_LIBRARY_PATH=%s %s attach --duration 2 %s; st=$?; wait; rm -rf %s; exit $st)",
		 FAKE_LIB, dir, dir, LOOP, LOOP, dir, test_cli_path(), PROG, dir);
	char *out = run_kernel_cmd(cmd);
	assert_non_null(strstr(out, "3 probes attached to every process"));
	assert_non_null(strstr(out, "(duration reached)"));
	for (int k = 0; k < 3; k++)
		assert_int_equal(summary_value(out, k), 40);
	free(out);
}

/* Ctrl-C detaches and still prints what was counted. */
static void test_cli_attach_interrupted(void **state)
{
	char cmd[768];
	snprintf(cmd, sizeof(cmd),
		 "(%s 1000 5 > /dev/null & p=$!; "
		 "for i in $(seq 100); do grep -q libcuda /proc/$p/maps && break; sleep 0.02; done; "
		 "timeout --preserve-status -s INT 1 %s attach -p $p %s; st=$?; kill $p; exit $st)",
		 LOOP, test_cli_path(), PROG);
	char *out = run_kernel_cmd(cmd);
	assert_non_null(strstr(out, "(interrupted)"));
	long n = summary_value(out, 0);
	if (n <= 0 || n >= 1000)
		fail_msg("counted %ld calls in 1 s of 1000 5 ms apart:\n%s", n, out);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elf_offset_is_where_the_loader_put_it),
		cmocka_unit_test(test_elf_errors_name_file_and_function),
		cmocka_unit_test(test_elf_truncated_files),
		cmocka_unit_test(test_proc_libs_of_this_process),
		cmocka_unit_test(test_resolve_target_forms),
		cmocka_unit_test(test_resolve_errors),
		cmocka_unit_test(test_library_names_match_their_files),
		cmocka_unit_test(test_section_targets),
		cmocka_unit_test(test_kernel_uprobes_count_this_process),
		cmocka_unit_test(test_cli_attach_errors),
		cmocka_unit_test(test_cli_run_kernel_uprobes_exact),
		cmocka_unit_test(test_cli_attach_running_process),
		cmocka_unit_test(test_cli_attach_every_process),
		cmocka_unit_test(test_cli_attach_interrupted),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
