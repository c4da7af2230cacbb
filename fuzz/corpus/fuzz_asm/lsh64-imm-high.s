mov %r0, 0x1
lsh %r0, 68
exit
