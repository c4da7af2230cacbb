/* SPDX-License-Identifier: MIT */
/*
 * sched_session.c - the shared segment of a scheduling session: join,
 * leave, liveness, the tenant's environment, the agent's attach.
 *
 * One POSIX shared-memory segment per user and session name
 * ("/gpuext-sched-UID-NAME", mode 0600).  Its lock is a process-shared
 * robust mutex: a process killed while holding it (kill -9 of any tenant's
 * gpuext) hands it to the next locker, which finds the table consistent
 * because every change under the lock is a single slot's fields.
 *
 * A tenant slot is live while its gpuext or its CMD lives (pid and start
 * time, so a reused pid does not count).  Dead slots are swept (and their
 * task_destroy run) by whoever takes the lock next.  The last gpuext to
 * leave waits for orphaned CMDs (their gpuext was killed: they still run on
 * the MPS server), then stops the MPS server and removes the session.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bpf/session.h"
#include "sched_impl.h"

#define SCHED_MAGIC 0x64686373u /* "schd" */
enum { SCHED_VERSION = 1 };

__attribute__((format(printf, 2, 3))) static void sched_notice(const struct sched_member *m,
							   const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (m->notice)
		m->notice(buf);
	else
		fprintf(stderr, "gpuext: sched: %s\n", buf);
}

/* ---- liveness ------------------------------------------------------- */

uint64_t sched_pid_start(uint32_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* Field 22 (starttime) counted after the ")" that ends comm (field 2). */
	char *p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

int sched_pid_alive(uint32_t pid, uint64_t start_ticks)
{
	if (!pid)
		return 0;
	uint64_t now = sched_pid_start(pid);
	if (!now)
		return 0;
	char path[64], state = 0;
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	FILE *f = fopen(path, "r");
	if (f) { /* a zombie has ended (its parent was killed and not reaped yet) */
		if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
			state = 0;
		fclose(f);
	}
	return now == start_ticks && state != 'Z';
}

int sched_slot_alive(const struct sched_tenant *t)
{
	return sched_pid_alive(t->pid, t->pid_start) ||
	       sched_pid_alive(t->child_pid, t->child_start);
}

/* ---- the segment ------------------------------------------------------- */

static void sched_lock(struct sched_shm *shm)
{
	if (pthread_mutex_lock(&shm->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&shm->lock);
}

static void sched_unlock(struct sched_shm *shm)
{
	pthread_mutex_unlock(&shm->lock);
}

static int sched_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (n < 1 || n > 40)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(name[i] == '_' || name[i] == '-' || name[i] == '.' ||
		      (name[i] >= '0' && name[i] <= '9') || ((name[i] | 32) >= 'a' && (name[i] | 32) <= 'z')))
			return 0;
	return 1;
}

static void sched_mps_dir(char *out, size_t len, const char *name)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	if (rt && *rt && !stat(rt, &st) && S_ISDIR(st.st_mode) && st.st_uid == getuid())
		snprintf(out, len, "%s/gpuext-mps-%s", rt, name);
	else
		snprintf(out, len, "/tmp/gpuext-mps-%u-%s", (unsigned)getuid(), name);
}

static void sched_shm_init(struct sched_shm *shm, const struct sched_opts *o)
{
	pthread_mutexattr_t a;
	memset(shm, 0, sizeof(*shm));
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&shm->lock, &a);
	pthread_mutexattr_destroy(&a);
	shm->version = SCHED_VERSION;
	shm->hold_limit_us = o->hold_limit_us ? o->hold_limit_us : SCHED_HOLD_LIMIT_US;
	sched_mps_dir(shm->mps_dir, sizeof(shm->mps_dir), o->name);
	snprintf(shm->mps_control, sizeof(shm->mps_control), "%s",
		 o->mps_control ? o->mps_control : "nvidia-cuda-mps-control");
	__atomic_store_n(&shm->magic, SCHED_MAGIC, __ATOMIC_RELEASE);
}

/* Map the segment name (create: made here, else it must exist); waits
 * (bounded) for a creator that has not finished initialising it. */
