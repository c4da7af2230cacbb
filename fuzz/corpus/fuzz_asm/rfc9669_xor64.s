# RFC 9669 Section 4.1: XOR (ALU64) imm/reg semantics.
# imm variant
lddw %r1, 0xffff0000ffff0000
xor %r1, 0x00ff00ff
lddw %r2, 0xffff0000ff0000ff
jne %r1, %r2, fail
# reg variant
lddw %r3, 0x123456789abcdef0
lddw %r4, 0x0f0e0d0c0b0a0908
xor %r3, %r4
lddw %r5, 0x1d3a5b7491b6d7f8
jne %r3, %r5, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
