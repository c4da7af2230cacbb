lddw %r0, 0x10000000c
div32 %r0, 4
exit
