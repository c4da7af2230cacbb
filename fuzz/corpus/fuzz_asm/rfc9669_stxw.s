# RFC 9669 Section 5.1: {MEM, W, STX} store register.
mov32 %r1, 0x89abcdef
stxw [%r10-4], %r1
ldxw %r0, [%r10-4]
exit
