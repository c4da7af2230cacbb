# RFC 9669 4.1: OR32 (imm/reg) semantics.
# imm variant
mov32 %r1, 0x55005500
or32 %r1, 0x00aa00aa
jne32 %r1, 0x55aa55aa, fail
# reg variant
mov32 %r2, 0x0000002a
mov32 %r3, 0x0000ff00
or32 %r2, %r3
jne32 %r2, 0x0000ff2a, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
