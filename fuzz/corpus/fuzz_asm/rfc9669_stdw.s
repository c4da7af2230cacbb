# RFC 9669 Section 5.1: {MEM, DW, ST} store immediate.
stdw [%r10-8], 0x11223344
ldxdw %r0, [%r10-8]
exit
