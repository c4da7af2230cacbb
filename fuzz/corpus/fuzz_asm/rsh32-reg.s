mov %r0, 0
sub %r0, 1
mov %r7, 8
rsh32 %r0, %r7
exit
