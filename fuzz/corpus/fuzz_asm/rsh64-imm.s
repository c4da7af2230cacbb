mov %r0, 0x10
rsh %r0, 4
exit
