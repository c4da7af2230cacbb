# RFC 9669 Section 4.3: JSGT variants (signed) (JMP/JMP32, imm/reg).
mov %r1, -1
jsgt %r1, -2, ok1
ja fail
ok1:
mov %r2, -1
mov %r3, 1
jsgt %r2, %r3, fail
ja ok2
ok2:
mov %r4, -1
jsgt32 %r4, 0, fail
ja ok3
ok3:
mov %r5, -1
mov %r6, 0
jsgt32 %r5, %r6, fail
ja ok4
ok4:
mov %r0, 1
exit
fail:
mov %r0, 0
exit
