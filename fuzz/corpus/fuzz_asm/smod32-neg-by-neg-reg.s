mov32 %r0, -13
mov32 %r1, -3
smod32 %r0, %r1
exit
