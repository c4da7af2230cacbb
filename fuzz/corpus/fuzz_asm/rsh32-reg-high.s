mov %r0, 0
sub %r0, 1
mov %r7, 40
rsh32 %r0, %r7
exit
