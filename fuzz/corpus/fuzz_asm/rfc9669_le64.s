# RFC 9669 Section 4.2: LE64 converts between host and little-endian for width=64.
# On little-endian hosts this is a no-op.
lddw %r0, 0x1122334455667788
le64 %r0
lddw %r1, 0x1122334455667788
jne %r0, %r1, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
