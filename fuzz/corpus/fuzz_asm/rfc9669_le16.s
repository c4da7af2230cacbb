# RFC 9669 Section 4.2: LE16 converts between host and little-endian for width=16.
# On little-endian hosts this is a no-op.
mov %r0, 0x1122
le16 %r0
jne %r0, 0x1122, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
