# RFC 9669 Section 5.1: {MEM, H, ST} store immediate.
sth [%r10-2], 0x1234
ldxh %r0, [%r10-2]
exit
