# RFC 9669 Section 4.3: JA (JMP class) uses 16-bit offset field.
# Note: The Linux kernel verifier rejects programs with unreachable instructions.
# Keep the jump target adjacent to avoid creating an unreachable block.
mov %r0, 1
ja done
done:
exit
