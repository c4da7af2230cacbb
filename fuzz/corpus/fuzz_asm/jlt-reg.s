mov %r0, 0
mov %r1, 5
mov %r2, 4
mov %r3, 6
jlt %r1, %r2, exit # Not taken
jlt %r1, %r1, exit # Not taken
jlt %r1, %r3, +1 # Taken
exit
mov %r0, 1
exit
