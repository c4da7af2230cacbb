/* SPDX-License-Identifier: MIT */
/*
 * host_proc.c - where a uprobe target is: the libraries a process has
 * mapped (/proc/PID/maps) or, for a process not started yet, the file the
 * dynamic linker finds for a library name; then the function's offset in
 * that file (host_elf.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

/* The driver's library: where uprobe/FUNC looks first. */
static const char host_driver_lib[] = "libcuda.so.1";

void host_libs_free(struct host_libs *libs)
{
	for (size_t i = 0; i < libs->cnt; i++)
		free(libs->paths[i]);
	free(libs->paths);
	libs->paths = NULL;
	libs->cnt = 0;
}

static int host_libs_add(struct host_libs *libs, const char *path)
{
	for (size_t i = 0; i < libs->cnt; i++)
		if (!strcmp(libs->paths[i], path))
			return 0;
	char **p = realloc(libs->paths, (libs->cnt + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	libs->paths = p;
	if (!(p[libs->cnt] = strdup(path)))
		return -ENOMEM;
	libs->cnt++;
	return 0;
}

int host_proc_libs(pid_t pid, struct host_libs *out, struct err *e)
{
	char name[64], line[PATH_MAX + 256];
	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(name, "re");
	*out = (struct host_libs){0};
	if (!f) {
		if (errno == ENOENT)
			return err_set(e, ESRCH, "no process %d", (int)pid);
		return err_set(e, errno, "%s: %s%s", name, strerror(errno),
			       errno == EACCES ? " (needs root or the process's owner)" : "");
	}
	int err = 0;
	while (!err && fgets(line, sizeof(line), f)) {
		char perms[8];
		int path_at = 0;
		/* start-end perms offset dev inode path */
		if (sscanf(line, "%*x-%*x %7s %*x %*x:%*x %*u %n", perms, &path_at) != 1 ||
		    !path_at || perms[2] != 'x' || line[path_at] != '/')
			continue;
		char *path = line + path_at;
		path[strcspn(path, "\n")] = 0;
		size_t n = strlen(path);
		static const char deleted[] = " (deleted)";
		if (n > sizeof(deleted) - 1 && !strcmp(path + n - (sizeof(deleted) - 1), deleted))
			continue; /* replaced on disk: a probe on the new file would not fire */
		err = host_libs_add(out, path);
	}
	fclose(f);
	if (err) {
		host_libs_free(out);
		return err_set(e, -err, "%s: out of memory", name);
	}
	return 0;
}

int host_lib_matches(const char *path, const char *lib)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	/* The stem: lib up to its ".so" (libcuda.so.1 -> libcuda.so). */
	size_t n = strlen(lib);
	for (const char *so = lib; (so = strstr(so, ".so")); so += 3) {
		if (!so[3] || so[3] == '.') {
			n = (size_t)(so + 3 - lib);
			break;
		}
	}
	return !strncmp(base, lib, n) && (!base[n] || base[n] == '.');
}

/* The file the dynamic linker loads for lib (its search path, this process). */
static int host_dl_path(const char *lib, char *out, size_t len, struct err *e)
{
	void *h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
	if (!h)
		h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return err_set(e, ENOENT, "library %s not found: %s", lib, dlerror());
	struct link_map *lm = NULL;
	int err = 0;
	char real[PATH_MAX];
	/* l_name is relative when found through a relative LD_LIBRARY_PATH. */
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) || !lm || !lm->l_name || !lm->l_name[0] ||
	    !realpath(lm->l_name, real))
		err = err_set(e, ENOENT, "library %s: no path from the dynamic linker", lib);
	else if (snprintf(out, len, "%s", real) >= (int)len)
		err = err_set(e, ENAMETOOLONG, "library %s: path too long", lib);
	dlclose(h);
	return err;
}

