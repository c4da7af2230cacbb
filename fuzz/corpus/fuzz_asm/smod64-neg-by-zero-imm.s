# Test smod64 by zero - dst unchanged per RFC 9669.
# Use register instead of immediate since Linux kernel rejects mod by imm 0.
mov %r0, -10
mov32 %r1, 0
smod %r0, %r1
exit
