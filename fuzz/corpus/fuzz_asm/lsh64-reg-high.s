mov %r0, 0x1
mov %r7, 68
lsh %r0, %r7
exit
