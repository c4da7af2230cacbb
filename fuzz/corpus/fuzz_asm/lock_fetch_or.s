lddw %r0, 0x1100110011001100
lddw %r1, 0x0011001100110011
stxdw [%r10-8], %r0
lock fetch or [%r10-8], %r1
jne %r1, %r0, exit
ldxdw %r0, [%r10-8]
lddw %r1, 0x1111111111111111
jne %r0, %r1, exit
mov %r0, 0
exit
