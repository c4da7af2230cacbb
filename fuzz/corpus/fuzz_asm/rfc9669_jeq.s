# RFC 9669 Section 4.3: JEQ variants (JMP/JMP32, imm/reg).
# JEQ (JMP) imm
mov %r1, 42
jeq %r1, 42, ok1
ja fail
ok1:
# JEQ (JMP) reg
mov %r2, 100
mov %r3, 100
jeq %r2, %r3, ok2
ja fail
ok2:
# JEQ32 (JMP32) imm compares (u32)
mov %r4, -1
jeq32 %r4, 0xffffffff, ok3
ja fail
ok3:
# JEQ32 (JMP32) reg compares (u32)
mov %r5, -1
mov %r6, 0xffffffff
jeq32 %r5, %r6, ok4
ja fail
ok4:
mov %r0, 1
exit
fail:
mov %r0, 0
exit
