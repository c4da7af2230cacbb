# RFC 9669 Section 4.1: RSH (ALU64) logical shift uses mask 0x3f.
# imm variant
lddw %r1, 0x8000000000000000
rsh %r1, 63
jne %r1, 1, fail
# reg variant
lddw %r3, 0x8000000000000000
mov %r4, 63
rsh %r3, %r4
jne %r3, 1, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
