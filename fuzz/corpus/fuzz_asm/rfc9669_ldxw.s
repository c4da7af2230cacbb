# RFC 9669 Section 5.1: {MEM, W, LDX} unsigned word load.
stw [%r10-4], 0x11223344
ldxw %r0, [%r10-4]
exit
