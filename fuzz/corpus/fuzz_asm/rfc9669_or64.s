# RFC 9669 Section 4.1: OR (ALU64) imm/reg semantics.
# imm variant
lddw %r1, 0x5500550055005500
or %r1, 0x00aa00aa
lddw %r2, 0x5500550055aa55aa
jne %r1, %r2, fail
# reg variant
lddw %r3, 0x000000000000002a
lddw %r4, 0x00000000ff000000
or %r3, %r4
lddw %r5, 0x00000000ff00002a
jne %r3, %r5, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
