lddw %r1, 0x0123456789abcdef
movsx1632 %r0, %r1
exit
