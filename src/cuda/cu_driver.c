/* SPDX-License-Identifier: MIT */
#include "cu_driver.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static struct cu_driver cu_drv;
static struct err cu_load_err;
static int cu_load_rc;
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

static void cu_driver_load_once(void)
{
	/* RTLD_LOCAL: the driver's symbols do not leak into the process. */
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	CUresult r;

	if (!h) {
		cu_load_rc = err_set(&cu_load_err, ENOENT,
				     "no CUDA driver: cannot load libcuda.so.1 (%s)", dlerror());
		return;
	}
#define CU_DRIVER_RESOLVE(field, sym, params)                                         \
	*(void **)&cu_drv.field = dlsym(h, sym);                                         \
	if (!cu_drv.field) {                                                             \
		cu_load_rc = err_set(&cu_load_err, ENOSYS,                               \
				     "CUDA driver too old: libcuda.so.1 lacks %s", sym);     \
		return;                                                                  \
	}
	CU_DRIVER_FUNCS(CU_DRIVER_RESOLVE)
#undef CU_DRIVER_RESOLVE
	r = cu_drv.init(0);
	if (r != CUDA_SUCCESS) {
		char buf[160];
		cu_load_rc = err_set(&cu_load_err, ENODEV, "no usable GPU: cuInit: %s",
				     cu_errstr(&cu_drv, r, buf, sizeof(buf)));
		return;
	}
	cu_drv.driver_get_version(&cu_drv.version);
}

int cu_driver_load(const struct cu_driver **out, struct err *e)
{
	pthread_once(&cu_once, cu_driver_load_once);
	if (cu_load_rc) {
		if (e)
			*e = cu_load_err;
		return cu_load_rc;
	}
	*out = &cu_drv;
	return 0;
}

const char *cu_errstr(const struct cu_driver *d, CUresult r, char *buf, size_t len)
{
	const char *name = NULL, *text = NULL;

	if (d && d->get_error_name)
		d->get_error_name(r, &name);
	if (d && d->get_error_string)
		d->get_error_string(r, &text);
	snprintf(buf, len, "%s (%s)", name ? name : "CUDA error", text ? text : "no description");
	if (!name)
		snprintf(buf, len, "CUDA error %d", (int)r);
	return buf;
}

int cu_err(const struct cu_driver *d, struct err *e, CUresult r, const char *what)
{
	char buf[160];
	return err_set(e, r == CUDA_ERROR_OUT_OF_MEMORY ? ENOMEM : EIO, "%s: %s", what,
		       cu_errstr(d, r, buf, sizeof(buf)));
}
