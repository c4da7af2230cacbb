stw [%r1+2], 0x44332211
ldxw %r0, [%r1+2]
exit
