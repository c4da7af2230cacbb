# RFC 9669 Section 5.1: {MEM, DW, LDX} unsigned doubleword load.
lddw %r1, 0x1122334455667788
stxdw [%r10-8], %r1
ldxdw %r0, [%r10-8]
exit
