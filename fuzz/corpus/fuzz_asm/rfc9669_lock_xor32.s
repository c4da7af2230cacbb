# RFC 9669 Section 5.3: atomic XOR (32-bit), with/without FETCH.
# no FETCH
stw [%r10-4], 0xaa
mov32 %r1, 0xff
lock xor32 [%r10-4], %r1
ldxw %r2, [%r10-4]
jne %r2, 0x55, fail
jne %r1, 0xff, fail
# FETCH
stw [%r10-4], 0xaa
mov32 %r3, 0xff
lock fetch xor32 [%r10-4], %r3
jne %r3, 0xaa, fail
ldxw %r4, [%r10-4]
jne %r4, 0x55, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
