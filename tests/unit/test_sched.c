/* SPDX-License-Identifier: MIT */
/*
 * Scheduling sessions (src/policy/sched.h) without a GPU:
 *   - every shipped policy (policies/sched_*.bpf.c) loads and verifies, and
 *     decides what it says it does; a misbehaving one is refused by the
 *     helpers (tests/policies/sched_evil.bpf.c);
 *   - join and leave with the MPS daemon's lifecycle, through a fake
 *     nvidia-cuda-mps-control on PATH (tests/fakecuda): started by the first
 *     tenant, stopped by the last; a tenant killed without leaving is swept;
 *     the last gpuext waits for an orphaned tenant before stopping; an MPS
 *     control that fails leaves the tenants running without it;
 *   - `gpuext run --session` end to end with the agent and the fake libcuda
 *     (tests/fakecuda/schedapp): the tenant's environment, a best-effort
 *     launch held while a latency-critical launch is in flight and never
 *     longer than the hold limit, a dead tenant's launches in flight
 *     cleared by a hold.
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy/sched.h"

#define POLICIES TEST_BPF_DIR "/policies"
#define LC_BE POLICIES "/sched_lc_be.bpf.o"
#define EVIL TEST_BPF_DIR "/tests/policies/sched_evil.bpf.o"
#define AGENT "build/libgpuext-agent.so"
#define SCHEDAPP "build/fakecuda/schedapp"

static char rt_dir[64];
static int run_pid; /* the test's, also in forked children */
static int notices;
static char all_notices[4096]; /* every notice since notices was reset, one a line */

static void count_notice(const char *msg)
{
	size_t n = notices++ ? strlen(all_notices) : 0;
	snprintf(all_notices + n, sizeof(all_notices) - n, "%s\n", msg);
}

/* A process that is running (not gone, not a zombie nobody reaped). */
static int running(int pid)
{
	return sched_pid_alive((uint32_t)pid, sched_pid_start((uint32_t)pid));
}

/* A private XDG_RUNTIME_DIR (the MPS directories) and the fake control first on PATH. */
static int setup(void **state)
{
	char path[4096], cwd[2048];
	run_pid = (int)getpid();
	snprintf(rt_dir, sizeof(rt_dir), "/tmp/gpuext-sched-test-XXXXXX");
	if (!mkdtemp(rt_dir) || !getcwd(cwd, sizeof(cwd)))
		return -1;
	setenv("XDG_RUNTIME_DIR", rt_dir, 1);
	snprintf(path, sizeof(path), "%s/tests/fakecuda:%s", cwd, getenv("PATH"));
	setenv("PATH", path, 1);
	return 0;
}

/* Session names of this run: tests of several checkouts may run at once,
 * and sessions are per user and name. */
static const char *sn(const char *base)
{
	static char ring[8][48];
	static unsigned next;
	char *b = ring[next++ % 8];
	snprintf(b, sizeof(ring[0]), "%s-%d", base, run_pid);
	return b;
}

/* The runtime directory goes (the MPS directories in it: every session of
 * the tests has ended by now). */
static int teardown(void **state)
{
	char cmd[128];
	int status;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rt_dir);
	free(test_run_cmd(cmd, &status));
	return status;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct sched_opts opts(const char *name, enum gpu_sched_class k, const char *policy)
{
	return (struct sched_opts){.name = name, .klass = k, .policy = policy, .comm = "tenant",
				   .notice = count_notice};
}

/* The fake daemon's pid for session name, 0 when its pid file is gone. */
static int mps_daemon(const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/gpuext-mps-%s/pipe/fake-daemon.pid", rt_dir, name);
	char *s = test_read_file(path, NULL);
	int pid = s ? atoi(s) : 0;
	free(s);
	return pid;
}

static char *control_log(const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/gpuext-mps-%s/log/fake-control.log", rt_dir, name);
	char *s = test_read_file(path, NULL);
	return s ? s : strdup("");
}