static int sched_map(const char *name, int create, const struct sched_opts *o,
		     struct sched_shm **out, struct err *e)
{
	int fd = create ? shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
	int made = fd >= 0;
	if (!made)
		fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0)
		return err_set(e, errno, "session %s: %s", name, strerror(errno));
	if (made && ftruncate(fd, sizeof(struct sched_shm))) {
		int errnum = errno;
		close(fd);
		shm_unlink(name);
		return err_set(e, errnum, "session %s: ftruncate: %s", name, strerror(errnum));
	}
	struct stat st;
	for (int ms = 0; !made && !fstat(fd, &st) && st.st_size != sizeof(struct sched_shm); ms++) {
		if (ms == 2000 || (st.st_size && st.st_size != sizeof(struct sched_shm))) {
			close(fd);
			return err_set(e, EINVAL, "session %s: not a gpuext scheduling session of "
				       "version %d (size %lld)", name, SCHED_VERSION,
				       (long long)st.st_size);
		}
		nanosleep(&(struct timespec){0, 1000000L}, NULL);
	}
	struct sched_shm *shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (shm == MAP_FAILED)
		return err_set(e, errno, "session %s: mmap: %s", name, strerror(errno));
	if (made)
		sched_shm_init(shm, o);
	for (int ms = 0; __atomic_load_n(&shm->magic, __ATOMIC_ACQUIRE) != SCHED_MAGIC; ms++) {
		if (ms == 2000) {
			munmap(shm, sizeof(*shm));
			return err_set(e, EINVAL, "session %s: not initialised by its creator", name);
		}
		nanosleep(&(struct timespec){0, 1000000L}, NULL);
	}
	if (shm->version != SCHED_VERSION) {
		munmap(shm, sizeof(*shm));
		return err_set(e, EINVAL, "session %s: version %u, this gpuext speaks %d", name,
			       shm->version, SCHED_VERSION);
	}
	*out = shm;
	return 0;
}

static void sched_task_ctx(const struct sched_shm *shm, int i, struct gpu_sched_task_ctx *c)
{
	const struct sched_tenant *t = &shm->t[i];
	memset(c, 0, sizeof(*c));
	c->pid = t->pid;
	c->tenant = (uint32_t)i;
	c->klass = t->klass;
	c->mps = shm->mps == SCHED_MPS_UP;
	memcpy(c->comm, t->comm, sizeof(c->comm));
	for (int k = 0; k < GPU_SCHED_MAX_TENANTS; k++)
		if (shm->t[k].used) {
			c->nr_tenants++;
			c->nr_class[shm->t[k].klass & 1]++;
		}
}

static void sched_destroy_task(struct sched_member *m, int i)
{
	struct gpu_sched_task_ctx c;
	struct sched_settings set = m->shm->t[i].set;
	int64_t r0;
	if (sched_policy_has(m->pol, SCHED_OP_TASK_DESTROY)) {
		sched_task_ctx(m->shm, i, &c);
		sched_policy_task(m->pol, SCHED_OP_TASK_DESTROY, &c, &set, &r0);
	}
	__atomic_store_n(&m->shm->t[i].inflight, 0, __ATOMIC_RELAXED);
	m->shm->t[i].used = 0;
}

/* Under the lock: free the slots of tenants whose processes are all gone. */
static void sched_sweep(struct sched_member *m)
{
	for (int i = 0; i < GPU_SCHED_MAX_TENANTS; i++) {
		struct sched_tenant *t = &m->shm->t[i];
		if (!t->used || i == m->tenant || sched_slot_alive(t))
			continue;
		sched_notice(m, "tenant %d (%s, pid %u) is gone without leaving: removed", i,
			     t->comm, t->pid);
		sched_destroy_task(m, i);
	}
}

/* ---- the policy --------------------------------------------------------- */

static int sched_open_policy_session(struct sched_member *m, struct err *e)
{
	int err = session_open(m->shm->policy_session, &m->pol_session, e);
	err = err ? err : sched_policy_from_object(m->pol_session->obj, &m->pol, e);
	return err;
}

