mov %r1, -1
call 5
mov %r0, 2
exit
