mov %r0, 0
mov %r1, 1
mov %r2, 2
mov %r3, 3
mov %r4, 4
mov %r5, 5
mov %r6, 6
mov %r7, 7
mov %r8, 8
# %r0 == 0
jne %r0, 0, exit
or %r0, %r5
or %r0, 0xa0
or %r0, %r0
# %r0 == 0xa5
jne %r0, 0xa5, exit
and %r0, 0xa3
mov %r9, 0x91
and %r0, %r9
and %r0, %r0
# %r0 == 0x81
jne %r0, 0x81, exit
lsh %r0, 32
lsh %r0, 22
lsh %r0, %r8
# %r0 == 0x4000000000000000
# Too large to test against imm.
rsh %r0, 32
rsh %r0, 19
rsh %r0, %r7
# %r0 == 0x10
jne %r0, 0x10, exit
xor %r0, 0x03
xor %r0, %r2
# %r0 == 0x11
exit
