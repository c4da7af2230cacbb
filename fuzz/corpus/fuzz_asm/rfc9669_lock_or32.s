# RFC 9669 Section 5.3: atomic OR (32-bit), with/without FETCH.
# no FETCH
stw [%r10-4], 0x0
mov32 %r1, 0x10
lock or32 [%r10-4], %r1
ldxw %r2, [%r10-4]
jne %r2, 0x10, fail
jne %r1, 0x10, fail
# FETCH
stw [%r10-4], 0x08
mov32 %r3, 0x10
lock fetch or32 [%r10-4], %r3
jne %r3, 0x08, fail
ldxw %r4, [%r10-4]
jne %r4, 0x18, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
