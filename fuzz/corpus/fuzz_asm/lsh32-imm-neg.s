mov %r0, 0x11
lsh32 %r0, -4
exit
