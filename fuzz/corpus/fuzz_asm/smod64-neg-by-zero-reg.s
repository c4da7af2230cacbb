mov %r0, -10
mov %r1, 0
smod %r0, %r1
exit
