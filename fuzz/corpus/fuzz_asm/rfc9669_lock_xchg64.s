# RFC 9669 Section 5.3: atomic XCHG (64-bit) always has FETCH semantics.
lddw %r3, 0x1122334455667788
stxdw [%r10-8], %r3
lddw %r1, 0xaabbccddeeff0011
lock xchg [%r10-8], %r1
lddw %r4, 0x1122334455667788
jne %r1, %r4, fail
ldxdw %r2, [%r10-8]
lddw %r4, 0xaabbccddeeff0011
jne %r2, %r4, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
