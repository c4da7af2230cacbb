stb [%r1+2], 0x11
ldxb %r0, [%r1+2]
exit
