ldxdw %r0, [%r1]
neg %r0
exit
