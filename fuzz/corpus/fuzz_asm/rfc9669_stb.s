# RFC 9669 Section 5.1: {MEM, B, ST} store immediate.
stb [%r10-1], 0x7f
ldxb %r0, [%r10-1]
exit
