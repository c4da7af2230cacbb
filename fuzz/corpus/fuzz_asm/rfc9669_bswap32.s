# RFC 9669 Section 4.2: bswap32 is unconditional byte swap (ALU64 END with imm=32).
mov %r0, 0x11223344
bswap32 %r0
jne %r0, 0x44332211, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