/* First joiner: the policy's object in a session of its own (its maps are
 * shared by every tenant), the MPS server. */
static int sched_setup(struct sched_member *m, const struct sched_opts *o, struct err *e)
{
	struct sched_shm *shm = m->shm;
	if (o->policy) {
		struct object *obj;
		int err = object_open(o->policy, &obj, e);
		if (!err && (err = session_create(obj, &m->pol_session, e)))
			object_free(obj);
		if (err)
			return err;
		m->pol_session->owner = 0; /* the last tenant to leave unlinks it */
		snprintf(shm->policy_session, sizeof(shm->policy_session), "%s",
			 m->pol_session->name);
		if ((err = sched_policy_from_object(m->pol_session->obj, &m->pol, e))) {
			shm_unlink(shm->policy_session);
			shm->policy_session[0] = 0;
			return err;
		}
	}
	shm->mps = SCHED_MPS_FAILED;
	if (!o->no_mps) {
		struct err me = {{0}};
		if (sched_mps_start(shm->mps_control, shm->mps_dir, &me))
			sched_notice(m, "%s; the session's tenants run with the driver's time "
				     "slicing (no SM shares)", me.msg);
		else
			shm->mps = SCHED_MPS_UP;
	}
	shm->ready = 1;
	return 0;
}

/* A later joiner: the session's policy; a different --policy is named. */
static int sched_take_policy(struct sched_member *m, const struct sched_opts *o, struct err *e)
{
	if (!m->shm->policy_session[0]) {
		if (o->policy)
			sched_notice(m, "session %s runs without a policy (its first tenant "
				     "gave none): %s ignored", o->name, o->policy);
		return 0;
	}
	int err = sched_open_policy_session(m, e);
	if (err || !o->policy)
		return err;
	struct object *mine;
	struct err ignored;
	const struct object *theirs = m->pol_session->obj;
	if (!object_open(o->policy, &mine, &ignored)) {
		if (mine->image_len != theirs->image_len ||
		    memcmp(mine->image, theirs->image, mine->image_len))
			sched_notice(m, "session %s already runs another policy: %s ignored",
				     o->name, o->policy);
		object_free(mine);
	}
	return 0;
}

/* ---- join and leave ------------------------------------------------- */

static void sched_member_free(struct sched_member *m)
{
	sched_policy_free(m->pol);
	session_close(m->pol_session);
	if (m->shm)
		munmap(m->shm, sizeof(*m->shm));
	free(m);
}

/* Under the lock: a free slot for this process, or -1. */
static int sched_take_slot(struct sched_member *m, const struct sched_opts *o)
{
	for (int i = 0; i < GPU_SCHED_MAX_TENANTS; i++) {
		struct sched_tenant *t = &m->shm->t[i];
		if (t->used)
			continue;
		memset(t, 0, sizeof(*t));
		t->klass = o->klass;
		t->pid = (uint32_t)getpid();
		t->pid_start = sched_pid_start(t->pid);
		t->set.interleave = -1;
		snprintf(t->comm, sizeof(t->comm), "%s", o->comm ? o->comm : "");
		t->used = 1;
		return i;
	}
	return -1;
}

