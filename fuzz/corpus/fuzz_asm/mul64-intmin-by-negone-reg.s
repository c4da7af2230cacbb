ldxdw %r0, [%r1]
mov %r1, -1
mul %r0, %r1
exit
