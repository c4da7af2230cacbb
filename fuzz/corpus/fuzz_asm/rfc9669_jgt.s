# RFC 9669 Section 4.3: JGT variants (unsigned) (JMP/JMP32, imm/reg).
# JMP imm
mov %r1, 43
jgt %r1, 42, ok1
ja fail
ok1:
# JMP reg
mov %r2, 100
mov %r3, 99
jgt %r2, %r3, ok2
ja fail
ok2:
# JMP32 imm (u32)
mov %r4, -1
jgt32 %r4, 1, ok3
ja fail
ok3:
# JMP32 reg (u32)
mov %r5, -1
mov %r6, 1
jgt32 %r5, %r6, ok4
ja fail
ok4:
mov %r0, 1
exit
fail:
mov %r0, 0
exit
