/* SPDX-License-Identifier: MIT */
/*
 * version_loop.c - a process that keeps calling one driver function, for
 * the kernel-uprobe tests (tests/unit/test_host.c): `version_loop N [MS]`
 * calls cuDriverGetVersion N times, MS milliseconds apart (default 0),
 * through libcuda's exported symbol, and prints "calls=N version=V".
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 1;
	long ms = argc > 2 ? strtol(argv[2], NULL, 0) : 0;
	struct timespec gap = {ms / 1000, (ms % 1000) * 1000000L};
	int v = 0;
	for (long i = 0; i < n; i++) {
		if (cuDriverGetVersion(&v) != CUDA_SUCCESS)
			return 1;
		if (ms)
			nanosleep(&gap, NULL);
	}
	printf("calls=%ld version=%d\n", n, v);
	return 0;
}