static int session_exists(const char *name)
{
	char shm[128];
	snprintf(shm, sizeof(shm), "/gpuext-sched-%u-%s", (unsigned)getuid(), name);
	int fd = shm_open(shm, O_RDONLY, 0);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

/* ---- policies ---------------------------------------------------------- */

static struct sched_policy *open_policy(const char *path)
{
	struct sched_policy *pol;
	struct err e = {""};
	if (sched_policy_open(path, &pol, &e))
		fail_msg("%s", e.msg);
	return pol;
}

static struct sched_settings init_task(struct sched_policy *pol, enum gpu_sched_class k,
				       const char *comm, uint32_t tenant)
{
	struct gpu_sched_task_ctx c = {.pid = 1, .tenant = tenant, .klass = k, .nr_tenants = 1};
	struct sched_settings set = {.interleave = -1};
	int64_t r0;
	snprintf(c.comm, sizeof(c.comm), "%s", comm);
	assert_int_equal(sched_policy_task(pol, SCHED_OP_TASK_INIT, &c, &set, &r0), 0);
	return set;
}

static enum gpu_sched_decision admit(struct sched_policy *pol, enum gpu_sched_class k,
				     uint64_t lc_inflight, uint64_t now, uint64_t *delay)
{
	struct gpu_sched_launch_ctx c = {.tenant = 3, .klass = k, .grid = {1, 1, 1},
					 .block = {32, 1, 1}, .inflight = {lc_inflight, 2},
					 .now_ns = now};
	return sched_policy_admit(pol, &c, delay);
}

static void test_shipped_policies_load(void **state)
{
	static const char *const names[] = {"sched_lc_be", "sched_fixed_priority",
					    "sched_token_bucket", "sched_timeslice_by_name"};
	static const int admits[] = {1, 0, 1, 0};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[256];
		snprintf(path, sizeof(path), "%s/%s.bpf.o", POLICIES, names[i]);
		struct sched_policy *pol = open_policy(path);
		assert_true(sched_policy_has(pol, SCHED_OP_TASK_INIT));
		assert_int_equal(sched_policy_has(pol, SCHED_OP_LAUNCH_ADMIT), admits[i]);
		sched_policy_free(pol);
	}
}

static void test_memory_policy_is_not_a_sched_policy(void **state)
{
	struct sched_policy *pol;
	struct err e = {""};
	assert_int_equal(sched_policy_open(POLICIES "/lru.bpf.o", &pol, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "lru.bpf.o: no SEC(\".struct_ops\") variable of type "
				      "struct gpu_sched_ops"));
	assert_int_equal(sched_policy_ctx_size("gpu_launch_admit"),
			 sizeof(struct gpu_sched_launch_ctx));
	assert_int_equal(sched_policy_ctx_size("gpu_evict_prepare"), 0);
}

static void test_lc_be_decisions(void **state)
{
	struct sched_policy *pol = open_policy(LC_BE);
	uint64_t delay;
	struct sched_settings be = init_task(pol, GPU_SCHED_BE, "train", 0);
	struct sched_settings lc = init_task(pol, GPU_SCHED_LC, "infer", 1);
	assert_int_equal(be.sm_pct, 25);
	assert_int_equal(be.stream_prio, 0);
	assert_int_equal(lc.sm_pct, 0);
	assert_int_equal(lc.stream_prio, 5);
	assert_int_equal(admit(pol, GPU_SCHED_BE, 1, 0, &delay), GPU_SCHED_HOLD);
	assert_int_equal(admit(pol, GPU_SCHED_BE, 0, 0, &delay), GPU_SCHED_ADMIT);
	assert_int_equal(admit(pol, GPU_SCHED_LC, 3, 0, &delay), GPU_SCHED_ADMIT);
	sched_policy_free(pol);
}

