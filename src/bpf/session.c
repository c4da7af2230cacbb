/* SPDX-License-Identifier: MIT */
/*
 * session.c - the shared-memory segment of a `gpuext run` (see session.h).
 */
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

enum { SESSION_ALIGN = 64 };

static size_t session_align(size_t x)
{
	return (x + SESSION_ALIGN - 1) & ~(size_t)(SESSION_ALIGN - 1);
}

/* CPU slots of the session's per-CPU maps (session.h). */
static unsigned session_cpus(const struct map_def *def)
{
	unsigned host = map_def_nr_cpus(def);
	return host > SESSION_MAP_CPUS ? host : SESSION_MAP_CPUS;
}

/* Point every program of obj at the handles of obj's maps. */
static void session_bind_progs(struct object *obj)
{
	for (size_t p = 0; p < obj->prog_cnt; p++)
		for (size_t i = 0; i < obj->map_cnt && i < obj->progs[p]->map_cnt; i++)
			obj->progs[p]->maps[i] = obj->maps[i].map;
}

static int session_map_all(struct session *s, int format, struct err *e)
{
	struct object *obj = s->obj;
	for (size_t i = 0; i < obj->map_cnt; i++) {
		struct object_map *m = &obj->maps[i];
		void *storage = (char *)s->hdr + s->hdr->map_off[i];
		int err = format ? map_format_storage_cpus(&m->def, storage, session_cpus(&m->def),
							   &m->map, e)
				 : map_open_storage(&m->def, storage, 0, &m->map, e);
		if (err) {
			err_prefix(e, "session %s: map '%s': ", s->name, m->def.name);
			return err;
		}
		if (format && m->init)
			memcpy(map_array_base(m->map), m->init, m->init_len);
	}
	session_bind_progs(obj);
	return 0;
}

int session_create(struct object *obj, struct session **out, struct err *e)
{
	if (obj->map_cnt > SESSION_MAX_MAPS)
		return err_set(e, E2BIG, "%s: %zu maps, a session holds at most %d",
			       obj->name, obj->map_cnt, SESSION_MAX_MAPS);
	struct session *s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(e, ENOMEM, "session: out of memory");
	size_t off = session_align(sizeof(struct session_hdr));
	size_t obj_off = off;
	off = session_align(off + obj->image_len);
	uint64_t map_off[SESSION_MAX_MAPS] = {0};
	for (size_t i = 0; i < obj->map_cnt; i++) {
		size_t sz = map_storage_size_cpus(&obj->maps[i].def, session_cpus(&obj->maps[i].def));
		if (!sz) {
			free(s);
			return err_set(e, EINVAL, "%s: map '%s': invalid definition", obj->name,
				       obj->maps[i].def.name);
		}
		map_off[i] = off;
		off = session_align(off + sz);
	}
	uint32_t rnd = 0;
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = (uint32_t)(uintptr_t)s ^ (uint32_t)getpid();
	snprintf(s->name, sizeof(s->name), "/gpuext-%d-%08x", (int)getpid(), rnd);
	int fd = shm_open(s->name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0) {
		int errnum = errno;
		free(s);
		return err_set(e, errnum, "session: shm_open: %s", strerror(errnum));
	}
	s->owner = 1;
	if (ftruncate(fd, (off_t)off) != 0) {
		int errnum = errno;
		close(fd);
		shm_unlink(s->name);
		free(s);
		return err_set(e, errnum, "session %s: ftruncate to %zu bytes: %s", s->name, off,
			       strerror(errnum));
	}
	void *base = mmap(NULL, off, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED) {
		int errnum = errno;
		shm_unlink(s->name);
		free(s);
		return err_set(e, errnum, "session: mmap: %s", strerror(errnum));
	}
	s->hdr = base;
	s->size = off;
	*s->hdr = (struct session_hdr){.magic = SESSION_MAGIC, .version = SESSION_VERSION,
				       .size = off, .obj_off = obj_off, .obj_len = obj->image_len,
				       .map_cnt = (uint32_t)obj->map_cnt};
	memcpy(s->hdr->map_off, map_off, sizeof(map_off));
	memcpy((char *)base + obj_off, obj->image, obj->image_len);
	s->obj = obj;
	int err = session_map_all(s, 1, e);
	if (err) {
		s->obj = NULL; /* the caller still owns obj */
		session_close(s);
		return err;
	}
	*out = s;
	return 0;
}

int session_open(const char *name, struct session **out, struct err *e)
{
	struct session *s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(e, ENOMEM, "session: out of memory");
	snprintf(s->name, sizeof(s->name), "%s", name);
	int fd = shm_open(name, O_RDWR, 0);
	if (fd < 0) {
		int errnum = errno;
		free(s);
		return err_set(e, errnum, "session %s: %s", name, strerror(errnum));
	}
	struct session_hdr h;
	off_t size = lseek(fd, 0, SEEK_END);
	if (size < (off_t)sizeof(h) || pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    h.magic != SESSION_MAGIC || h.version != SESSION_VERSION || h.size != (uint64_t)size ||
	    h.obj_off + h.obj_len > h.size || h.map_cnt > SESSION_MAX_MAPS) {
		close(fd);
		free(s);
		return err_set(e, EINVAL, "session %s: not a gpuext session of version %u", name,
			       SESSION_VERSION);
	}
	void *base = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED) {
		int errnum = errno;
		free(s);
		return err_set(e, errnum, "session %s: mmap: %s", name, strerror(errnum));
	}
	s->hdr = base;
	s->size = (size_t)size;
	int err = object_open_mem((char *)base + h.obj_off, h.obj_len, "session object", &s->obj, e);
	if (!err && s->obj->map_cnt != h.map_cnt)
		err = err_set(e, EINVAL, "session %s: object has %zu maps, segment %u", name,
			      s->obj->map_cnt, h.map_cnt);
	for (size_t i = 0; !err && i < h.map_cnt; i++)
		if (h.map_off[i] +
			    map_storage_size_cpus(&s->obj->maps[i].def,
						  session_cpus(&s->obj->maps[i].def)) >
		    h.size)
			err = err_set(e, EINVAL, "session %s: map %zu lies outside the segment",
				      name, i);
	if (!err)
		err = session_map_all(s, 0, e);
	if (err) {
		session_close(s);
		return err;
	}
	*out = s;
	return 0;
}

void session_close(struct session *s)
{
	if (!s)
		return;
	object_free(s->obj); /* frees the map handles, not the storage */
	if (s->hdr)
		munmap(s->hdr, s->size);
	if (s->owner)
		shm_unlink(s->name);
	free(s);
}

void session_note(struct session *s, const char *fmt, ...)
{
	if (!s)
		return;
	char buf[SESSION_MSG_LEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* a reader may see a torn message; it is advisory text */
	memcpy(s->hdr->status.last_msg, buf, sizeof(buf));
}

void session_count(struct session *s, enum session_counter c)
{
	if (!s)
		return;
	struct session_status *st = &s->hdr->status;
	uint32_t *f = c == SESSION_INSTRUMENTED ? &st->kernels_instrumented
		      : c == SESSION_SKIPPED    ? &st->kernels_skipped
		      : c == SESSION_ERRORS     ? &st->errors
						: &st->launches_redirected;
	__atomic_fetch_add(f, 1, __ATOMIC_RELAXED);
}
