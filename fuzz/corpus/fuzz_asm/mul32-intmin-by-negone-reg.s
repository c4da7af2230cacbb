mov %r0, 0x80000000
mov %r1, -1
mul32 %r0, %r1
exit
