# RFC 9669 Section 4.3: JGE variants (unsigned) (JMP/JMP32, imm/reg).
mov %r1, 42
jge %r1, 42, ok1
ja fail
ok1:
mov %r2, 100
mov %r3, 100
jge %r2, %r3, ok2
ja fail
ok2:
mov %r4, 0
jge32 %r4, 0, ok3
ja fail
ok3:
mov %r5, 0
mov %r6, 0
jge32 %r5, %r6, ok4
ja fail
ok4:
mov %r0, 1
exit
fail:
mov %r0, 0
exit
