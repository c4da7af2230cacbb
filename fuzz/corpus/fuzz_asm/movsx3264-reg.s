lddw %r1, 0x0123456789abcdef
movsx3264 %r0, %r1
exit
