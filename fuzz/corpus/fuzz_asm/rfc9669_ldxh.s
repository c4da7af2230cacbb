# RFC 9669 Section 5.1: {MEM, H, LDX} unsigned halfword load.
sth [%r10-2], 0x8001
ldxh %r0, [%r10-2]
exit
