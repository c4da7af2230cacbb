# RFC 9669 Section 5.3: atomic ADD (64-bit), no FETCH.
lddw %r3, 1
stxdw [%r10-8], %r3
mov %r1, 41
lock add [%r10-8], %r1
ldxdw %r2, [%r10-8]
jne %r2, 42, fail
jne %r1, 41, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
