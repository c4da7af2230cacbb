# RFC 9669 4.1: ARSH32 (imm/reg) arithmetic shift and masking.
# imm variant masking
mov32 %r1, 0x80000000
arsh32 %r1, 31
jne32 %r1, 0xffffffff, fail
# reg variant
mov32 %r2, 0x80000000
mov32 %r3, 31
arsh32 %r2, %r3
jne32 %r2, 0xffffffff, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
