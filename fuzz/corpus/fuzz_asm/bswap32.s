lddw %r0, 0x8877665544332211
bswap32 %r0
exit
