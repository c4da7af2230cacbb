mov32 %r0, -13
smod32 %r0, 4
exit
