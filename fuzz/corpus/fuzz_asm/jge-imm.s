mov32 %r0, 0
mov32 %r1, 0xa
jge %r1, 0xb, exit # Not taken
mov32 %r0, 1
mov32 %r1, 0xc
jge %r1, 0xb, exit # Taken
mov32 %r0, 2 # Skipped
exit
