# Set %r9 to 0x100000000
mov %r9, 1
lsh %r9, 32
mov %r0, 0
mov %r1, 5
mov32 %r1, 5
# set %r1 to 0x100000005
or %r1, %r9
mov %r2, 6
mov %r3, 4
jgt32 %r1, %r2, exit # Not taken
jgt32 %r1, %r1, exit # Not taken
jgt32 %r1, %r3, taken # Taken
exit
taken:
mov %r0, 1
exit
