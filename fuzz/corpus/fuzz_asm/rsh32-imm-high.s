mov %r0, 0
sub %r0, 1
rsh32 %r0, 40
exit
