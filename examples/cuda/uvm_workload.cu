/* SPDX-License-Identifier: MIT */
/*
 * uvm_workload - managed memory under the access patterns that tell memory
 * policies apart (issue 8; the same shapes as `gpuext sim --gen`):
 *   seq     every 4 KiB page in order, each pass, in 16 launches of a
 *           sixteenth (a scan by a sequence of kernels)
 *   random  a quarter of the pages, uniformly at random, per launch
 *   moe     periodic sequential: a shared tenth, then 4 of 32 experts
 *           (skewed popularity) per launch
 *   decode  sparse random: 8 random pages of every 2 MiB block of the hot
 *           fifth and of 1 block in 8 of the rest, per launch
 *   dnn     block-periodic: 24 layers forward then backward per pass
 * cudaMallocManaged of -n MiB, initialised on the host; each launch adds
 * (launch + 1) to every word of the pages it touches (one CUDA block per
 * page, pages unique within a launch, so no races).  The host keeps, per
 * page, what was added, and at the end checks every word and prints the
 * checksum of the whole buffer: identical under every memory policy, since
 * policies only move pages.  Prints "time_ms:" for the launches (after a
 * warm-up launch that changes nothing).
 *
 *   uvm_workload -pattern moe -n 3072 -iters 4
 */
#include <chrono>

#include "example_rt.cuh"

enum { PAGE_WORDS = 1024, BLOCK_PAGES = 512, LAYERS = 24, EXPERTS = 32, SEQ_CHUNKS = 16 };

__global__ void touch_pages(uint32_t *p, const uint32_t *pages, uint32_t add)
{
	uint32_t *page = p + (size_t)pages[blockIdx.x] * PAGE_WORDS;
	for (unsigned w = threadIdx.x; w < PAGE_WORDS; w += blockDim.x)
		page[w] += add;
}

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint32_t rng(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33);
}

struct plan {
	uint32_t *list; /* pages of one launch */
	size_t cnt;
	uint8_t *seen;  /* per page: already in this launch */
};

static void add_page(struct plan *pl, uint32_t page)
{
	if (!pl->seen[page]) {
		pl->seen[page] = 1;
		pl->list[pl->cnt++] = page;
	}
}

static void add_range(struct plan *pl, size_t first, size_t end)
{
	for (size_t q = first; q < end; q++)
		add_page(pl, (uint32_t)q);
}

/* The pages of launch `launch` of pattern pat over `pages` pages. */
static void make_plan(struct plan *pl, const char *pat, long launch, size_t pages)
{
	for (size_t i = 0; i < pl->cnt; i++)
		pl->seen[pl->list[i]] = 0;
	pl->cnt = 0;
	if (!strcmp(pat, "seq")) {
		long c = launch % SEQ_CHUNKS;
		add_range(pl, pages * c / SEQ_CHUNKS, pages * (c + 1) / SEQ_CHUNKS);
	} else if (!strcmp(pat, "random")) {
		for (size_t i = 0; i < pages / 4; i++)
			add_page(pl, rng() % pages);
	} else if (!strcmp(pat, "moe")) {
		size_t shared = pages / 10, per = (pages - shared) / EXPERTS;
		add_range(pl, 0, shared);
		for (int k = 0; k < 4; k++) {
			/* skewed: low-numbered experts are popular */
			uint32_t e = (rng() % EXPERTS) * (rng() % EXPERTS) / EXPERTS;
			add_range(pl, shared + e * per, shared + (e + 1) * per);
		}
	} else if (!strcmp(pat, "decode")) {
		size_t blocks = (pages + BLOCK_PAGES - 1) / BLOCK_PAGES, hot = blocks / 5;
		for (size_t b = 0; b < blocks; b++) {
			if (b >= hot && rng() % 8)
				continue;
			size_t n = pages - b * BLOCK_PAGES < BLOCK_PAGES ? pages - b * BLOCK_PAGES
									 : BLOCK_PAGES;
			for (int k = 0; k < 8; k++)
				add_page(pl, (uint32_t)(b * BLOCK_PAGES + rng() % n));
		}
	} else { /* dnn: launch l of a pass is layer l forward, then backward */
		long l = launch % (2 * LAYERS);
		long layer = l < LAYERS ? l : 2 * LAYERS - 1 - l;
		add_range(pl, pages * layer / LAYERS, pages * (layer + 1) / LAYERS);
	}
}

