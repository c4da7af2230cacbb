lddw %r0, 0x10000000c
sdiv32 %r0, -4
exit
