mov32 %r2, 0x11
stxb [%r1+2], %r2
ldxb %r0, [%r1+2]
exit
