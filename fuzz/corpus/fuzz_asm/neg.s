lddw %r0, 0x100000002
neg32 %r0
exit
