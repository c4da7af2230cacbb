# RFC 9669 4.1: LSH32 (imm/reg) shift masking behavior.
# imm variant: Linux verifier rejects invalid immediate shifts.
# Use a register shift to validate masking behavior (40 & 31 == 8).
mov32 %r1, 1
mov32 %r4, 40
lsh32 %r1, %r4
jne32 %r1, 0x100, fail
# reg variant
mov32 %r2, 1
mov32 %r3, 8
lsh32 %r2, %r3
jne32 %r2, 0x100, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
