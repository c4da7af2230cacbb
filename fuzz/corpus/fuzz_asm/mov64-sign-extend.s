mov %r0, -10
exit