static void test_fixed_priority_and_timeslice_by_name(void **state)
{
	struct sched_policy *pol = open_policy(POLICIES "/sched_fixed_priority.bpf.o");
	assert_int_equal(init_task(pol, GPU_SCHED_LC, "a", 0).stream_prio, 5);
	assert_int_equal(init_task(pol, GPU_SCHED_BE, "a", 0).stream_prio, 0);
	assert_int_equal(init_task(pol, GPU_SCHED_BE, "a", 0).sm_pct, 0);
	sched_policy_free(pol);

	pol = open_policy(POLICIES "/sched_timeslice_by_name.bpf.o");
	struct sched_settings inf = init_task(pol, GPU_SCHED_BE, "inference", 0);
	struct sched_settings tr = init_task(pol, GPU_SCHED_LC, "train", 0);
	assert_int_equal(inf.timeslice_us, 8000);
	assert_int_equal(inf.interleave, GPU_SCHED_IL_HIGH);
	assert_int_equal(tr.timeslice_us, 250);
	assert_int_equal(tr.interleave, -1);
	sched_policy_free(pol);
}

static void test_token_bucket(void **state)
{
	struct sched_policy *pol = open_policy(POLICIES "/sched_token_bucket.bpf.o");
	uint64_t delay, t0 = now_ns();
	init_task(pol, GPU_SCHED_BE, "be", 3); /* tenant 3: 8 tokens at t0 (its clock) */
	for (int i = 0; i < 8; i++)
		assert_int_equal(admit(pol, GPU_SCHED_BE, 0, t0, &delay), GPU_SCHED_ADMIT);
	assert_int_equal(admit(pol, GPU_SCHED_BE, 0, t0, &delay), GPU_SCHED_DELAY);
	assert_true(delay >= 4000 && delay <= 5001); /* 200/s: the next token in <= 5 ms */
	assert_int_equal(admit(pol, GPU_SCHED_LC, 0, t0, &delay), GPU_SCHED_ADMIT);
	/* 10 ms later: two tokens */
	assert_int_equal(admit(pol, GPU_SCHED_BE, 0, t0 + 10000000, &delay), GPU_SCHED_ADMIT);
	assert_int_equal(admit(pol, GPU_SCHED_BE, 0, t0 + 10000000, &delay), GPU_SCHED_ADMIT);
	assert_int_equal(admit(pol, GPU_SCHED_BE, 0, t0 + 10000000, &delay), GPU_SCHED_DELAY);
	sched_policy_free(pol);
}

static void test_evil_policy_refused(void **state)
{
	struct sched_policy *pol = open_policy(EVIL);
	uint64_t delay;
	struct sched_settings s = init_task(pol, GPU_SCHED_BE, "a", 0);
	assert_int_equal(s.sm_pct, 7);
	assert_int_equal(s.timeslice_us, 0);
	/* a settings helper from the launch hook is refused; 99 means admit */
	assert_int_equal(admit(pol, GPU_SCHED_BE, 1, 0, &delay), GPU_SCHED_ADMIT);
	sched_policy_free(pol);
}

/* ---- session and MPS ------------------------------------------------------ */

static void test_join_leave_refcount(void **state)
{
	struct sched_member *a, *b;
	struct err e = {""};
	struct sched_opts oa = opts(sn("refc"), GPU_SCHED_BE, LC_BE);
	struct sched_opts ob = opts(sn("refc"), GPU_SCHED_LC, NULL);
	if (sched_join(&oa, &a, &e))
		fail_msg("%s", e.msg);
	int daemon = mps_daemon(sn("refc"));
	assert_true(daemon > 0 && running(daemon));
	assert_true(sched_member_mps(a));
	assert_int_equal(sched_member_settings(a)->sm_pct, 25);
	/* a second tenant (another process): the same session, policy and daemon */
	int go[2], done[2];
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		if (sched_join(&ob, &b, &e))
			_exit(2);
		int ok = sched_member_tenant(b) == 1 && sched_member_settings(b)->stream_prio == 5 &&
			 sched_member_mps(b);
		if (write(done[1], "j", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		sched_leave(b);
		_exit(ok ? 0 : 4);
	}
	char c;
	assert_int_equal(read(done[0], &c, 1), 1);
	assert_int_equal(mps_daemon(sn("refc")), daemon);
	assert_int_equal(write(go[1], "g", 1), 1);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WEXITSTATUS(status), 0);
	/* the second left: the daemon stays for the first */
	assert_int_equal(mps_daemon(sn("refc")), daemon);
	assert_true(session_exists(sn("refc")));
	sched_leave(a);
	assert_int_equal(mps_daemon(sn("refc")), 0);
	assert_false(running(daemon));
	assert_false(session_exists(sn("refc")));
	char *log = control_log(sn("refc"));
	int starts = 0, quits = 0;
	for (char *p = log; (p = strstr(p, "start")); p++)
		starts++;
	for (char *p = log; (p = strstr(p, "quit")); p++)
		quits++;
	assert_int_equal(starts, 1);
	assert_int_equal(quits, 1);
	free(log);
	close(go[0]), close(go[1]), close(done[0]), close(done[1]);
}

