mov %r0, %r1
sth [%r0], 0x1234
ldxh %r0, [%r0]
exit
