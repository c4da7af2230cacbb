lddw %r0, 0xcccccccccccccccc
lddw %r1, 0xffffffffffffffff
stxdw [%r10-8], %r0
lock xor [%r10-8], %r1
ldxdw %r0, [%r10-8]
lddw %r1, 0x3333333333333333
jne %r0, %r1, exit
mov %r0, 0
exit
