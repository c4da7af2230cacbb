mov32 %r0, 0
mov32 %r1, 5
jgt %r1, 6, exit # Not taken
jgt %r1, 5, exit # Not taken
jgt %r1, 4, L1 # Taken
exit
L1:
mov32 %r0, 1
exit
