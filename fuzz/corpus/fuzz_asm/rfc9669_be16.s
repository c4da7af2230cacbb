# RFC 9669 Section 4.2: BE16 converts between host and big-endian for width=16.
mov %r0, 0x1122
be16 %r0
jne %r0, 0x2211, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
