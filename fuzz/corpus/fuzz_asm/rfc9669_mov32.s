# RFC 9669 4.1: MOV32 (imm/reg) zero-extension behavior.
# imm variant: upper 32 bits cleared
mov %r1, -1
mov32 %r1, 0x80000000
rsh %r1, 32
jne32 %r1, 0, fail
# reg variant: copies low 32 bits, clears upper 32
mov %r2, -1
mov32 %r3, 0x7fffffff
mov32 %r2, %r3
rsh %r2, 32
jne32 %r2, 0, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
