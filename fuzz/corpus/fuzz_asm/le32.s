ldxw %r0, [%r1]
le32 %r0
exit
