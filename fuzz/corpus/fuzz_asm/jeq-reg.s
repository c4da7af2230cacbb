mov32 %r0, 0
mov32 %r1, 0xa
mov32 %r2, 0xb
jeq %r1, %r2, exit # Not taken
jeq %r1, %r1, +1 # Taken
exit
mov32 %r0, 1
mov32 %r1, 0xb
jeq %r1, %r2, exit # Taken
mov32 %r0, 2 # Skipped
exit
