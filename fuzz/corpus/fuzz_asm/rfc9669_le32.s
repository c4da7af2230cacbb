# RFC 9669 Section 4.2: LE32 converts between host and little-endian for width=32.
# On little-endian hosts this is a no-op.
mov %r0, 0x11223344
le32 %r0
jne %r0, 0x11223344, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
