mov %r0, 0x1
mov %r7, -60
lsh %r0, %r7
exit
