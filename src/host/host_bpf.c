/* SPDX-License-Identifier: MIT */
/*
 * host_bpf.c - the kernel side of the uprobe backend through libbpf: load
 * an object gpuext has verified from its ELF image, attach its uprobe
 * programs through perf_event uprobes (libbpf's default when the kernel
 * has the uprobe PMU; no tracefs needed), read ring buffers and maps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/object.h"
#include "host.h"

/* One ring buffer map: what its records are passed on with. */
struct host_rb {
	struct host *h;
	const char *name; /* the map's, owned by libbpf */
};

struct host {
	struct bpf_object *bobj;
	struct bpf_link **links;
	size_t link_cnt;
	struct ring_buffer *rb;
	struct host_rb *rbs;
	size_t rb_cnt;
	host_record_fn fn; /* set for the duration of host_poll */
	void *fn_arg;
	int fn_ret;
};

static const char host_priv_hint[] =
	"loading eBPF into the kernel needs root, or CAP_BPF and CAP_PERFMON";
static const char host_pmu_hint[] =
	"kernel uprobes are not available here (no uprobe PMU in "
	"/sys/bus/event_source/devices)";

/* Why an attach failed with err, beyond strerror: privileges or the kernel. */
static const char *host_attach_hint(int err)
{
	if (err == EPERM || err == EACCES)
		return host_priv_hint;
	if (access("/sys/bus/event_source/devices/uprobe/type", R_OK))
		return host_pmu_hint;
	return NULL;
}

/* libbpf's warnings go to stderr (the kernel verifier's log among them);
 * its info and debug chatter only with GPUEXT_LIBBPF_DEBUG set. */
static int host_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static int debug = -1;
	if (debug < 0)
		debug = getenv("GPUEXT_LIBBPF_DEBUG") != NULL;
	if (level != LIBBPF_WARN && !debug)
		return 0;
	return vfprintf(stderr, fmt, ap); /* libbpf's messages start with "libbpf: " */
}

static int host_on_record(void *ctx, void *data, size_t size)
{
	struct host_rb *r = ctx;
	struct host *h = r->h;
	if (h->fn && !h->fn_ret)
		h->fn_ret = h->fn(h->fn_arg, r->name, data, size);
	return 0;
}

static int host_open_ringbufs(struct host *h, struct err *e)
{
	struct bpf_map *m;
	size_t n = 0;
	bpf_object__for_each_map(m, h->bobj)
		n += bpf_map__type(m) == BPF_MAP_TYPE_RINGBUF;
	if (!n)
		return 0;
	if (!(h->rbs = calloc(n, sizeof(*h->rbs))))
		return err_set(e, ENOMEM, "out of memory");
	bpf_object__for_each_map(m, h->bobj) {
		if (bpf_map__type(m) != BPF_MAP_TYPE_RINGBUF)
			continue;
		struct host_rb *r = &h->rbs[h->rb_cnt++];
		*r = (struct host_rb){.h = h, .name = bpf_map__name(m)};
		int err = 0;
		if (!h->rb)
			err = (h->rb = ring_buffer__new(bpf_map__fd(m), host_on_record, r, NULL))
				      ? 0 : -errno;
		else
			err = ring_buffer__add(h->rb, bpf_map__fd(m), host_on_record, r);
		if (err)
			return err_set(e, -err, "ring buffer '%s': %s", r->name, strerror(-err));
	}
	return 0;
}

