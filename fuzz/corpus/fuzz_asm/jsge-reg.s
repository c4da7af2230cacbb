mov32 %r0, 0
mov %r1, 0xfffffffe
mov %r2, 0xffffffff
mov32 %r3, 0
jsge %r1, %r2, exit # Not taken
jsge %r1, %r3, exit # Not taken
jsge %r1, %r1, +1 # Taken
exit
mov32 %r0, 1
mov %r1, %r2
jsge %r1, %r2, +1 # Taken
mov32 %r0, 2 # Skipped
exit