static uint32_t init_word(size_t i)
{
	return (uint32_t)(i * 2654435761u);
}

int main(int argc, char **argv)
{
	const char *pat = "seq";
	char *rest[16];
	int nrest = 0;

	for (int i = 0; i < argc && nrest < 15; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "-pattern"))
			pat = argv[++i];
		else
			rest[nrest++] = argv[i];
	}
	rest[nrest] = NULL;
	if (strcmp(pat, "seq") && strcmp(pat, "random") && strcmp(pat, "moe") &&
	    strcmp(pat, "decode") && strcmp(pat, "dnn")) {
		fprintf(stderr, "uvm_workload: -pattern seq|random|moe|decode|dnn (got '%s')\n", pat);
		return 2;
	}
	struct example_opts o = example_parse(nrest, rest, 256, 1 << 20, "MiB of managed memory");
	size_t bytes = (size_t)o.n << 20, pages = bytes / (PAGE_WORDS * 4);
	long launches = o.iters * (!strcmp(pat, "dnn")   ? 2 * LAYERS
				   : !strcmp(pat, "seq") ? SEQ_CHUNKS
							 : 1);
	uint32_t *p, *d_list;
	struct plan pl = {(uint32_t *)malloc(pages * 4), 0, (uint8_t *)calloc(pages, 1)};
	uint32_t *added = (uint32_t *)calloc(pages, 4);

	if (!pl.list || !pl.seen || !added)
		return perror("malloc"), 1;
	CHECK(cudaMallocManaged(&p, bytes));
	CHECK(cudaMalloc(&d_list, pages * 4));
	for (size_t i = 0; i < bytes / 4; i++)
		p[i] = init_word(i);
	/* one launch that adds 0 to page 0 before the clock starts: the
	 * kernel's first-launch costs (module load, an agent's instrumentation)
	 * stay out of time_ms */
	CHECK(cudaMemset(d_list, 0, 4));
	touch_pages<<<1, 256>>>(p, d_list, 0);
	CHECK(cudaDeviceSynchronize());
	auto t0 = std::chrono::steady_clock::now();
	for (long l = 0; l < launches; l++) {
		make_plan(&pl, pat, l, pages);
		CHECK(cudaMemcpy(d_list, pl.list, pl.cnt * 4, cudaMemcpyHostToDevice));
		touch_pages<<<(unsigned)pl.cnt, 256>>>(p, d_list, (uint32_t)(l + 1));
		CHECK(cudaGetLastError());
		for (size_t i = 0; i < pl.cnt; i++)
			added[pl.list[i]] += (uint32_t)(l + 1);
	}
	CHECK(cudaDeviceSynchronize());
	double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
			    .count();
	printf("uvm_workload: pattern=%s bytes=%zu launches=%ld\n", pat, bytes, launches);
	printf("time_ms: %.1f\n", ms);
	size_t bad = 0;
	for (size_t i = 0; i < bytes / 4; i++)
		bad += p[i] != init_word(i) + added[i / PAGE_WORDS];
	uint64_t sum = example_checksum(p, bytes);
	printf("checksum: 0x%016llx\n", (unsigned long long)sum);
	if (bad)
		fprintf(stderr, "uvm_workload: MISMATCH: %zu words differ from the CPU reference\n", bad);
	else
		printf("result: ok (matches the CPU reference)\n");
	CHECK(cudaFree(d_list));
	CHECK(cudaFree(p));
	free(pl.list);
	free(pl.seen);
	free(added);
	return bad ? 1 : 0;
}
