lddw %r0, 0xFFFFFFFFFFFFFFFF
div %r0, -10
exit
