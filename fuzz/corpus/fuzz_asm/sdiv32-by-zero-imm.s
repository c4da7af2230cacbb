# Test sdiv32 by zero - result should be 0 per RFC 9669.
# Use register instead of immediate since Linux kernel rejects div by imm 0.
mov32 %r0, 1
mov32 %r1, 0
sdiv32 %r0, %r1
exit
