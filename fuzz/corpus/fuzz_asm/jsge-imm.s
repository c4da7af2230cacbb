mov32 %r0, 0
mov %r1, 0xfffffffe
jsge %r1, 0xffffffff, exit # Not taken
jsge %r1, 0, +4 # Not taken
mov32 %r0, 1
mov %r1, 0xffffffff
jsge %r1, 0xffffffff, +1 # Taken
mov32 %r0, 2 # Skipped
exit
