/* SPDX-License-Identifier: MIT */
/*
 * test_vfy_range.c - scalar bounds against brute force: random small sets
 * of concrete values (biased to the edges: 0, +-1, 2^31, 2^32, 2^63), their
 * bounds, every ALU operation in 64 and 32 bits, every jump relation.  Every
 * concrete result must lie inside the computed bounds.
 */
#include "testutil.h"

#include "bpf/isa.h"
#include "bpf/vfy_range.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint64_t interesting(void)
{
	static const uint64_t edges[] = {0, 1, 2, 7, 8, 255, 256, 0x7fffffff, 0x80000000,
					 0xffffffff, 0x100000000ull, 0x7fffffffffffffffull,
					 0x8000000000000000ull, UINT64_MAX, 64, 512};
	uint64_t v = edges[rnd() % (sizeof(edges) / sizeof(edges[0]))];
	switch (rnd() % 4) {
	case 0: return v;
	case 1: return v + rnd() % 5;
	case 2: return v - rnd() % 5;
	default: return rnd() % 3 ? rnd() % 300 : rnd();
	}
}

static int in_bounds(const struct vfy_bounds *b, uint64_t x)
{
	return x >= b->umin && x <= b->umax && (int64_t)x >= b->smin && (int64_t)x <= b->smax &&
	       (uint32_t)x >= b->u32min && (uint32_t)x <= b->u32max &&
	       (int32_t)(uint32_t)x >= b->s32min && (int32_t)(uint32_t)x <= b->s32max &&
	       ((x ^ b->var.value) & ~b->var.mask) == 0;
}

static struct vfy_bounds of_set(const uint64_t *v, size_t n)
{
	struct vfy_bounds b = vfy_bounds_const(v[0]);
	for (size_t i = 1; i < n; i++) {
		struct vfy_bounds c = vfy_bounds_const(v[i]);
		b = vfy_bounds_union(&b, &c);
	}
	assert_true(vfy_bounds_sync(&b));
	return b;
}

/* RFC 9669 semantics of one ALU operation. */
static uint64_t alu(unsigned op, int16_t off, int is64, uint64_t x, uint64_t y)
{
	if (!is64) {
		uint32_t a = (uint32_t)x, b = (uint32_t)y, r;
		switch (op) {
		case ISA_ALU_ADD: r = a + b; break;
		case ISA_ALU_SUB: r = a - b; break;
		case ISA_ALU_MUL: r = a * b; break;
		case ISA_ALU_DIV:
			if (off)
				r = b == 0 ? 0 : ((int32_t)a == INT32_MIN && (int32_t)b == -1) ? a :
				    (uint32_t)((int32_t)a / (int32_t)b);
			else
				r = b ? a / b : 0;
			break;
		case ISA_ALU_MOD:
			if (off)
				r = b == 0 ? a : (int32_t)b == -1 ? 0 : (uint32_t)((int32_t)a % (int32_t)b);
			else
				r = b ? a % b : a;
			break;
		case ISA_ALU_OR: r = a | b; break;
		case ISA_ALU_AND: r = a & b; break;
		case ISA_ALU_XOR: r = a ^ b; break;
		case ISA_ALU_LSH: r = a << (b & 31); break;
		case ISA_ALU_RSH: r = a >> (b & 31); break;
		case ISA_ALU_ARSH: r = (uint32_t)((int32_t)a >> (b & 31)); break;
		case ISA_ALU_NEG: r = -a; break;
		case ISA_ALU_MOV:
			r = off == 8 ? (uint32_t)(int32_t)(int8_t)b :
			    off == 16 ? (uint32_t)(int32_t)(int16_t)b : b;
			break;
		default: r = 0;
		}
		return r;
	}
	switch (op) {
	case ISA_ALU_ADD: return x + y;
	case ISA_ALU_SUB: return x - y;
	case ISA_ALU_MUL: return x * y;
	case ISA_ALU_DIV:
		if (off)
			return y == 0 ? 0 : ((int64_t)x == INT64_MIN && (int64_t)y == -1) ? x :
			       (uint64_t)((int64_t)x / (int64_t)y);
		return y ? x / y : 0;
	case ISA_ALU_MOD:
		if (off)
			return y == 0 ? x : (int64_t)y == -1 ? 0 : (uint64_t)((int64_t)x % (int64_t)y);
		return y ? x % y : x;
	case ISA_ALU_OR: return x | y;
	case ISA_ALU_AND: return x & y;
	case ISA_ALU_XOR: return x ^ y;
	case ISA_ALU_LSH: return x << (y & 63);
	case ISA_ALU_RSH: return x >> (y & 63);
	case ISA_ALU_ARSH: return (uint64_t)((int64_t)x >> (y & 63));
	case ISA_ALU_NEG: return -x;
	case ISA_ALU_MOV:
		return off == 8 ? (uint64_t)(int8_t)y : off == 16 ? (uint64_t)(int16_t)y :
		       off == 32 ? (uint64_t)(int32_t)y : y;
	}
	return 0;
}

