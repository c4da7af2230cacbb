mov32 %r0, 0
mov %r1, 0xfffffffe
jslt %r1, 0xfffffffd, exit # Not taken
jslt %r1, 0xfffffffe, exit # Not taken
jslt %r1, 0xffffffff, +1 # Taken
exit
mov32 %r0, 1
exit
