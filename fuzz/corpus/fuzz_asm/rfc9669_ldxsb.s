# RFC 9669 Section 5.2: {MEMSX, B, LDX} sign-extending byte load.
stb [%r10-1], 0x80
ldxsb %r0, [%r10-1]
exit
