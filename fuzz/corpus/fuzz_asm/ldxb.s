ldxb %r0, [%r1+0x2]
exit
