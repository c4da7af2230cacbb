# RFC 9669 Section 4.2: bswap16 is unconditional byte swap (ALU64 END with imm=16).
mov %r0, 0x1122
bswap16 %r0
jne %r0, 0x2211, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
