lddw %r0, 0xFFFFFFFFFFFFFFFF
mov32 %r1, -10
div %r0, %r1
exit
