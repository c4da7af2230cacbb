ldxdw %r0, [%r1]
be64 %r0
exit
