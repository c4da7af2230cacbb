mov %r0, 0x10
mov %r7, -60
rsh %r0, %r7
exit
