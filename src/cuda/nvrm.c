/* SPDX-License-Identifier: MIT */
/*
 * nvrm.c - RM allocations recognised and channel-group controls issued
 * (the layouts are in nvrm.h's sources; x86-64 natural alignment gives the
 * headers' NV_ALIGN_BYTES(8) placement of every 64-bit field).
 */
#include "nvrm.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#define NV_IOCTL_MAGIC 'F'
#define NV_ESC_RM_CONTROL 0x2a
#define NV_ESC_RM_ALLOC 0x2b
#define NV_ESC_IOCTL_XFER_CMD 211

#define NVA06C_CTRL_CMD_SET_TIMESLICE 0xa06c0103u
#define NVA06C_CTRL_CMD_GET_TIMESLICE 0xa06c0104u
#define NVA06C_CTRL_CMD_PREEMPT 0xa06c0105u
#define NVA06C_CTRL_CMD_SET_INTERLEAVE_LEVEL 0xa06c0107u

struct nvos21 { /* NV_ESC_RM_ALLOC, the short form */
	uint32_t root, parent, new_handle, klass;
	uint64_t alloc_params;
	uint32_t params_size, status;
};

struct nvos64 { /* NV_ESC_RM_ALLOC with access rights */
	uint32_t root, parent, new_handle, klass;
	uint64_t alloc_params, rights_requested;
	uint32_t params_size, flags, status;
};

struct nvos54 { /* NV_ESC_RM_CONTROL */
	uint32_t client, object, cmd, flags;
	uint64_t params;
	uint32_t params_size, status;
};

struct nv_ioctl_xfer { /* NV_ESC_IOCTL_XFER_CMD: the real request behind ptr */
	uint32_t cmd, size;
	uint64_t ptr;
};

_Static_assert(sizeof(struct nvos21) == 32, "NVOS21_PARAMETERS is 32 bytes");
_Static_assert(sizeof(struct nvos64) == 48, "NVOS64_PARAMETERS is 48 bytes");
_Static_assert(sizeof(struct nvos54) == 32, "NVOS54_PARAMETERS is 32 bytes");

int nvrm_decode_alloc(unsigned long request, const void *arg, struct nvrm_object *obj)
{
	unsigned nr = _IOC_NR(request), size = _IOC_SIZE(request);

	if (_IOC_TYPE(request) != NV_IOCTL_MAGIC || !arg)
		return 0;
	if (nr == NV_ESC_IOCTL_XFER_CMD && size == sizeof(struct nv_ioctl_xfer)) {
		const struct nv_ioctl_xfer *x = arg;
		nr = x->cmd;
		size = x->size;
		arg = (const void *)(uintptr_t)x->ptr;
		if (!arg)
			return 0;
	}
	if (nr != NV_ESC_RM_ALLOC)
		return 0;
	if (size == sizeof(struct nvos21)) {
		const struct nvos21 *p = arg;
		if (p->status)
			return 0;
		*obj = (struct nvrm_object){p->root, p->new_handle, p->klass};
		return 1;
	}
	if (size == sizeof(struct nvos64)) {
		const struct nvos64 *p = arg;
		if (p->status)
			return 0;
		*obj = (struct nvrm_object){p->root, p->new_handle, p->klass};
		return 1;
	}
	return 0;
}

static int nvrm_control(nvrm_ioctl_fn io, int fd, const struct nvrm_object *o, uint32_t cmd,
			void *params, uint32_t size)
{
	struct nvos54 p = {.client = o->client, .object = o->handle, .cmd = cmd,
			   .params = (uint64_t)(uintptr_t)params, .params_size = size};
	if (io(fd, _IOWR(NV_IOCTL_MAGIC, NV_ESC_RM_CONTROL, struct nvos54), &p))
		return errno ? -errno : -EIO;
	return (int)p.status;
}

int nvrm_tsg_get_timeslice(nvrm_ioctl_fn io, int fd, const struct nvrm_object *tsg,
			   uint64_t *us)
{
	return nvrm_control(io, fd, tsg, NVA06C_CTRL_CMD_GET_TIMESLICE, us, sizeof(*us));
}

int nvrm_tsg_set_timeslice(nvrm_ioctl_fn io, int fd, const struct nvrm_object *tsg,
			   uint64_t us)
{
	return nvrm_control(io, fd, tsg, NVA06C_CTRL_CMD_SET_TIMESLICE, &us, sizeof(us));
}

int nvrm_tsg_set_interleave(nvrm_ioctl_fn io, int fd, const struct nvrm_object *tsg,
			    enum nvrm_interleave level)
{
	uint32_t v = level;
	return nvrm_control(io, fd, tsg, NVA06C_CTRL_CMD_SET_INTERLEAVE_LEVEL, &v, sizeof(v));
}

int nvrm_tsg_preempt(nvrm_ioctl_fn io, int fd, const struct nvrm_object *tsg, int wait)
{
	struct { /* NVA06C_CTRL_PREEMPT_PARAMS */
		uint8_t wait, manual_timeout;
		uint32_t timeout_us;
	} p = {.wait = wait != 0};
	return nvrm_control(io, fd, tsg, NVA06C_CTRL_CMD_PREEMPT, &p, sizeof(p));
}

const char *nvrm_status_name(int status, char *buf, unsigned len)
{
	static const struct {
		int code;
		const char *name;
	} names[] = {
		{0x00, "NV_OK"},
		{0x1b, "NV_ERR_INSUFFICIENT_PERMISSIONS"},
		{0x1f, "NV_ERR_INVALID_ARGUMENT"},
		{0x23, "NV_ERR_INVALID_CLIENT"},
		{0x24, "NV_ERR_INVALID_COMMAND"},
		{0x31, "NV_ERR_INVALID_OBJECT"},
		{0x33, "NV_ERR_INVALID_OBJECT_HANDLE"},
		{0x38, "NV_ERR_INVALID_OPERATION"},
		{0x3b, "NV_ERR_INVALID_PARAMETER"},
		{0x40, "NV_ERR_INVALID_STATE"},
		{0x56, "NV_ERR_NOT_SUPPORTED"},
		{0x57, "NV_ERR_OBJECT_NOT_FOUND"},
		{0x5b, "NV_ERR_OUT_OF_RANGE"},
		{0x65, "NV_ERR_TIMEOUT"},
	};
	if (status < 0) {
		snprintf(buf, len, "ioctl: %s", strerror(-status));
		return buf;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].code == status)
			return names[i].name;
	snprintf(buf, len, "NV status 0x%x", (unsigned)status);
	return buf;
}