/* FUNC alone: libcuda.so.1 first, then every library of pid in order. */
static int host_resolve_func(const char *func, pid_t pid, int search, struct host_target *t,
			     struct err *e)
{
	if (pid <= 0) {
		int err = host_dl_path(host_driver_lib, t->path, sizeof(t->path), e);
		return err ? err : host_elf_func_offset(t->path, func, &t->offset, e);
	}
	struct host_libs libs;
	int err = host_proc_libs(pid, &libs, e);
	if (err)
		return err;
	/* A file that is not ELF or not readable cannot be the one: skip it. */
	int found = 0;
	for (int pass = 0; pass < 2 && !found; pass++) {
		for (size_t i = 0; i < libs.cnt && !found; i++) {
			if (host_lib_matches(libs.paths[i], host_driver_lib) != !pass)
				continue;
			found = !host_elf_func_offset(libs.paths[i], func, &t->offset, NULL);
			if (found)
				snprintf(t->path, sizeof(t->path), "%s", libs.paths[i]);
		}
	}
	size_t searched = libs.cnt;
	host_libs_free(&libs);
	if (!found && search)
		return host_resolve_func(func, -1, 0, t, e);
	if (!found)
		err = err_set(e, ENOENT, "function '%s' not found in the %zu executable files "
					 "process %d has mapped (libcuda.so.1 first)", func,
			      searched, (int)pid);
	return err;
}

/* LIB without '/': the file pid has mapped for it, or the linker's. */
static int host_resolve_lib(const char *lib, pid_t pid, int search, struct host_target *t,
			    struct err *e)
{
	if (pid <= 0)
		return host_dl_path(lib, t->path, sizeof(t->path), e);
	struct host_libs libs;
	int err = host_proc_libs(pid, &libs, e);
	if (err)
		return err;
	err = err_set(e, ENOENT, "process %d has no library %s mapped", (int)pid, lib);
	for (size_t i = 0; i < libs.cnt; i++) {
		if (host_lib_matches(libs.paths[i], lib)) {
			snprintf(t->path, sizeof(t->path), "%s", libs.paths[i]);
			err = 0;
			break;
		}
	}
	host_libs_free(&libs);
	return err && search ? host_dl_path(lib, t->path, sizeof(t->path), e) : err;
}

int host_resolve(const char *target, pid_t pid, int search, struct host_target *t,
		 struct err *e)
{
	const char *colon = strrchr(target, ':');
	const char *func = colon ? colon + 1 : target;
	*t = (struct host_target){0};
	if (!*func || (colon && colon == target) || (!colon && strchr(target, '/')))
		return err_set(e, EINVAL, "uprobe target '%s': expected FUNC, LIB:FUNC or "
					  "PATH:FUNC", target);
	if (strlen(func) >= sizeof(t->func))
		return err_set(e, ENAMETOOLONG, "uprobe target '%s': function name too long",
			       target);
	snprintf(t->func, sizeof(t->func), "%s", func);
	if (!colon)
		return host_resolve_func(func, pid, search, t, e);

	size_t n = (size_t)(colon - target);
	char lib[PATH_MAX];
	if (n >= sizeof(lib))
		return err_set(e, ENAMETOOLONG, "uprobe target '%s': path too long", target);
	memcpy(lib, target, n);
	lib[n] = 0;
	int err;
	if (strchr(lib, '/'))
		snprintf(t->path, sizeof(t->path), "%s", lib);
	else if ((err = host_resolve_lib(lib, pid, search, t, e)))
		return err;
	return host_elf_func_offset(t->path, func, &t->offset, e);
}

int host_section_target(const char *section, const char **target, int *retprobe)
{
	static const char up[] = "uprobe/", ret[] = "uretprobe/";
	if (!strncmp(section, up, sizeof(up) - 1)) {
		*target = section + sizeof(up) - 1;
		*retprobe = 0;
	} else if (!strncmp(section, ret, sizeof(ret) - 1)) {
		*target = section + sizeof(ret) - 1;
		*retprobe = 1;
	} else {
		return 0;
	}
	return **target != 0;
}