int host_open(const struct object *obj, struct host **out, struct err *e)
{
	const char *base = strrchr(obj->name, '/');
	char name[64];
	snprintf(name, sizeof(name), "%s", base ? base + 1 : obj->name);
	name[strcspn(name, ".")] = 0; /* libbpf prefixes global-data map names with it */
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = name);
	struct host *h = calloc(1, sizeof(*h));
	int err = 0;

	*out = NULL;
	if (!h)
		return err_set(e, ENOMEM, "out of memory");
	libbpf_set_print(host_libbpf_print);
	h->bobj = bpf_object__open_mem(obj->image, obj->image_len, &oo);
	if (!h->bobj) {
		err = err_set(e, errno, "%s: libbpf cannot open it: %s", obj->name,
			      strerror(errno));
		goto fail;
	}
	struct bpf_program *p;
	size_t probes = 0;
	bpf_object__for_each_program(p, h->bobj) {
		const char *target;
		int ret;
		if (host_section_target(bpf_program__section_name(p), &target, &ret)) {
			bpf_program__set_type(p, BPF_PROG_TYPE_KPROBE);
			probes++;
		} else {
			bpf_program__set_autoload(p, false);
		}
	}
	if (!probes) {
		err = err_set(e, ENOENT, "%s: no uprobe/ or uretprobe/ programs", obj->name);
		goto fail;
	}
	if ((err = bpf_object__load(h->bobj))) {
		if (err == -EPERM)
			err_set(e, EPERM, "%s: %s (%s)", obj->name, host_priv_hint, strerror(EPERM));
		else if (err == -ENOSYS)
			err_set(e, ENOSYS, "%s: kernel BPF is not available here (%s)", obj->name,
				strerror(ENOSYS));
		else
			err_set(e, -err, "%s: the kernel refused the programs: %s (libbpf's "
					 "messages above)", obj->name, strerror(-err));
		goto fail;
	}
	if ((err = host_open_ringbufs(h, e)))
		goto fail;
	*out = h;
	return 0;
fail:
	host_close(h);
	return err;
}

int host_attach_prog(struct host *h, const char *prog, pid_t pid, int retprobe,
		     const struct host_target *t, struct err *e)
{
	struct bpf_program *p = bpf_object__find_program_by_name(h->bobj, prog);
	if (!p || !bpf_program__autoload(p))
		return err_set(e, ENOENT, "no loaded uprobe program '%s'", prog);
	struct bpf_link **links = realloc(h->links, (h->link_cnt + 1) * sizeof(*links));
	if (!links)
		return err_set(e, ENOMEM, "out of memory");
	h->links = links;
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = retprobe);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(p, pid > 0 ? pid : -1, t->path,
							     (size_t)t->offset, &uo);
	if (!l) {
		int err = errno;
		const char *hint = host_attach_hint(err);
		return err_set(e, err, "program '%s': uprobe on %s:%s (offset 0x%llx)%s: %s%s%s",
			       prog, t->path, t->func, (unsigned long long)t->offset,
			       pid > 0 ? " in that process" : "", strerror(err),
			       hint ? "; " : "", hint ? hint : "");
	}
	h->links[h->link_cnt++] = l;
	return 0;
}

int host_attach_all(struct host *h, pid_t pid, int search, int verbose, struct err *e)
{
	struct bpf_program *p;
	int n = 0;
	bpf_object__for_each_program(p, h->bobj) {
		const char *sec = bpf_program__section_name(p), *target;
		struct host_target t;
		int ret, err;
		if (!bpf_program__autoload(p) || !host_section_target(sec, &target, &ret))
			continue;
		if ((err = host_resolve(target, pid, search, &t, e))) {
			err_prefix(e, "section '%s': ", sec);
			return err;
		}
		if ((err = host_attach_prog(h, bpf_program__name(p), pid, ret, &t, e)))
			return err;
		if (verbose)
			fprintf(stderr, "gpuext: %s -> %s:%s+0x%llx (%s)\n", sec, t.path, t.func,
				(unsigned long long)t.offset, ret ? "return" : "entry");
		n++;
	}
	return n;
}

void host_detach(struct host *h)
{
	for (size_t i = 0; i < h->link_cnt; i++)
		bpf_link__destroy(h->links[i]);
	h->link_cnt = 0;
}

