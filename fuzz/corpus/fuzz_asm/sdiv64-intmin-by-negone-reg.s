ldxdw %r0, [%r1]
mov %r1, -1
sdiv %r0, %r1
exit
