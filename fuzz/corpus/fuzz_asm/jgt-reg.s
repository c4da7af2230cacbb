mov %r0, 0
mov %r1, 5
mov %r2, 6
mov %r3, 4
jgt %r1, %r2, exit # Not taken
jgt %r1, %r1, exit # Not taken
jgt %r1, %r3, taken # Taken
exit
taken:
mov %r0, 1
exit
