mov32 %r0, 1
lsh %r0, 63
mov32 %r1, 124
arsh %r0, %r1
exit
