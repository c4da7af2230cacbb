# Set %r9 to 0x100000000
mov %r9, 1
lsh %r9, 32
mov32 %r0, 0
mov32 %r1, 0xfffffffe
# set %r1 to 0x1fffffffe
or %r1, %r9
jslt32 %r1, 0xfffffffd, exit # Not taken
jslt32 %r1, 0xfffffffe, exit # Not taken
jslt32 %r1, 0xffffffff, +1 # Taken
exit
mov32 %r0, 1
exit
