/* SPDX-License-Identifier: MIT */
/*
 * test_tnum.c - tnums against brute force: every tnum of a small width,
 * every member, every operation.  Soundness: the concrete result of every
 * pair of members is a member of the abstract result.  Constants: exact.
 */
#include "testutil.h"

#include "bpf/tnum.h"

/* Every tnum whose bits above `bits` are known zero. */
static size_t all_tnums(unsigned bits, struct tnum *out)
{
	size_t n = 0, total = 1;
	for (unsigned i = 0; i < bits; i++)
		total *= 3;
	for (size_t code = 0; code < total; code++) {
		size_t c = code;
		struct tnum t = {0, 0};
		for (unsigned i = 0; i < bits; i++, c /= 3) {
			if (c % 3 == 1)
				t.value |= 1ull << i;
			else if (c % 3 == 2)
				t.mask |= 1ull << i;
		}
		out[n++] = t;
	}
	return n;
}

/* Members of t in out; t has only low bits unknown. */
static size_t members(struct tnum t, uint64_t *out)
{
	size_t n = 0;
	uint64_t sub = 0;
	do {
		out[n++] = t.value | sub;
		sub = (sub - t.mask) & t.mask; /* next subset of mask */
	} while (sub);
	return n;
}

static int is_member(struct tnum t, uint64_t x, uint64_t keep)
{
	return ((x ^ t.value) & ~t.mask & keep) == 0;
}

enum { BIN_BITS = 6, UN_BITS = 8 };

static uint64_t concrete(int op, uint64_t x, uint64_t y)
{
	switch (op) {
	case 0: return x + y;
	case 1: return x - y;
	case 2: return x * y;
	case 3: return x & y;
	case 4: return x | y;
	case 5: return x ^ y;
	}
	return 0;
}

static struct tnum abstract(int op, struct tnum a, struct tnum b)
{
	switch (op) {
	case 0: return tnum_add(a, b);
	case 1: return tnum_sub(a, b);
	case 2: return tnum_mul(a, b);
	case 3: return tnum_and(a, b);
	case 4: return tnum_or(a, b);
	case 5: return tnum_xor(a, b);
	}
	return TNUM_UNKNOWN;
}

static void test_binary_ops_sound(void **state)
{
	static struct tnum ts[729];
	static uint64_t ma[64], mb[64];
	size_t n = all_tnums(BIN_BITS, ts);
	const uint64_t keep = (1u << BIN_BITS) - 1;

	for (int op = 0; op < 6; op++)
		for (size_t i = 0; i < n; i++) {
			size_t na = members(ts[i], ma);
			for (size_t j = 0; j < n; j++) {
				struct tnum r = abstract(op, ts[i], ts[j]);
				assert_int_equal(r.value & r.mask, 0);
				size_t nb = members(ts[j], mb);
				for (size_t x = 0; x < na; x++)
					for (size_t y = 0; y < nb; y++)
						if (!is_member(r, concrete(op, ma[x], mb[y]), keep))
							fail_msg("op %d (%#llx;%#llx) (%#llx;%#llx)", op,
								 (unsigned long long)ts[i].value,
								 (unsigned long long)ts[i].mask,
								 (unsigned long long)ts[j].value,
								 (unsigned long long)ts[j].mask);
				if (tnum_is_const(ts[i]) && tnum_is_const(ts[j]))
					assert_true(tnum_is_const(r) &&
						    r.value == concrete(op, ts[i].value, ts[j].value));
			}
		}
}

static void test_unary_ops_sound(void **state)
{
	static struct tnum ts[6561];
	static uint64_t m[256];
	size_t n = all_tnums(UN_BITS, ts);
	const uint64_t keep = 0xff;

	for (size_t i = 0; i < n; i++) {
		struct tnum a = ts[i];
		size_t na = members(a, m);
		for (unsigned sh = 0; sh < 8; sh++) {
			struct tnum l = tnum_lshift(a, sh), r = tnum_rshift(a, sh);
			/* 8-bit values as the low byte of a 32-bit arsh: sign-extend first. */
			struct tnum s = tnum_arshift(tnum_lshift(a, 24), sh, 32);
			for (size_t x = 0; x < na; x++) {
				assert_true(is_member(l, m[x] << sh, keep));
				assert_true(is_member(r, m[x] >> sh, keep));
				uint32_t sx = (uint32_t)((int32_t)(uint32_t)(m[x] << 24) >> sh);
				assert_true(is_member(s, sx, 0xffffffff));
			}
		}
		struct tnum ng = tnum_neg(a), c = tnum_cast(a, 0);
		assert_true(tnum_is_const(c) && c.value == 0);
		for (size_t x = 0; x < na; x++) {
			assert_true(is_member(ng, -m[x], keep));
			assert_true(tnum_in(a, tnum_const(m[x])));
			assert_true(tnum_is_aligned(a, 4) == ((a.value | a.mask) % 4 == 0));
		}
		/* union and intersect against every other tnum sharing a member */
		for (size_t j = 0; j < n; j += 7) {
			struct tnum b = ts[j], u = tnum_union(a, b);
			assert_true(tnum_in(u, a) && tnum_in(u, b));
			if (((a.value ^ b.value) & ~(a.mask | b.mask)) == 0) {
				struct tnum in = tnum_intersect(a, b);
				for (size_t x = 0; x < na; x++)
					if (is_member(b, m[x], UINT64_MAX))
						assert_true(is_member(in, m[x], UINT64_MAX));
			}
		}
	}
}

static void test_range_exhaustive(void **state)
{
	for (unsigned lo = 0; lo < 256; lo++)
		for (unsigned hi = lo; hi < 256; hi++) {
			struct tnum t = tnum_range(lo, hi);
			for (unsigned x = lo; x <= hi; x++)
				assert_true(is_member(t, x, UINT64_MAX));
			if (lo == hi)
				assert_true(tnum_equals_const(t, lo));
		}
	assert_true(tnum_is_unknown(tnum_range(0, UINT64_MAX)));
	assert_true(tnum_is_unknown(tnum_range(5, 4)));
}

static void test_subreg(void **state)
{
	struct tnum a = {.value = 0x0100000004ull, .mask = 0xf0000000f0ull};
	struct tnum s = tnum_subreg(a);
	assert_int_equal(s.value, 0x04);
	assert_int_equal(s.mask, 0xf0);
	struct tnum w = tnum_with_subreg(a, tnum_const(7));
	assert_int_equal(w.value, 0x0100000007ull);
	assert_int_equal(w.mask, 0xf000000000ull);
	char buf[64];
	tnum_str(buf, sizeof(buf), tnum_const(16));
	assert_string_equal(buf, "0x10");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_binary_ops_sound),
		cmocka_unit_test(test_unary_ops_sound),
		cmocka_unit_test(test_range_exhaustive),
		cmocka_unit_test(test_subreg),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
