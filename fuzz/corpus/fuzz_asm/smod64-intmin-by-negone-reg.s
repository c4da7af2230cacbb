ldxdw %r0, [%r1]
mov %r1, -1
smod %r0, %r1
exit
