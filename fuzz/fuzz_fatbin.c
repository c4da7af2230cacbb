/* SPDX-License-Identifier: MIT */
/*
 * fuzz_fatbin - the fatbin parser on any bytes: iterating, decompressing
 * every entry and choosing PTX must not crash, must not read outside the
 * input (ASan), and must give entries that lie inside it.  Inputs whose
 * header claims a length that fits are also parsed with the length
 * unknown, directly and through a wrapper, as the agent does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/fatbin.h"

static void fuzz_check_msg(const struct err *e)
{
	if (!memchr(e->msg, '\0', sizeof(e->msg)) || !e->msg[0]) {
		fprintf(stderr, "error without a message\n");
		abort();
	}
}

static void fuzz_walk(const void *image, size_t len, const uint8_t *lo, const uint8_t *hi)
{
	struct fatbin_iter it;
	struct fatbin_entry ent;
	struct err e = {{0}};
	int rc = fatbin_iter_init(&it, image, len, &e);

	while (rc == 0 && (rc = fatbin_iter_next(&it, &ent, &e)) == 1) {
		uint8_t *out;
		size_t n;
		if (ent.payload < lo || ent.payload > hi || ent.payload_size > (size_t)(hi - ent.payload) ||
		    (ent.name && (ent.name < (const char *)lo || ent.name + ent.name_len > (const char *)hi))) {
			fprintf(stderr, "entry %u outside the input\n", ent.index);
			abort();
		}
		if (fatbin_entry_contents(&ent, &out, &n, &e) == 0) {
			if (out[n] != '\0')
				abort();
			free(out);
		} else {
			fuzz_check_msg(&e);
		}
		rc = 0;
	}
	if (rc < 0)
		fuzz_check_msg(&e);
	for (unsigned sm = 75; sm <= 90; sm += 15) {
		char *ptx;
		size_t ptx_len;
		if (fatbin_best_ptx(image, len, sm, &ptx, &ptx_len, NULL, &e) == 0) {
			if (strlen(ptx) != ptx_len || ptx_len == 0)
				abort();
			free(ptx);
		} else {
			fuzz_check_msg(&e);
		}
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	/* A copy, so that the bytes after the input are outside the allocation. */
	uint8_t *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	fuzz_walk(copy, size, copy, copy + size);

	/* Length unknown: only where the input is a fatbin header (a wrapper's
	 * pointer is trusted in that mode) whose claimed length fits the input
	 * (the agent believes the header; that belief is the one trusted step). */
	uint32_t magic;
	uint16_t hsize;
	uint64_t fat_size;
	if (size >= 16) {
		memcpy(&magic, copy, 4);
		memcpy(&hsize, copy + 6, 2);
		memcpy(&fat_size, copy + 8, 8);
		if (magic == FATBIN_MAGIC && fat_size <= size && hsize + fat_size <= size &&
		    hsize + fat_size >= 16) {
			struct {
				uint32_t magic, version;
				const void *data;
				void *more;
			} wrapper = {FATBIN_WRAPPER_MAGIC, 1, copy, NULL};
			fuzz_walk(copy, FATBIN_LEN_UNKNOWN, copy, copy + size);
			fuzz_walk(&wrapper, FATBIN_LEN_UNKNOWN, copy, copy + size);
		}
	}
	free(copy);
	return 0;
}
