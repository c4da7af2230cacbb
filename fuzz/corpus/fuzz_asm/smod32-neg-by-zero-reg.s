mov32 %r0, -10
mov32 %r1, 0
smod32 %r0, %r1
exit