int sched_join(const struct sched_opts *o, struct sched_member **out, struct err *e)
{
	struct sched_member *m;
	int err = 0;

	*out = NULL;
	if (!sched_name_ok(o->name))
		return err_set(e, EINVAL, "session name '%s': 1 to 40 of A-Z a-z 0-9 _ . -",
			       o->name ? o->name : "");
	if (o->klass != GPU_SCHED_LC && o->klass != GPU_SCHED_BE)
		return err_set(e, EINVAL, "class %d: lc or be", (int)o->klass);
	if (!(m = calloc(1, sizeof(*m))))
		return err_set(e, ENOMEM, "sched: out of memory");
	m->notice = o->notice;
	m->tenant = -1;
	snprintf(m->shm_name, sizeof(m->shm_name), "/gpuext-sched-%u-%s", (unsigned)getuid(),
		 o->name);
	/* A session being torn down is dead: start over with a new one. */
	for (int tries = 0;; tries++) {
		if ((err = sched_map(m->shm_name, 1, o, &m->shm, e)))
			if (err != -ENOENT || tries > 100)
				break;
		if (err)
			continue;
		sched_lock(m->shm);
		if (!m->shm->dead)
			break;
		sched_unlock(m->shm);
		munmap(m->shm, sizeof(*m->shm));
		m->shm = NULL;
		nanosleep(&(struct timespec){0, 1000000L}, NULL);
	}
	if (err) {
		sched_member_free(m);
		return err;
	}
	struct sched_shm *shm = m->shm;
	err = shm->ready ? sched_take_policy(m, o, e) : sched_setup(m, o, e);
	sched_sweep(m);
	if (!err && (m->tenant = sched_take_slot(m, o)) < 0)
		err = err_set(e, EBUSY, "session %s: %d tenants already", o->name,
			      GPU_SCHED_MAX_TENANTS);
	int64_t r0 = 0;
	struct gpu_sched_task_ctx c;
	if (!err) {
		struct sched_tenant *t = &shm->t[m->tenant];
		sched_task_ctx(shm, m->tenant, &c);
		if (sched_policy_task(m->pol, SCHED_OP_TASK_INIT, &c, &t->set, &r0))
			sched_notice(m, "gpu_task_init failed to run: driver defaults");
		if (!sched_policy_task(m->pol, SCHED_OP_BIND, &c, &t->set, &r0) && r0 < 0)
			err = err_set(e, EPERM, "session %s: the policy's gpu_bind refused this "
				      "tenant (%lld)", o->name, (long long)r0);
		if (t->set.sm_pct && shm->mps != SCHED_MPS_UP)
			sched_notice(m, "SM share %u%% ignored: the session has no MPS server",
				     t->set.sm_pct);
	}
	sched_unlock(shm);
	if (err) {
		if (m->tenant >= 0 || !shm->ready) {
			sched_leave(m); /* the slot, or a half-made session */
			return err;
		}
		sched_member_free(m);
		return err;
	}
	*out = m;
	return 0;
}

void sched_set_child(struct sched_member *m, pid_t child)
{
	struct sched_tenant *t = &m->shm->t[m->tenant];
	t->child_start = sched_pid_start((uint32_t)child);
	__atomic_store_n(&t->child_pid, (uint32_t)child, __ATOMIC_RELEASE);
}

const struct sched_settings *sched_member_settings(const struct sched_member *m)
{
	return &m->shm->t[m->tenant].set;
}

int sched_member_tenant(const struct sched_member *m)
{
	return m->tenant;
}

int sched_member_mps(const struct sched_member *m)
{
	return m->shm->mps == SCHED_MPS_UP;
}

void sched_member_stats(const struct sched_member *m, struct sched_stats *out)
{
	const struct sched_stats *s = &m->shm->t[m->tenant].stats;
	out->launches = __atomic_load_n(&s->launches, __ATOMIC_RELAXED);
	out->held = __atomic_load_n(&s->held, __ATOMIC_RELAXED);
	out->held_ns = __atomic_load_n(&s->held_ns, __ATOMIC_RELAXED);
	out->capped = __atomic_load_n(&s->capped, __ATOMIC_RELAXED);
}

static int sched_setenv_u64(const char *name, uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	return setenv(name, buf, 1);
}

