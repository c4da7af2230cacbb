mov %r0, -13
mov %r1, 4
smod %r0, %r1
exit
