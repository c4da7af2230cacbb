# RFC 9669 Section 4.3: JSET variants (JMP/JMP32, imm/reg).
mov %r1, 0x10
jset %r1, 0x10, ok1
ja fail
ok1:
mov %r2, 0x10
mov %r3, 0x08
jset %r2, %r3, fail
ja ok2
ok2:
mov %r4, 0x80000000
jset32 %r4, 0x80000000, ok3
ja fail
ok3:
mov %r5, 0x80000000
mov %r6, 0x80000000
jset32 %r5, %r6, ok4
ja fail
ok4:
mov %r0, 1
exit
fail:
mov %r0, 0
exit
