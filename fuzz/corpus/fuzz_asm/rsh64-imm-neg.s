mov %r0, 0x10
rsh %r0, -60
exit
