# RFC 9669 Section 4.1: MOD (ALU64) semantics.
# reg variant
mov %r1, 128
mov %r2, 43
mod %r1, %r2
jne %r1, 42, fail
# modulo by zero leaves dst unchanged for ALU64
mov %r3, 123
mov %r4, 0
mod %r3, %r4
jne %r3, 123, fail
# immediate sign-extension rule for ALU64 MOD: imm is sign-extended.
# MOD is an unsigned remainder.
# If imm were treated as unsigned (0x00000000ffffffff), then 2^32 % (2^32-1) == 1.
# With sign-extension, 0xffffffff becomes 0xffffffffffffffff and 2^32 % (2^64-1) == 2^32.
lddw %r5, 0x0000000100000000
mod %r5, 0xffffffff
lddw %r6, 0x0000000100000000
jne %r5, %r6, fail
mov %r0, 1
exit
fail:
mov %r0, 0
exit
