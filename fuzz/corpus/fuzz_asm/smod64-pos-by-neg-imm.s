mov %r0, 13
smod %r0, -3
exit
