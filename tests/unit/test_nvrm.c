/* SPDX-License-Identifier: MIT */
/*
 * test_nvrm - the RM ioctl layouts of src/cuda/nvrm.c against a recording
 * fake of the driver: allocations recognised in both parameter forms and
 * behind the transfer wrapper (failed ones not), channel-group controls
 * sent with the right request, command, handles and payload, NV status
 * and ioctl failures reported as such.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>

#include "testutil.h"

#include "cuda/nvrm.h"

/* What the fake driver saw of the last control, and what it answers. */
static struct {
	unsigned long request;
	uint32_t client, object, cmd, params_size;
	uint8_t params[16];
	uint32_t answer_status;
	int fail_errno;
	uint64_t timeslice_out;
} fake;

struct nvos54 {
	uint32_t client, object, cmd, flags;
	uint64_t params;
	uint32_t params_size, status;
};

static int fake_ioctl(int fd, unsigned long request, void *arg)
{
	(void)fd;
	struct nvos54 *p = arg;
	fake.request = request;
	if (fake.fail_errno) {
		errno = fake.fail_errno;
		return -1;
	}
	fake.client = p->client;
	fake.object = p->object;
	fake.cmd = p->cmd;
	fake.params_size = p->params_size;
	memcpy(fake.params, (void *)(uintptr_t)p->params,
	       p->params_size < sizeof(fake.params) ? p->params_size : sizeof(fake.params));
	if (p->cmd == 0xa06c0104u) /* GET_TIMESLICE writes its output */
		memcpy((void *)(uintptr_t)p->params, &fake.timeslice_out, 8);
	p->status = fake.answer_status;
	return 0;
}

static void test_decode_alloc(void **state)
{
	(void)state;
	struct nvrm_object o;
	struct { /* NVOS21 */
		uint32_t root, parent, new_handle, klass;
		uint64_t alloc_params;
		uint32_t params_size, status;
	} a21 = {0xc1d00001, 0x5c000002, 0x5c000013, 0xa06c, 0, 0, 0};
	struct { /* NVOS64 */
		uint32_t root, parent, new_handle, klass;
		uint64_t alloc_params, rights;
		uint32_t params_size, flags, status;
	} a64 = {0xc1d00001, 0x5c000002, 0x5c000014, 0xc86f, 0, 0, 0, 0, 0};
	struct {
		uint32_t cmd, size;
		uint64_t ptr;
	} xfer = {0x2b, sizeof(a64), (uint64_t)(uintptr_t)&a64};

	assert_int_equal(nvrm_decode_alloc(_IOWR('F', 0x2b, a21), &a21, &o), 1);
	assert_int_equal(o.client, 0xc1d00001);
	assert_int_equal(o.handle, 0x5c000013);
	assert_int_equal(o.klass, NVRM_CLASS_CHANNEL_GROUP);
	assert_int_equal(nvrm_decode_alloc(_IOWR('F', 0x2b, a64), &a64, &o), 1);
	assert_int_equal(o.handle, 0x5c000014);
	assert_int_equal(o.klass, 0xc86f);
	memset(&o, 0, sizeof(o));
	assert_int_equal(nvrm_decode_alloc(_IOWR('F', 211, xfer), &xfer, &o), 1);
	assert_int_equal(o.handle, 0x5c000014);

	/* not allocations, or failed ones */
	a21.status = 0x1f;
	assert_int_equal(nvrm_decode_alloc(_IOWR('F', 0x2b, a21), &a21, &o), 0);
	assert_int_equal(nvrm_decode_alloc(_IOWR('F', 0x2a, a64), &a64, &o), 0);
	assert_int_equal(nvrm_decode_alloc(_IOWR('T', 0x2b, a64), &a64, &o), 0);
	assert_int_equal(nvrm_decode_alloc(_IOWR('F', 0x2b, uint64_t), &a64, &o), 0);
	assert_int_equal(nvrm_decode_alloc(_IOWR('F', 0x2b, a64), NULL, &o), 0);
}

static void test_controls(void **state)
{
	(void)state;
	struct nvrm_object tsg = {0xc1d00001, 0x5c000013, NVRM_CLASS_CHANNEL_GROUP};
	char buf[64];
	uint64_t us = 0;

	memset(&fake, 0, sizeof(fake));
	assert_int_equal(nvrm_tsg_set_timeslice(fake_ioctl, 3, &tsg, 250), 0);
	assert_int_equal(fake.request, _IOWR('F', 0x2a, struct nvos54));
	assert_int_equal(fake.client, tsg.client);
	assert_int_equal(fake.object, tsg.handle);
	assert_int_equal(fake.cmd, 0xa06c0103u);
	assert_int_equal(fake.params_size, 8);
	memcpy(&us, fake.params, 8);
	assert_int_equal(us, 250);

	fake.timeslice_out = 2048;
	assert_int_equal(nvrm_tsg_get_timeslice(fake_ioctl, 3, &tsg, &us), 0);
	assert_int_equal(fake.cmd, 0xa06c0104u);
	assert_int_equal(us, 2048);

	fake.answer_status = 0x1b;
	int st = nvrm_tsg_set_interleave(fake_ioctl, 3, &tsg, NVRM_INTERLEAVE_HIGH);
	assert_int_equal(st, 0x1b);
	assert_int_equal(fake.cmd, 0xa06c0107u);
	assert_int_equal(fake.params_size, 4);
	assert_int_equal(fake.params[0], 2);
	assert_string_equal(nvrm_status_name(st, buf, sizeof(buf)),
			    "NV_ERR_INSUFFICIENT_PERMISSIONS");

	fake.answer_status = 0;
	assert_int_equal(nvrm_tsg_preempt(fake_ioctl, 3, &tsg, 1), 0);
	assert_int_equal(fake.cmd, 0xa06c0105u);
	assert_int_equal(fake.params_size, 8);
	assert_int_equal(fake.params[0], 1);

	fake.fail_errno = EPERM;
	st = nvrm_tsg_set_timeslice(fake_ioctl, 3, &tsg, 250);
	assert_int_equal(st, -EPERM);
	assert_string_equal(nvrm_status_name(st, buf, sizeof(buf)),
			    "ioctl: Operation not permitted");
	assert_string_equal(nvrm_status_name(0x1234, buf, sizeof(buf)), "NV status 0x1234");
	assert_string_equal(nvrm_status_name(0, buf, sizeof(buf)), "NV_OK");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_alloc),
		cmocka_unit_test(test_controls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
