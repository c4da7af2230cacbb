mov %r0, 0xc
lsh %r0, 32
div %r0, 4
exit
