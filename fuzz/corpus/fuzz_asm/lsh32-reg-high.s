mov %r0, 0x11
mov %r7, 60
lsh32 %r0, %r7
exit
