mov %r0, 0x11
mov %r7, -4
lsh32 %r0, %r7
exit
