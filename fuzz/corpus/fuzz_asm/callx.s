mov %r1, -1
mov %r2, 5
call %r2
mov %r0, 2
exit
