mov32 %r0, 0
mov %r1, 0xfffffffe
mov %r2, 0xffffffff
jsgt %r1, %r2, exit # Not taken
jsgt %r1, %r1, exit # Not taken
mov32 %r0, 1
mov32 %r1, 0
jsgt %r1, %r2, +1 # Taken
mov32 %r0, 2 # Skipped
exit
