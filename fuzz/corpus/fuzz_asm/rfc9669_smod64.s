# RFC 9669 Section 4.1: SMOD (signed) ALU64 semantics (truncated division).
# -13 s% 3 == -1
mov %r1, -13
mov %r2, 3
smod %r1, %r2
jne %r1, 0xffffffff, fail
# modulo by zero leaves dst unchanged for ALU64
mov %r3, -13
mov %r4, 0
smod %r3, %r4
jne %r3, 0xfffffff3, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
