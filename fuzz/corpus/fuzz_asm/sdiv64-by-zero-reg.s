mov32 %r0, 1
mov32 %r1, 0
sdiv %r0, %r1
exit
