# RFC 9669 Section 4.1: SDIV (signed) ALU64 semantics.
# (-13) s/ 3 == -4 (trunc toward zero)
mov %r1, -13
mov %r2, 3
sdiv %r1, %r2
jne %r1, 0xfffffffc, fail
# div-by-zero sets dst to 0
mov %r3, -13
mov %r4, 0
sdiv %r3, %r4
jne %r3, 0, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
