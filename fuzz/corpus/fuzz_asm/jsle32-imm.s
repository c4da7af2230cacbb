# Set %r9 to 0x100000000
mov %r9, 1
lsh %r9, 32
mov32 %r0, 0
mov32 %r1, 0xfffffffe
# set %r1 to 0x1fffffffe
or %r1, %r9
jsle32 %r1, 0xfffffffd, exit # Not taken
jsle32 %r1, 0xffffffff, +1 # Taken
exit
mov32 %r0, 1
jsle32 %r1, 0xfffffffe, +1 # Taken
mov32 %r0, 2
exit
