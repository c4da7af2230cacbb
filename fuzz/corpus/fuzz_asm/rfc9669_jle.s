# RFC 9669 Section 4.3: JLE variants (unsigned) (JMP/JMP32, imm/reg).
mov %r1, 42
jle %r1, 42, ok1
ja fail
ok1:
mov %r2, 99
mov %r3, 99
jle %r2, %r3, ok2
ja fail
ok2:
mov %r4, 1
jle32 %r4, 1, ok3
ja fail
ok3:
mov %r5, 1
mov %r6, 1
jle32 %r5, %r6, ok4
ja fail
ok4:
mov %r0, 1
exit
fail:
mov %r0, 0
exit
