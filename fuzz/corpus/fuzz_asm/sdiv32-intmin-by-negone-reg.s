mov32 %r0, 0x80000000
mov32 %r1, -1
sdiv32 %r0, %r1
exit
