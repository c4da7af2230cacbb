mov32 %r0, 0
mov %r1, 0xfffffffe
jsgt %r1, 0xffffffff, exit # Not taken
mov32 %r0, 1
mov32 %r1, 0
jsgt %r1, 0xffffffff, +1 # Taken
mov32 %r0, 2 # Skipped
exit
