ldxdw %r0, [%r1]
le64 %r0
exit
