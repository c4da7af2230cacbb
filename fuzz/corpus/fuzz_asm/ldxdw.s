ldxdw %r0, [%r1+2]
exit
