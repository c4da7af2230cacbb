/* SPDX-License-Identifier: MIT */
/*
 * agent_ahead.c - instrumentation ahead of a kernel's first launch.
 *
 * The driver's JIT compile is most of what instrumenting a kernel costs
 * (bench/first_launch.sh), and an application usually loads a module well
 * before it launches the kernels in it: cudart loads its fatbins at its
 * first call, then the application allocates and copies its input.  So
 * when a module is loaded in GPU 0's primary context, one background thread
 * instruments the kernels in it that a program targets (agent_instrument_
 * ahead), and the results wait in the instrumented-module cache for their
 * first launches; a launch that comes before its kernel is done waits for
 * the compile in progress (one at a time, under the agent's GPU lock) and
 * then does its own.  At most AGENT_AHEAD_MAX compiles per process are done
 * ahead (a module of many kernels that are never launched costs no more);
 * GPUEXT_AGENT_AHEAD=1 turns it on (see agent_ahead_on).  The thread works from its own copy of
 * a module's image (the application may unload the module meanwhile), and
 * is stopped, after the compile in progress, at exit.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "agent_impl.h"

enum {
	AGENT_AHEAD_MAX = 16,            /* compiles ahead per process */
	AGENT_AHEAD_MAX_IMAGE = 64 << 20 /* fatbins copied for it, bytes */
};

struct agent_ahead_job {
	struct agent_ahead_job *next;
	struct agent_module m; /* a private copy of the module's image */
	CUcontext ctx;         /* the one it was loaded in */
};

typedef CUresult (*capture_mode_fn)(CUstreamCaptureMode *);

static pthread_mutex_t agent_ahead_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t agent_ahead_cond = PTHREAD_COND_INITIALIZER;
static struct {
	struct agent_ahead_job *head, **tail;
	pthread_t thread;
	pid_t pid;  /* the process the thread runs in (a forked child has none) */
	int stop;
	int left;   /* compiles ahead still allowed */
} agent_ahead = {.left = AGENT_AHEAD_MAX};

static void agent_ahead_free(struct agent_ahead_job *j)
{
	for (size_t i = 0; i < j->m.input_cnt; i++)
		free(j->m.inputs[i]);
	free(j->m.inputs);
	free(j->m.owned);
	free(j->m.ptx);
	free(j);
}

/* A copy of m's image for the thread, or NULL (nothing to do ahead). */
static struct agent_ahead_job *agent_ahead_copy(const struct agent_module *m)
{
	struct agent_ahead_job *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->m.kind = m->kind;
	j->m.image = m->image;
	j->m.image_len = m->image_len;
	int ok = 0;
	switch (m->kind) {
	case AGENT_IMAGE_WRAPPER: /* in the application's binary: stays */
		ok = 1;
		break;
	case AGENT_IMAGE_FATBIN:
	case AGENT_IMAGE_PTX:
		if (m->image && m->image_len <= AGENT_AHEAD_MAX_IMAGE &&
		    (j->m.owned = malloc(m->image_len + 1))) {
			memcpy(j->m.owned, m->image, m->image_len);
			((char *)j->m.owned)[m->image_len] = '\0';
			j->m.image = j->m.owned;
			ok = 1;
		}
		break;
	case AGENT_IMAGE_LINKED:
		j->m.inputs = calloc(m->input_cnt, sizeof(char *));
		for (size_t i = 0; j->m.inputs && i < m->input_cnt; i++)
			if ((j->m.inputs[i] = strdup(m->inputs[i])))
				j->m.input_cnt++;
		ok = j->m.inputs && j->m.input_cnt == m->input_cnt;
		break;
	default: /* SASS only, or not captured: no PTX */
		break;
	}
	if (!ok) {
		agent_ahead_free(j);
		return NULL;
	}
	return j;
}

static void *agent_ahead_main(void *arg)
{
	/* relaxed capture mode: the modules this thread loads must not break
	 * another thread's stream capture (nor be refused by it) */
	capture_mode_fn capture = (capture_mode_fn)agent_real_driver(
		"cuThreadExchangeStreamCaptureMode");
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	if (capture)
		capture(&mode);
	pthread_mutex_lock(&agent_ahead_lock);
	for (;;) {
		while (!agent_ahead.head && !agent_ahead.stop)
			pthread_cond_wait(&agent_ahead_cond, &agent_ahead_lock);
		if (agent_ahead.stop)
			break;
		struct agent_ahead_job *j = agent_ahead.head;
		if (!(agent_ahead.head = j->next))
			agent_ahead.tail = &agent_ahead.head;
		int budget = agent_ahead.left;
		pthread_mutex_unlock(&agent_ahead_lock);
		int done = budget > 0 ? agent_instrument_ahead(&j->m, j->ctx, budget) : 0;
		agent_ahead_free(j);
		pthread_mutex_lock(&agent_ahead_lock);
		agent_ahead.left -= done;
	}
	pthread_mutex_unlock(&agent_ahead_lock);
	return NULL;
}

/* At exit, before cudart and the driver shut down (registered after
 * cudart's handler, so run before it): the compile in progress finishes,
 * the queue is dropped. */
static void agent_ahead_atexit(void)
{
	pthread_mutex_lock(&agent_ahead_lock);
	int mine = agent_ahead.pid == getpid();
	agent_ahead.stop = 1;
	pthread_cond_broadcast(&agent_ahead_cond);
	pthread_mutex_unlock(&agent_ahead_lock);
	if (mine)
		pthread_join(agent_ahead.thread, NULL);
}

/* Off unless GPUEXT_AGENT_AHEAD=1: cudart (CUDA_MODULE_LOADING=LAZY, the
 * default) loads a module only at the first launch from it, 0.1-0.2 ms
 * before (bench/results/2026-11-22-h200-first-launch.md), which leaves
 * nothing to do ahead; applications that load modules themselves, early,
 * gain. */
static int agent_ahead_on(void)
{
	const char *v = getenv("GPUEXT_AGENT_AHEAD");
	return v && !strcmp(v, "1");
}

void agent_ahead_module(const struct agent_module *m, CUcontext ctx)
{
	if (!agent_ahead_on() || !ctx)
		return;
	pthread_mutex_lock(&agent_ahead_lock);
	int room = agent_ahead.left > 0 && !agent_ahead.stop;
	pthread_mutex_unlock(&agent_ahead_lock);
	struct agent_ahead_job *j = room ? agent_ahead_copy(m) : NULL;
	if (!j)
		return;
	j->ctx = ctx;
	pthread_mutex_lock(&agent_ahead_lock);
	if (agent_ahead.pid != getpid() && !agent_ahead.stop) {
		/* no thread in this process yet (or only the parent's, before a
		 * fork): its queue, if any, is the parent's work */
		static int registered;
		agent_ahead.head = NULL;
		agent_ahead.tail = &agent_ahead.head;
		if (!pthread_create(&agent_ahead.thread, NULL, agent_ahead_main, NULL)) {
			agent_ahead.pid = getpid();
			if (!registered++)
				atexit(agent_ahead_atexit);
		}
	}
	if (agent_ahead.pid == getpid() && !agent_ahead.stop) {
		j->next = NULL;
		*agent_ahead.tail = j;
		agent_ahead.tail = &j->next;
		j = NULL;
		pthread_cond_signal(&agent_ahead_cond);
	}
	pthread_mutex_unlock(&agent_ahead_lock);
	if (j)
		agent_ahead_free(j);
}
