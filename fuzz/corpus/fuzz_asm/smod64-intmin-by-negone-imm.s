ldxdw %r0, [%r1]
smod %r0, -1
exit
