# RFC 9669 4.1: RSH32 (imm/reg) logical shift and masking.
# imm variant
mov32 %r1, 0x80000000
rsh32 %r1, 8
jne32 %r1, 0x00800000, fail
# reg variant
mov32 %r2, 0x80000000
mov32 %r3, 8
rsh32 %r2, %r3
jne32 %r2, 0x00800000, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
