/* SPDX-License-Identifier: MIT */
/*
 * sched_mps.c - the MPS control daemon of a scheduling session.
 *
 * One daemon per session, with its own pipe directory: only processes given
 * CUDA_MPS_PIPE_DIRECTORY=DIR/pipe join it, nothing else on the machine
 * does, and no GPU setting (compute mode) is touched.  Measured on the H200
 * (bench/results/2026-11-22-h200-sched.md): MPS with each best-effort
 * client capped at 25% of the SMs is what lowers the latency-critical
 * tenants' p99 88x; the driver's time-slicing controls did nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sched.h"

enum { SCHED_MPS_WAIT_MS = 15000 };

void sched_mps_paths(const char *dir, char *pipe, char *log, size_t len)
{
	snprintf(pipe, len, "%s/pipe", dir);
	snprintf(log, len, "%s/log", dir);
}

/* A private directory: created 0700, or existing, ours and 0700. */
static int sched_mps_mkdir(const char *path, struct err *e)
{
	struct stat st;
	if (mkdir(path, 0700) && errno != EEXIST)
		return err_set(e, errno, "mps: mkdir %s: %s", path, strerror(errno));
	if (lstat(path, &st))
		return err_set(e, errno, "mps: %s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
		return err_set(e, EPERM, "mps: %s is not a private directory of this user "
			       "(mode 0700)", path);
	return 0;
}

/*
 * Run control with the session's directories in its environment, input
 * on its stdin (NULL: /dev/null), output to DIR/log/gpuext-control.out;
 * wait at most SCHED_MPS_WAIT_MS (then kill it).  0 when it exits 0, else
 * a negative errno with the message.
 */
static int sched_mps_run(const char *control, const char *dir, const char *arg,
			 const char *input, struct err *e)
{
	char pipe_dir[4096], log_dir[4096], out[4200];
	int in[2];
	sched_mps_paths(dir, pipe_dir, log_dir, sizeof(pipe_dir));
	snprintf(out, sizeof(out), "%s/gpuext-control.out", log_dir);
	if (pipe2(in, O_CLOEXEC))
		return err_set(e, errno, "mps: pipe: %s", strerror(errno));
	/* The input goes in before the control runs (a few bytes: the pipe
	 * holds them), so a control that exits without reading cannot make
	 * this process take a SIGPIPE. */
	if (input && write(in[1], input, strlen(input)) != (ssize_t)strlen(input)) {
		int errnum = errno;
		close(in[0]);
		close(in[1]);
		return err_set(e, errnum, "mps: pipe: %s", strerror(errnum));
	}
	pid_t pid = fork();
	if (pid < 0) {
		int errnum = errno;
		close(in[0]);
		close(in[1]);
		return err_set(e, errnum, "mps: fork: %s", strerror(errnum));
	}
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		dup2(in[0], 0);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		setenv("CUDA_MPS_PIPE_DIRECTORY", pipe_dir, 1);
		setenv("CUDA_MPS_LOG_DIRECTORY", log_dir, 1);
		execlp(control, control, arg, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(in[1]);
	int status = 0;
	for (int ms = 0;; ms++) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return err_set(e, errno, "mps: waitpid: %s", strerror(errno));
		if (ms == SCHED_MPS_WAIT_MS) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return err_set(e, ETIMEDOUT, "mps: %s %s did not finish in %d s", control,
				       arg ? arg : "", SCHED_MPS_WAIT_MS / 1000);
		}
		nanosleep(&(struct timespec){0, 1000000L}, NULL);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return err_set(e, ENOENT, "mps: %s: not found or not executable (see %s)",
			       control, out);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return err_set(e, EIO, "mps: %s %s failed (status %d; see %s)", control,
			       arg ? arg : "", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			       out);
	return 0;
}

int sched_mps_start(const char *control, const char *dir, struct err *e)
{
	char pipe_dir[4096], log_dir[4096];
	sched_mps_paths(dir, pipe_dir, log_dir, sizeof(pipe_dir));
	int err = sched_mps_mkdir(dir, e);
	err = err ? err : sched_mps_mkdir(pipe_dir, e);
	err = err ? err : sched_mps_mkdir(log_dir, e);
	if (err)
		return err;
	return sched_mps_run(control, dir, "-d", NULL, e);
}

int sched_mps_stop(const char *control, const char *dir, struct err *e)
{
	return sched_mps_run(control, dir, NULL, "quit\n", e);
}
