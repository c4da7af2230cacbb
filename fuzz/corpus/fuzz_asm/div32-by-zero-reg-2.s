mov32 %r0, 1
lddw %r1, 0x100000000
div32 %r0, %r1
exit
