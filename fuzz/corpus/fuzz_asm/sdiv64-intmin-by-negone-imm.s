ldxdw %r0, [%r1]
sdiv %r0, -1
exit
