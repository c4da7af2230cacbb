# RFC 9669 Section 4.3: JLT variants (unsigned) (JMP/JMP32, imm/reg).
mov %r1, 41
jlt %r1, 42, ok1
ja fail
ok1:
mov %r2, 99
mov %r3, 100
jlt %r2, %r3, ok2
ja fail
ok2:
mov %r4, 1
jlt32 %r4, 2, ok3
ja fail
ok3:
mov %r5, 1
mov %r6, 2
jlt32 %r5, %r6, ok4
ja fail
ok4:
mov %r0, 1
exit
fail:
mov %r0, 0
exit
