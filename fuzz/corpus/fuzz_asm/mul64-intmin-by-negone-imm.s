ldxdw %r0, [%r1]
mul %r0, -1
exit
