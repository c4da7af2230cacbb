# RFC 9669 4.1: XOR32 (imm/reg) semantics.
# imm variant
mov32 %r1, 0xffff0000
xor32 %r1, 0x00ff00ff
jne32 %r1, 0xff0000ff, fail
# reg variant
mov32 %r2, 0x12345678
mov32 %r3, 0x87654321
xor32 %r2, %r3
jne32 %r2, 0x95511559, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
