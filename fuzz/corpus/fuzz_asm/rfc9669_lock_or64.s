# RFC 9669 Section 5.3: atomic OR (64-bit), with/without FETCH.
# no FETCH
lddw %r7, 0
stxdw [%r10-8], %r7
lddw %r1, 0x10
lock or [%r10-8], %r1
ldxdw %r2, [%r10-8]
jne %r2, 0x10, fail
jne %r1, 0x10, fail
# FETCH
lddw %r7, 0x08
stxdw [%r10-8], %r7
lddw %r3, 0x10
lock fetch or [%r10-8], %r3
jne %r3, 0x08, fail
ldxdw %r4, [%r10-8]
jne %r4, 0x18, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
