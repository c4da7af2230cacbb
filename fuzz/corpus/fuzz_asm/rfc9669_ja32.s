# RFC 9669 Section 4.3: JA (JMP32 class) uses 32-bit imm field.
# Restructured to avoid unreachable code after unconditional jump.
mov %r0, 0
ja32 target
target:
mov %r0, 1
exit
