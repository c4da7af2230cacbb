mov %r0, 0x80000000
mul32 %r0, -1
exit
