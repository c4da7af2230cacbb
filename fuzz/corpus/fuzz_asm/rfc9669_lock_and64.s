# RFC 9669 Section 5.3: atomic AND (64-bit), with/without FETCH.
# no FETCH
lddw %r7, 0xff
stxdw [%r10-8], %r7
lddw %r1, 0x0f
lock and [%r10-8], %r1
ldxdw %r2, [%r10-8]
jne %r2, 0x0f, fail
jne %r1, 0x0f, fail
# FETCH
lddw %r7, 0xf0
stxdw [%r10-8], %r7
lddw %r3, 0x0f
lock fetch and [%r10-8], %r3
jne %r3, 0xf0, fail
ldxdw %r4, [%r10-8]
jne %r4, 0x00, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
