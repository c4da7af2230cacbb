# RFC 9669 Section 4.3: JNE variants (JMP/JMP32, imm/reg).
# JNE (JMP) imm
mov %r1, 41
jne %r1, 42, ok1
ja fail
ok1:
# JNE (JMP) reg
mov %r2, 100
mov %r3, 101
jne %r2, %r3, ok2
ja fail
ok2:
# JNE32 (JMP32) imm
mov %r4, -1
jne32 %r4, 0, ok3
ja fail
ok3:
# JNE32 (JMP32) reg
mov %r5, -1
mov %r6, 0
jne32 %r5, %r6, ok4
ja fail
ok4:
mov %r0, 1
exit
fail:
mov %r0, 0
exit
