mov %r0, -13
smod %r0, 4
exit
