# RFC 9669 Section 5.3: atomic FETCH|ADD (32-bit).
stw [%r10-4], 1
mov32 %r1, 41
lock fetch add32 [%r10-4], %r1
# FETCH => src overwritten with old value
jne %r1, 1, fail
ldxw %r2, [%r10-4]
jne %r2, 42, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
