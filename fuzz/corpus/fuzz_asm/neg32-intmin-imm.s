lddw %r0, 0x80000000
neg32 %r0
exit
