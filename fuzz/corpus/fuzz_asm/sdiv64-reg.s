mov %r0, 0xc
lsh %r0, 32
mov %r1, -4
sdiv %r0, %r1
exit
