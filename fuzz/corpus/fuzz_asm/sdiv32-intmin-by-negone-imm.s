mov32 %r0, 0x80000000
sdiv32 %r0, -1
exit
