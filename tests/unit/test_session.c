/* SPDX-License-Identifier: MIT */
/*
 * The session segment: what `gpuext run` creates is what the agent opens,
 * maps shared both ways (also across a fork), global data initialised,
 * bad names and corrupt headers refused with a message.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf/object.h"
#include "bpf/session.h"
#include "testutil.h"

#define OBJ TEST_BPF_DIR "/tests/progs/"

static struct session *create(const char *file)
{
	struct object *obj;
	struct session *s;
	struct err e = {{0}};
	if (object_open(file, &obj, &e))
		fail_msg("%s", e.msg);
	if (session_create(obj, &s, &e))
		fail_msg("%s", e.msg);
	return s;
}

static void test_shared_both_ways(void **state)
{
	struct session *s = create(OBJ "hash_count.bpf.o");
	struct session *a;
	struct err e = {{0}};
	assert_int_equal(session_open(s->name, &a, &e), 0);
	assert_int_equal(a->obj->map_cnt, s->obj->map_cnt);
	assert_true(s->obj->map_cnt > 0);
	struct map *cli = s->obj->maps[0].map, *agent = a->obj->maps[0].map;
	const struct map_def *d = map_get_def(cli);
	unsigned char key[64] = {7}, val[4096] = {0}, out[4096];
	memset(val, 0x5a, d->value_size);
	assert_int_equal(map_update_all_cpus(agent, key, val, MAP_ANY), 0);
	assert_int_equal(map_lookup_copy(cli, key, out), 0);
	assert_memory_equal(out, val, d->value_size);
	/* the programs of the agent's object point at the shared maps */
	for (size_t p = 0; p < a->obj->prog_cnt; p++)
		if (a->obj->progs[p]->map_cnt)
			assert_ptr_equal(a->obj->progs[p]->maps[0], agent);
	session_count(a, SESSION_INSTRUMENTED);
	session_note(a, "kernel %s instrumented", "vecadd");
	assert_int_equal(s->hdr->status.kernels_instrumented, 1);
	assert_string_equal(s->hdr->status.last_msg, "kernel vecadd instrumented");
	session_close(a);
	char name[64];
	strcpy(name, s->name);
	session_close(s);
	/* unlinked by its creator */
	assert_int_not_equal(session_open(name, &a, &e), 0);
	assert_non_null(strstr(e.msg, name));
}

static void test_fork_and_global_data(void **state)
{
	struct session *s = create(OBJ "global_data.bpf.o");
	int status;
	pid_t pid = fork();
	if (pid == 0) {
		struct session *a;
		struct err e = {{0}};
		if (session_open(s->name, &a, &e))
			_exit(2);
		/* global data arrives initialised: same bytes as the creator's */
		for (size_t i = 0; i < a->obj->map_cnt; i++) {
			const struct map_def *d = &a->obj->maps[i].def;
			if (a->obj->maps[i].init &&
			    memcmp(map_array_base(a->obj->maps[i].map),
				   map_array_base(s->obj->maps[i].map), d->value_size))
				_exit(3);
		}
		a->hdr->status.attached = 1;
		session_close(a);
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(s->hdr->status.attached, 1);
	session_close(s);
}

/* per-CPU maps get a slot per GPU SM, on both sides */
static void test_percpu_slots(void **state)
{
	struct session *s = create(OBJ "percpu_array.bpf.o"), *a;
	struct err e = {{0}};
	assert_int_equal(session_open(s->name, &a, &e), 0);
	int found = 0;
	for (size_t i = 0; i < s->obj->map_cnt; i++) {
		if (s->obj->maps[i].def.type != MAP_TYPE_PERCPU_ARRAY)
			continue;
		found = 1;
		assert_true(map_nr_cpus(s->obj->maps[i].map) >= SESSION_MAP_CPUS);
		assert_int_equal(map_nr_cpus(a->obj->maps[i].map), map_nr_cpus(s->obj->maps[i].map));
	}
	assert_true(found);
	session_close(a);
	session_close(s);
}

static void test_bad_sessions(void **state)
{
	struct session *a;
	struct err e = {{0}};
	assert_int_equal(session_open("/gpuext-no-such-session", &a, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "/gpuext-no-such-session"));
	struct session *s = create(OBJ "hash_count.bpf.o");
	s->hdr->magic ^= 1;
	assert_int_equal(session_open(s->name, &a, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "not a gpuext session"));
	s->hdr->magic ^= 1;
	s->hdr->obj_len = s->hdr->size; /* image runs past the end */
	assert_int_equal(session_open(s->name, &a, &e), -EINVAL);
	session_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_both_ways),
		cmocka_unit_test(test_fork_and_global_data),
		cmocka_unit_test(test_percpu_slots),
		cmocka_unit_test(test_bad_sessions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
