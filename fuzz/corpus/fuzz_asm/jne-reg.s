mov32 %r0, 0
mov32 %r1, 0xb
mov32 %r2, 0xb
jne %r1, %r2, exit # Not taken
jne %r1, %r1, exit # Not taken
mov32 %r0, 1
mov32 %r1, 0xa
jne %r1, %r2, +1 # Taken
mov32 %r0, 2 # Skipped
exit
