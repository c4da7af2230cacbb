ldxdw %r0, [%r1]
mov %r1, -1
neg %r0
exit
