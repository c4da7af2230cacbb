mov %r0, 0x1
lsh %r0, -60
exit
