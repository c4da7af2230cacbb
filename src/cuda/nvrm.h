/* SPDX-License-Identifier: MIT */
/*
 * nvrm.h - the NVIDIA kernel driver's resource-manager (RM) ioctl interface,
 * as far as gpuext's scheduling mechanisms use it: recognising the channel
 * groups (TSGs) that libcuda allocates for a context, and the controls the
 * driver offers on a channel group to the client that owns it (timeslice,
 * interleave level, preempt).
 *
 * The layouts and numbers are facts of NVIDIA's open-gpu-kernel-modules
 * headers (nv_escape.h, nvos.h, ctrl/ctrla06c.h, nvstatuscodes.h): ioctls on
 * /dev/nvidiactl with type 'F', NV_ESC_RM_ALLOC (0x2b) taking NVOS21 or
 * NVOS64 parameters, NV_ESC_RM_CONTROL (0x2a) taking NVOS54 parameters, and
 * NV_ESC_IOCTL_XFER_CMD (211) wrapping requests too large for the ioctl's
 * size field.  The driver, not gpuext, decides what a client may do: the
 * timeslice control is open to the owning client, the interleave level
 * needs a privileged one; refusals come back as NV status codes.
 */
#ifndef GPUEXT_NVRM_H
#define GPUEXT_NVRM_H

#include <stdint.h>

/* KEPLER_CHANNEL_GROUP_A: the channel-group class of every GPU since Kepler. */
#define NVRM_CLASS_CHANNEL_GROUP 0xa06cu

/* Interleave levels of a channel group: how often it appears in the runlist. */
enum nvrm_interleave {
	NVRM_INTERLEAVE_LOW = 0,
	NVRM_INTERLEAVE_MEDIUM = 1,
	NVRM_INTERLEAVE_HIGH = 2,
};

/* An RM object: its client, its handle, its class. */
struct nvrm_object {
	uint32_t client, handle, klass;
};

/* How gpuext reaches the driver: the real ioctl (the agent interposes the
 * libc one). */
typedef int (*nvrm_ioctl_fn)(int fd, unsigned long request, void *arg);

/* Was (request, arg), which the real ioctl just returned 0 for, an RM
 * allocation that succeeded?  1 and *obj filled, else 0. */
int nvrm_decode_alloc(unsigned long request, const void *arg, struct nvrm_object *obj);

/* Channel-group controls on `tsg`, through fd (the descriptor its
 * allocation went through).  Each returns the NV status (0: NV_OK), or
 * -errno when the ioctl itself failed. */
int nvrm_tsg_get_timeslice(nvrm_ioctl_fn io, int fd, const struct nvrm_object *tsg,
			   uint64_t *us);
int nvrm_tsg_set_timeslice(nvrm_ioctl_fn io, int fd, const struct nvrm_object *tsg,
			   uint64_t us);
int nvrm_tsg_set_interleave(nvrm_ioctl_fn io, int fd, const struct nvrm_object *tsg,
			    enum nvrm_interleave level);
int nvrm_tsg_preempt(nvrm_ioctl_fn io, int fd, const struct nvrm_object *tsg, int wait);

/* "NV_ERR_INSUFFICIENT_PERMISSIONS" for 0x1b, strerror for -errno, or
 * "NV status 0x..." written into buf for a code not in the table. */
const char *nvrm_status_name(int status, char *buf, unsigned len);

#endif /* GPUEXT_NVRM_H */