static void test_alu_sound(void **state)
{
	static const struct { unsigned op; int16_t off; } ops[] = {
		{ISA_ALU_ADD, 0}, {ISA_ALU_SUB, 0}, {ISA_ALU_MUL, 0}, {ISA_ALU_DIV, 0},
		{ISA_ALU_DIV, 1}, {ISA_ALU_MOD, 0}, {ISA_ALU_MOD, 1}, {ISA_ALU_OR, 0},
		{ISA_ALU_AND, 0}, {ISA_ALU_XOR, 0}, {ISA_ALU_LSH, 0}, {ISA_ALU_RSH, 0},
		{ISA_ALU_ARSH, 0}, {ISA_ALU_NEG, 0}, {ISA_ALU_MOV, 0}, {ISA_ALU_MOV, 8},
		{ISA_ALU_MOV, 16}, {ISA_ALU_MOV, 32},
	};
	uint64_t a[4], b[4];

	for (int iter = 0; iter < 20000; iter++) {
		size_t na = 1 + rnd() % 4, nb = 1 + rnd() % 4;
		for (size_t i = 0; i < na; i++)
			a[i] = interesting();
		for (size_t i = 0; i < nb; i++)
			b[i] = rnd() % 3 ? interesting() : rnd() % 70;
		struct vfy_bounds ba = of_set(a, na), bb = of_set(b, nb);
		for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
			for (int is64 = 0; is64 < 2; is64++) {
				if (ops[o].off == 32 && !is64)
					continue;
				struct vfy_bounds r = ba;
				vfy_bounds_alu(&r, &bb, ops[o].op, ops[o].off, is64);
				for (size_t i = 0; i < na; i++)
					for (size_t j = 0; j < nb; j++) {
						uint64_t z = alu(ops[o].op, ops[o].off, is64, a[i], b[j]);
						if (!in_bounds(&r, z))
							fail_msg("op %#x off %d is64 %d: %#llx, %#llx -> %#llx",
								 ops[o].op, ops[o].off, is64,
								 (unsigned long long)a[i],
								 (unsigned long long)b[j],
								 (unsigned long long)z);
					}
			}
	}
}

static int holds(enum vfy_rel rel, int is32, uint64_t x, uint64_t y)
{
	if (is32) {
		x = (uint32_t)x;
		y = (uint32_t)y;
	}
	int64_t sx = is32 ? (int32_t)(uint32_t)x : (int64_t)x;
	int64_t sy = is32 ? (int32_t)(uint32_t)y : (int64_t)y;
	switch (rel) {
	case REL_EQ: return x == y;
	case REL_NE: return x != y;
	case REL_ULT: return x < y;
	case REL_ULE: return x <= y;
	case REL_UGT: return x > y;
	case REL_UGE: return x >= y;
	case REL_SLT: return sx < sy;
	case REL_SLE: return sx <= sy;
	case REL_SGT: return sx > sy;
	case REL_SGE: return sx >= sy;
	case REL_SET: return (x & y) != 0;
	case REL_NSET: return (x & y) == 0;
	}
	return 0;
}

