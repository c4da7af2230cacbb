mov32 %r0, 0x80000000
smod32 %r0, -1
exit