/* A tenant killed without leaving is swept by the next joiner; it does not
 * keep the daemon. */
static void test_dead_tenant_swept(void **state)
{
	struct sched_member *a;
	struct err e = {""};
	struct sched_opts o = opts(sn("dead"), GPU_SCHED_LC, LC_BE);
	pid_t pid = fork();
	if (pid == 0) {
		struct sched_member *m;
		if (sched_join(&o, &m, &e))
			_exit(2);
		sched_launch_queued(m); /* dies with a launch in flight */
		raise(SIGKILL);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	int daemon = mps_daemon(sn("dead"));
	assert_true(daemon > 0);
	notices = 0;
	o.klass = GPU_SCHED_BE;
	if (sched_join(&o, &a, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(notices, 1);
	assert_non_null(strstr(all_notices, "is gone without leaving: removed"));
	assert_int_equal(sched_member_tenant(a), 0); /* the dead one's slot, reused */
	/* nothing in flight is left of it: a best-effort launch goes at once */
	const uint32_t dims[3] = {1, 1, 1};
	assert_true(sched_admit(a, dims, dims) < 1000000);
	sched_leave(a);
	assert_int_equal(mps_daemon(sn("dead")), 0);
	assert_false(running(daemon));
	assert_false(session_exists(sn("dead")));
}

/* A latency-critical tenant dies with launches in flight while a
 * best-effort one is holding: the hold checks liveness and goes on. */
static void test_hold_clears_dead_inflight(void **state)
{
	struct sched_member *be;
	struct err e = {""};
	struct sched_opts o = opts(sn("clear"), GPU_SCHED_BE, LC_BE);
	o.hold_limit_us = 200000;
	o.no_mps = 1;
	if (sched_join(&o, &be, &e))
		fail_msg("%s", e.msg);
	int done[2];
	assert_int_equal(pipe(done), 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct sched_member *m;
		o.klass = GPU_SCHED_LC;
		if (sched_join(&o, &m, &e))
			_exit(2);
		sched_launch_queued(m);
		if (write(done[1], "q", 1) != 1)
			_exit(3);
		pause();
		_exit(0);
	}
	char c;
	assert_int_equal(read(done[0], &c, 1), 1);
	/* alive: the best-effort launch is held to the limit */
	const uint32_t dims[3] = {1, 1, 1};
	uint64_t waited = sched_admit(be, dims, dims);
	assert_true(waited >= 200000000ull && waited < 1000000000ull);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	waited = sched_admit(be, dims, dims);
	assert_true(waited < 100000000ull); /* ~1 ms, then liveness */
	sched_leave(be);
	assert_false(session_exists(sn("clear")));
	close(done[0]), close(done[1]);
}

/* The last gpuext waits for a tenant process whose gpuext was killed. */
static void test_orphan_waited_for(void **state)
{
	struct sched_member *a;
	struct err e = {""};
	struct sched_opts o = opts(sn("orph"), GPU_SCHED_BE, NULL);
	if (sched_join(&o, &a, &e))
		fail_msg("%s", e.msg);
	int done[2];
	assert_int_equal(pipe(done), 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct sched_member *m;
		if (sched_join(&o, &m, &e))
			_exit(2);
		pid_t cmd = fork();
		if (cmd == 0) { /* CMD: outlives its gpuext by 400 ms */
			nanosleep(&(struct timespec){0, 400000000L}, NULL);
			_exit(0);
		}
		sched_set_child(m, cmd);
		if (write(done[1], "c", 1) != 1)
			_exit(3);
		raise(SIGKILL);
	}
	char c;
	assert_int_equal(read(done[0], &c, 1), 1);
	waitpid(pid, NULL, 0);
	uint64_t t0 = now_ns();
	notices = 0;
	sched_leave(a);
	uint64_t waited = now_ns() - t0;
	assert_true(waited >= 200000000ull);
	assert_non_null(strstr(all_notices, "waiting for tenant process"));
	assert_int_equal(mps_daemon(sn("orph")), 0);
	assert_false(session_exists(sn("orph")));
	close(done[0]), close(done[1]);
}

static void test_mps_failure_is_fail_open(void **state)
{
	struct sched_member *a;
	struct err e = {""};
	struct sched_opts o = opts(sn("nomps"), GPU_SCHED_BE, LC_BE);
	setenv("FAKE_MPS_FAIL", "1", 1);
	notices = 0;
	int err = sched_join(&o, &a, &e);
	unsetenv("FAKE_MPS_FAIL");
	if (err)
		fail_msg("%s", e.msg);
	assert_false(sched_member_mps(a));
	assert_non_null(strstr(all_notices, "SM share 25% ignored: the session has no MPS"));
	assert_int_equal(notices, 2); /* the control's failure, the share */
	unsetenv("CUDA_MPS_PIPE_DIRECTORY");
	assert_int_equal(sched_export_env(a), 0);
	assert_null(getenv("CUDA_MPS_PIPE_DIRECTORY"));
	assert_null(getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"));
	assert_non_null(getenv(SCHED_SESSION_ENV));
	unsetenv(SCHED_SESSION_ENV);
	unsetenv(SCHED_TENANT_ENV);
	sched_leave(a);
	assert_false(session_exists(sn("nomps")));
}

static void test_bad_names(void **state)
{
	struct sched_member *a;
	struct err e = {""};
	struct sched_opts o = opts("a/b", GPU_SCHED_BE, NULL);
	assert_int_equal(sched_join(&o, &a, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "session name 'a/b'"));
	o = opts(sn("bind"), GPU_SCHED_BE, EVIL);
	o.comm = "xyz"; /* sched_evil's gpu_bind refuses names starting with x */
	assert_int_equal(sched_join(&o, &a, &e), -EPERM);
	assert_non_null(strstr(e.msg, "gpu_bind refused this tenant (-1)"));
	assert_false(session_exists(sn("bind")));
	assert_int_equal(mps_daemon(sn("bind")), 0);
}

/* ---- gpuext run --session, with the agent and the fake libcuda ----------- */

/* gpuext run ARGS, where "@" in args stands for the session name of base. */
static char *cli(const char *base, const char *args, int *status)
{
	char cmd[4096], a[2048];
	size_t o = 0;
	for (const char *p = args; *p && o + 64 < sizeof(a); p++)
		o += (size_t)(*p == '@' ? snprintf(a + o, sizeof(a) - o, "%s", sn(base))
				       : snprintf(a + o, sizeof(a) - o, "%c", *p));
	snprintf(cmd, sizeof(cmd), "GPUEXT_AGENT=%s %s -v run %s", AGENT, test_cli_path(), a);
	char *out = test_run_cmd(cmd, status);
	assert_non_null(out);
	return out;
}

static void test_cli_environment(void **state)
{
	int status;
	char *out = cli("envs", "--session @ --class be --policy " LC_BE " -- env", &status);
	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25\n"));
	assert_non_null(strstr(out, "CUDA_MPS_PIPE_DIRECTORY="));
	assert_non_null(strstr(out, "/gpuext-mps-envs-"));
	assert_non_null(strstr(out, "GPUEXT_SCHED_TENANT=0\n"));
	assert_non_null(strstr(out, "libgpuext-agent.so"));
	free(out);
	out = cli("envs", "--session @ --class lc --policy " LC_BE " -- env", &status);
	assert_int_equal(status, 0);
	assert_null(strstr(out, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"));
	assert_non_null(strstr(out, "GPUEXT_SCHED_STREAM_PRIORITY=5\n"));
	free(out);
	assert_false(session_exists(sn("envs")));
	out = cli("envs", "--session @ --class xx -- true", &status);
	assert_int_equal(status, 2);
	assert_non_null(strstr(out, "--class 'xx': lc or be"));
	free(out);
	out = cli("envs", "--policy " LC_BE " -- true", &status);
	assert_int_equal(status, 2);
	assert_non_null(strstr(out, "--class and --policy need --session NAME"));
	free(out);
	out = cli("envs", "--session @ --policy " POLICIES "/lru.bpf.o -- true", &status);
	assert_int_equal(status, 1);
	assert_non_null(strstr(out, "type struct gpu_sched_ops"));
	free(out);
	assert_false(session_exists(sn("envs")));
}

static double max_launch_us(const char *out)
{
	const char *p = strstr(out, "schedapp ok launches=3 max_launch_us=");
	if (!p)
		fail_msg("no schedapp result in: %s", out);
	return atof(strstr(p, "max_launch_us=") + strlen("max_launch_us="));
}

/* A best-effort tenant's launches wait while a latency-critical launch is
 * in flight (this process is the LC tenant), at most the hold limit. */
static void test_cli_bounded_hold(void **state)
{
	struct sched_member *lc;
	struct err e = {""};
	struct sched_opts o = opts(sn("hold"), GPU_SCHED_LC, LC_BE);
	o.hold_limit_us = 60000;
	if (sched_join(&o, &lc, &e))
		fail_msg("%s", e.msg);
	sched_launch_queued(lc);
	int status;
	char *out = cli("hold", "--session @ --class be -- " SCHEDAPP " 3", &status);
	assert_int_equal(status, 0);
	double held = max_launch_us(out);
	if (held < 59000 || held >= 1000000)
		fail_msg("held %.0f us: %s", held, out);
	assert_non_null(strstr(out, ": 3 launches through admission, 3 held or delayed ("));
	assert_non_null(strstr(out, "), 3 cut by the hold limit"));
	free(out);
	sched_launch_completed(lc);
	out = cli("hold", "--session @ --class be -- " SCHEDAPP " 3", &status);
	assert_int_equal(status, 0);
	assert_true(max_launch_us(out) < 30000);
	assert_non_null(strstr(out, ": 3 launches through admission, 0 held or delayed"));
	free(out);
	/* a latency-critical tenant is never held, counts its launches in flight
	 * (a host function after each) and gets sched_lc_be's stream priority */
	sched_launch_queued(lc);
	char args[512], log[128];
	snprintf(log, sizeof(log), "%s/fakecuda.log", rt_dir);
	snprintf(args, sizeof(args), "--session @ --class lc -- env FAKECUDA_LOG=%s " SCHEDAPP " 3",
		 log);
	out = cli("hold", args, &status);
	assert_int_equal(status, 0);
	assert_true(max_launch_us(out) < 30000);
	free(out);
	char *calls = test_read_file(log, NULL);
	assert_non_null(calls);
	assert_non_null(strstr(calls, "stream prio -5\n"));
	int hostfuncs = 0;
	for (char *p = calls; (p = strstr(p, "hostfunc\n")); p++)
		hostfuncs++;
	assert_int_equal(hostfuncs, 3);
	free(calls);
	sched_leave(lc);
	assert_false(session_exists(sn("hold")));
	assert_int_equal(mps_daemon(sn("hold")), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_policies_load),
		cmocka_unit_test(test_memory_policy_is_not_a_sched_policy),
		cmocka_unit_test(test_lc_be_decisions),
		cmocka_unit_test(test_fixed_priority_and_timeslice_by_name),
		cmocka_unit_test(test_token_bucket),
		cmocka_unit_test(test_evil_policy_refused),
		cmocka_unit_test(test_join_leave_refcount),
		cmocka_unit_test(test_dead_tenant_swept),
		cmocka_unit_test(test_hold_clears_dead_inflight),
		cmocka_unit_test(test_orphan_waited_for),
		cmocka_unit_test(test_mps_failure_is_fail_open),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_cli_environment),
		cmocka_unit_test(test_cli_bounded_hold),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
