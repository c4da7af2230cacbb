# RFC 9669 4.1: NEG32 semantics and 32-bit wrap.
mov32 %r1, 1
neg32 %r1
jne32 %r1, 0xffffffff, fail
mov32 %r2, 0
neg32 %r2
jne32 %r2, 0, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
