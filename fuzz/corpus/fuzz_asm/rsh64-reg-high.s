mov %r0, 0x10
mov %r7, 68
rsh %r0, %r7
exit
