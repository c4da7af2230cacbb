lddw %r1, 0x0123456789abcdef
movsx864 %r0, %r1
exit
