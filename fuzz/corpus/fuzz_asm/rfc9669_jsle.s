# RFC 9669 Section 4.3: JSLE variants (signed) (JMP/JMP32, imm/reg).
mov %r1, -1
jsle %r1, -1, ok1
ja fail
ok1:
mov %r2, -2
mov %r3, -1
jsle %r2, %r3, ok2
ja fail
ok2:
mov %r4, -1
jsle32 %r4, 0, ok3
ja fail
ok3:
mov %r5, -1
mov %r6, 0
jsle32 %r5, %r6, ok4
ja fail
ok4:
mov %r0, 1
exit
fail:
mov %r0, 0
exit
