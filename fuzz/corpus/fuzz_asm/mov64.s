mov %r1, 1
mov %r0, %r1
mov %r0, %r0
exit