int host_poll(struct host *h, int timeout_ms, host_record_fn fn, void *arg)
{
	if (!h->rb) {
		struct timespec ts = {timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
		nanosleep(&ts, NULL);
		return 0;
	}
	h->fn = fn;
	h->fn_arg = arg;
	h->fn_ret = 0;
	int n = ring_buffer__poll(h->rb, timeout_ms);
	h->fn = NULL;
	return n == -EINTR ? 0 : n;
}

/* The gpuext map the kernel map m mirrors: same name, or for global data
 * (".bss") the name libbpf gives it ("OBJNAME.bss"). */
static struct object_map *host_map_of(struct object *obj, const struct bpf_map *m)
{
	const char *kname = bpf_map__name(m);
	size_t kn = strlen(kname);
	for (size_t i = 0; i < obj->map_cnt; i++) {
		const char *name = obj->maps[i].def.name;
		size_t n = strlen(name);
		if (!strcmp(name, kname) || (name[0] == '.' && kn > n && !strcmp(kname + kn - n, name)))
			return &obj->maps[i];
	}
	return NULL;
}

static int host_copy_map(struct bpf_map *m, struct object_map *om, struct err *e)
{
	const struct map_def *d = &om->def;
	enum bpf_map_type type = bpf_map__type(m);
	int percpu = type == BPF_MAP_TYPE_PERCPU_ARRAY || type == BPF_MAP_TYPE_PERCPU_HASH ||
		     type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
	size_t stride = (d->value_size + 7) & ~(size_t)7;
	int kcpus = percpu ? libbpf_num_possible_cpus() : 1;
	unsigned gcpus = map_nr_cpus(om->map);
	if (bpf_map__key_size(m) != d->key_size || bpf_map__value_size(m) != d->value_size)
		return err_set(e, EINVAL, "map '%s': the kernel's key/value sizes differ", d->name);
	if (kcpus <= 0)
		return err_set(e, -kcpus, "map '%s': cannot count the CPUs", d->name);
	size_t klen = percpu ? (size_t)kcpus * stride : d->value_size;
	uint8_t *key = calloc(1, d->key_size + 1), *next = calloc(1, d->key_size + 1);
	uint8_t *kval = calloc(1, klen), *gval = calloc(gcpus, stride);
	int err = 0;
	if (!key || !next || !kval || !gval) {
		err = err_set(e, ENOMEM, "out of memory");
		goto out;
	}
	for (int first = 1; !bpf_map__get_next_key(m, first ? NULL : key, next, d->key_size);
	     first = 0) {
		memcpy(key, next, d->key_size);
		if (bpf_map__lookup_elem(m, key, d->key_size, kval, klen, 0))
			continue; /* deleted meanwhile */
		if (!percpu) {
			err = map_update(om->map, key, kval, MAP_ANY);
		} else {
			/* CPU c's value into slot c mod gcpus; 8-byte counters add up. */
			memset(gval, 0, gcpus * stride);
			for (int c = 0; c < kcpus; c++) {
				uint8_t *dst = gval + (c % gcpus) * stride, *src = kval + c * stride;
				if ((unsigned)c < gcpus) {
					memcpy(dst, src, d->value_size);
				} else if (d->value_size == 8) {
					uint64_t a, b;
					memcpy(&a, dst, 8);
					memcpy(&b, src, 8);
					a += b;
					memcpy(dst, &a, 8);
				}
			}
			err = map_update_all_cpus(om->map, key, gval, MAP_ANY);
		}
		if (err) {
			err_set(e, -err, "map '%s': copying an element: %s", d->name, strerror(-err));
			break;
		}
	}
out:
	free(key);
	free(next);
	free(kval);
	free(gval);
	return err;
}

/* Does one of obj's uprobe programs use map?  Only those maps are copied:
 * the others belong to programs that ran elsewhere (device, agent). */
static int host_map_probed(const struct object *obj, const struct map *map)
{
	for (size_t i = 0; i < obj->prog_cnt; i++) {
		const struct prog *p = obj->progs[i];
		const char *target;
		int ret;
		if (!host_section_target(p->section, &target, &ret))
			continue;
		for (size_t k = 0; k < p->map_cnt; k++)
			if (p->maps[k] == map)
				return 1;
	}
	return 0;
}

int host_copy_maps(struct host *h, struct object *obj, struct err *e)
{
	struct bpf_map *m;
	bpf_object__for_each_map(m, h->bobj) {
		struct object_map *om = host_map_of(obj, m);
		if (!om || !om->map || om->init || om->def.type == MAP_TYPE_RINGBUF ||
		    !host_map_probed(obj, om->map))
			continue;
		int err = host_copy_map(m, om, e);
		if (err)
			return err;
	}
	return 0;
}

int host_map_lookup(struct host *h, const char *map, const void *key, void *value,
		    size_t value_size, struct err *e)
{
	struct bpf_map *m = bpf_object__find_map_by_name(h->bobj, map);
	if (!m)
		return err_set(e, ENOENT, "no map '%s'", map);
	int err = bpf_map__lookup_elem(m, key, bpf_map__key_size(m), value, value_size, 0);
	return err ? err_set(e, -err, "map '%s': lookup: %s", map, strerror(-err)) : 0;
}

void host_close(struct host *h)
{
	if (!h)
		return;
	host_detach(h);
	ring_buffer__free(h->rb);
	bpf_object__close(h->bobj);
	free(h->links);
	free(h->rbs);
	free(h);
}