static void test_refine_sound(void **state)
{
	uint64_t a[3], b[3];

	for (int iter = 0; iter < 50000; iter++) {
		size_t na = 1 + rnd() % 3, nb = 1 + rnd() % 3;
		for (size_t i = 0; i < na; i++)
			a[i] = interesting();
		for (size_t i = 0; i < nb; i++)
			b[i] = interesting();
		for (int rel = REL_EQ; rel <= REL_NSET; rel++)
			for (int is32 = 0; is32 < 2; is32++) {
				struct vfy_bounds ra = of_set(a, na), rb = of_set(b, nb);
				int ok = vfy_bounds_refine(&ra, &rb, rel, is32);
				for (size_t i = 0; i < na; i++)
					for (size_t j = 0; j < nb; j++) {
						if (!holds(rel, is32, a[i], b[j]))
							continue;
						if (!ok || !in_bounds(&ra, a[i]) || !in_bounds(&rb, b[j]))
							fail_msg("rel %d is32 %d: %#llx, %#llx lost", rel, is32,
								 (unsigned long long)a[i],
								 (unsigned long long)b[j]);
					}
			}
	}
}

static void test_precision(void **state)
{
	/* A loop counter compared against a constant stays exact. */
	struct vfy_bounds i = vfy_bounds_sized(4), lim = vfy_bounds_const(16);
	assert_true(vfy_bounds_refine(&i, &lim, REL_ULT, false));
	assert_int_equal(i.umax, 15);
	assert_int_equal(i.smax, 15);
	struct vfy_bounds eight = vfy_bounds_const(8);
	vfy_bounds_alu(&i, &eight, ISA_ALU_MUL, 0, true);
	assert_int_equal(i.umax, 120);
	assert_true(tnum_is_aligned(i.var, 8));

	/* A branch that cannot be taken is reported as impossible. */
	struct vfy_bounds c = vfy_bounds_const(5), d = vfy_bounds_const(5);
	assert_false(vfy_bounds_refine(&c, &d, REL_NE, false));

	/* 32-bit results are zero-extended. */
	struct vfy_bounds m = vfy_bounds_const((uint64_t)-1), one = vfy_bounds_const(1);
	vfy_bounds_alu(&m, &one, ISA_ALU_ADD, 0, false);
	assert_true(vfy_bounds_is_const(&m) && m.var.value == 0);
	struct vfy_bounds n = vfy_bounds_const(0);
	vfy_bounds_alu(&n, &one, ISA_ALU_SUB, 0, false);
	assert_int_equal(n.var.value, 0xffffffffull);

	/* Signed refinement of an unknown value. */
	struct vfy_bounds s = vfy_bounds_unknown(), zero = vfy_bounds_const(0);
	assert_true(vfy_bounds_refine(&s, &zero, REL_SGE, false));
	assert_int_equal(s.smin, 0);
	assert_int_equal(s.umax, INT64_MAX);

	/* and with a mask bounds the value */
	struct vfy_bounds u = vfy_bounds_unknown(), mask = vfy_bounds_const(0x3f);
	vfy_bounds_alu(&u, &mask, ISA_ALU_AND, 0, true);
	assert_int_equal(u.umax, 0x3f);
	assert_int_equal(u.smin, 0);

	struct vfy_bounds e = vfy_bounds_const(0x1234);
	vfy_bounds_end(&e, 16, true);
	assert_int_equal(e.var.value, 0x3412);
	char buf[160];
	vfy_bounds_str(buf, sizeof(buf), &e);
	assert_string_equal(buf, "13330");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alu_sound),
		cmocka_unit_test(test_refine_sound),
		cmocka_unit_test(test_precision),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
