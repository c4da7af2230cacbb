# RFC 9669 Section 4.2: BE32 converts between host and big-endian for width=32.
mov %r0, 0x11223344
be32 %r0
jne %r0, 0x44332211, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
