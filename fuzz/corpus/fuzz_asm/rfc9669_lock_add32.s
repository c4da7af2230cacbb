# RFC 9669 Section 5.3: atomic ADD (32-bit), no FETCH.
stw [%r10-4], 1
mov32 %r1, 41
lock add32 [%r10-4], %r1
ldxw %r2, [%r10-4]
jne %r2, 42, fail
# no FETCH => src unchanged
jne %r1, 41, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