int sched_export_env(const struct sched_member *m)
{
	const struct sched_shm *shm = m->shm;
	const struct sched_settings *s = &shm->t[m->tenant].set;
	static const char *const levels[] = {"low", "medium", "high"};
	int err = setenv(SCHED_SESSION_ENV, m->shm_name, 1);
	err = err ? err : sched_setenv_u64(SCHED_TENANT_ENV, (uint64_t)m->tenant);
	if (!err && shm->mps == SCHED_MPS_UP) {
		char pipe[300], log[300];
		sched_mps_paths(shm->mps_dir, pipe, log, sizeof(pipe));
		err = setenv("CUDA_MPS_PIPE_DIRECTORY", pipe, 1);
		err = err ? err : setenv("CUDA_MPS_LOG_DIRECTORY", log, 1);
		if (!err && s->sm_pct)
			err = sched_setenv_u64("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", s->sm_pct);
	}
	if (!err && s->timeslice_us)
		err = sched_setenv_u64("GPUEXT_SCHED_TIMESLICE_US", s->timeslice_us);
	if (!err && s->interleave >= 0 && s->interleave <= GPU_SCHED_IL_HIGH)
		err = setenv("GPUEXT_SCHED_INTERLEAVE", levels[s->interleave], 1);
	if (!err && s->stream_prio)
		err = sched_setenv_u64(SCHED_STREAM_PRIO_ENV, s->stream_prio);
	return err ? -errno : 0;
}

/* Under the lock: live slots whose gpuext lives, and orphaned ones (the
 * gpuext is gone, its CMD still runs). */
static void sched_count(const struct sched_shm *shm, int *with_gpuext, int *orphans,
			uint32_t *orphan_pid)
{
	*with_gpuext = *orphans = 0;
	for (int i = 0; i < GPU_SCHED_MAX_TENANTS; i++) {
		const struct sched_tenant *t = &shm->t[i];
		if (!t->used)
			continue;
		if (sched_pid_alive(t->pid, t->pid_start)) {
			(*with_gpuext)++;
		} else {
			(*orphans)++;
			*orphan_pid = t->child_pid;
		}
	}
}

void sched_leave(struct sched_member *m)
{
	struct sched_shm *shm = m->shm;
	int with_gpuext, orphans, noticed = 0;
	uint32_t orphan = 0;

	sched_lock(shm);
	if (m->tenant >= 0)
		sched_destroy_task(m, m->tenant);
	m->tenant = -1;
	for (;;) {
		sched_sweep(m);
		sched_count(shm, &with_gpuext, &orphans, &orphan);
		if (with_gpuext || !orphans)
			break;
		/* The last gpuext: the orphans still use the MPS server. */
		sched_unlock(shm);
		if (!noticed++)
			sched_notice(m, "waiting for tenant process %u (its gpuext ended) before "
				     "stopping the session", orphan);
		nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
		sched_lock(shm);
	}
	if (!with_gpuext) {
		shm->dead = 1;
		if (shm->mps == SCHED_MPS_UP) {
			struct err me = {{0}};
			if (sched_mps_stop(shm->mps_control, shm->mps_dir, &me))
				sched_notice(m, "stopping the MPS server: %s", me.msg);
			shm->mps = SCHED_MPS_OFF;
		}
		if (shm->policy_session[0])
			shm_unlink(shm->policy_session);
		shm_unlink(m->shm_name);
	}
	sched_unlock(shm);
	sched_member_free(m);
}

/* ---- the agent ------------------------------------------------------------- */

int sched_attach(const char *shm_name, int tenant, struct sched_member **out, struct err *e)
{
	struct sched_member *m = calloc(1, sizeof(*m));
	struct sched_opts none = {0};
	int err;

	*out = NULL;
	if (!m)
		return err_set(e, ENOMEM, "sched: out of memory");
	snprintf(m->shm_name, sizeof(m->shm_name), "%s", shm_name);
	m->tenant = tenant;
	err = sched_map(shm_name, 0, &none, &m->shm, e);
	if (!err && (tenant < 0 || tenant >= GPU_SCHED_MAX_TENANTS || !m->shm->t[tenant].used))
		err = err_set(e, EINVAL, "session %s: no tenant %d", shm_name, tenant);
	if (!err && m->shm->policy_session[0])
		err = sched_open_policy_session(m, e);
	if (err) {
		sched_member_free(m);
		return err;
	}
	*out = m;
	return 0;
}

int sched_admitting(const struct sched_member *m)
{
	return m && sched_policy_has(m->pol, SCHED_OP_LAUNCH_ADMIT);
}

void sched_detach(struct sched_member *m)
{
	if (m)
		sched_member_free(m);
}
