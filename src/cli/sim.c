/* SPDX-License-Identifier: MIT */
/*
 * sim.c - `gpuext sim`: the trace-driven UVM simulator.
 *
 *   gpuext sim --trace FILE --oversub 1.5 --policy none --policy policies/mru.bpf.o
 *   gpuext sim --gen seq --size 1G -o seq.trace
 *
 * With several --policy arguments every policy runs on the same trace and
 * budget and the results are printed side by side, with each one's time
 * relative to the first.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "policy/uvm_sim.h"

enum { SIM_MAX_POLICIES = 32 };

struct sim_args {
	const char *trace, *gen, *out;
	const char *policies[SIM_MAX_POLICIES];
	char names[SIM_MAX_POLICIES][96]; /* short: file names without .bpf.o, '+' */
	int npol;
	struct uvm_gen_opts g;
	uint64_t budget;
	double oversub;
	int text;
	int interp;
	struct uvm_sim_opts so;
};

static void sim_usage(FILE *out)
{
	fprintf(out,
		"Usage: gpuext sim (--trace FILE | --gen PATTERN [--size BYTES] [--seed N]\n"
		"                  [--passes N]) (--budget BYTES | --oversub X)\n"
		"                  [--policy none|optimal|FILE.bpf.o[,FILE.bpf.o]]... [options]\n"
		"       gpuext sim --gen PATTERN [--size BYTES] [--seed N] [--passes N]\n"
		"                  -o FILE [--text]\n"
		"Simulate unified memory under a GPU memory budget: fault batches of up to\n"
		"256 faults, 2 MiB blocks evicted from the head of the eviction list, the\n"
		"driver's density-tree prefetch (51%%), a link model; print faults, bytes\n"
		"migrated each way, evictions and estimated time per policy.  A policy is a\n"
		"struct gpu_mem_ops object (policies/*.bpf.o); several objects joined by ','\n"
		"make one policy (an eviction and a prefetch policy); 'none' is the driver's\n"
		"behaviour; 'optimal' evicts the block used furthest in the future (Belady's\n"
		"MIN, read from the trace): the fewest bytes any eviction order moves, a\n"
		"reference row.  Each --policy adds a row; times are compared with the first.\n"
		"\n"
		"Trace:\n"
		"  --trace FILE       binary or text trace (docs/formats.md)\n"
		"  --gen PATTERN      synthetic workload instead:\n");
	for (size_t i = 0; uvm_gen_patterns[i][0]; i++)
		fprintf(out, "                       %-7s %s\n", uvm_gen_patterns[i][0],
			uvm_gen_patterns[i][1]);
	fprintf(out,
		"  --size BYTES       footprint of --gen (K, M, G suffixes; default 1G)\n"
		"  --seed N           generator seed (default 1)\n"
		"  --passes N         passes over the footprint (default 4)\n"
		"  -o FILE            write the generated trace and stop (--text: text form)\n"
		"Budget:\n"
		"  --budget BYTES     GPU memory for managed data (K, M, G suffixes)\n"
		"  --oversub X        budget = footprint / X (footprint: 2 MiB blocks touched)\n"
		"Model (defaults in docs/policies.md):\n"
		"  --batch N          faults per batch (default %d)\n"
		"  --htod-gbps X      host-to-device bandwidth, GB/s (default %.0f)\n"
		"  --dtoh-gbps X      device-to-host bandwidth, GB/s (default %.0f)\n"
		"  --batch-us X       driver time per fault batch, us (default %.0f)\n"
		"  --fault-ns X       driver time per faulting page, ns (default %.0f)\n"
		"  --fault-granule BYTES  what a fault moves at least: its aligned big page\n"
		"                     (4K..2M, a power of two; default 64K, the driver's)\n"
		"  --hits             a launch's hits on a resident block reach the policy's\n"
		"                     gpu_block_access and the budget holds at launch\n"
		"                     boundaries (traces of every access: the agent's\n"
		"                     device signal, run --mem-trace); default: faults only\n"
		"  --interp           run policies in the interpreter, not the JIT\n"
		"  --json             JSON output (also the global -j)\n",
		UVM_BATCH_MAX, UVM_LINK_DEFAULT.htod_gbps, UVM_LINK_DEFAULT.dtoh_gbps,
		UVM_LINK_DEFAULT.batch_us, UVM_LINK_DEFAULT.fault_ns);
}

static int sim_parse_num(const char *opt, const char *s, double lo, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo) || !isfinite(v)) {
		cli_error("sim: %s: '%s' is not a number >= %g", opt, s, lo);
		return 2;
	}
	*out = v;
	return 0;
}

/* An integer in [lo, hi]. */
static int sim_parse_uint(const char *opt, const char *s, uint64_t lo, uint64_t hi,
			  uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi) {
		cli_error("sim: %s: '%s' is not an integer in %llu..%llu", opt, s,
			  (unsigned long long)lo, (unsigned long long)hi);
		return 2;
	}
	*out = v;
	return 0;
}

enum {
	SIM_OPT_TRACE = CLI_OPT_LONG, SIM_OPT_GEN, SIM_OPT_POLICY, SIM_OPT_SIZE, SIM_OPT_BUDGET,
	SIM_OPT_OVERSUB, SIM_OPT_HTOD, SIM_OPT_DTOH, SIM_OPT_BATCH_US, SIM_OPT_FAULT_NS,
	SIM_OPT_SEED, SIM_OPT_PASSES, SIM_OPT_BATCH, SIM_OPT_TEXT, SIM_OPT_INTERP, SIM_OPT_JSON,
	SIM_OPT_HITS, SIM_OPT_GRANULE,
};

static const struct option sim_longs[] = {
	{"trace", required_argument, NULL, SIM_OPT_TRACE},
	{"gen", required_argument, NULL, SIM_OPT_GEN},
	{"policy", required_argument, NULL, SIM_OPT_POLICY},
	{"size", required_argument, NULL, SIM_OPT_SIZE},
	{"budget", required_argument, NULL, SIM_OPT_BUDGET},
	{"oversub", required_argument, NULL, SIM_OPT_OVERSUB},
	{"htod-gbps", required_argument, NULL, SIM_OPT_HTOD},
	{"dtoh-gbps", required_argument, NULL, SIM_OPT_DTOH},
	{"batch-us", required_argument, NULL, SIM_OPT_BATCH_US},
	{"fault-ns", required_argument, NULL, SIM_OPT_FAULT_NS},
	{"seed", required_argument, NULL, SIM_OPT_SEED},
	{"passes", required_argument, NULL, SIM_OPT_PASSES},
	{"batch", required_argument, NULL, SIM_OPT_BATCH},
	{"text", no_argument, NULL, SIM_OPT_TEXT},
	{"interp", no_argument, NULL, SIM_OPT_INTERP},
	{"json", no_argument, NULL, SIM_OPT_JSON},
	{"hits", no_argument, NULL, SIM_OPT_HITS},
	{"fault-granule", required_argument, NULL, SIM_OPT_GRANULE},
	{0},
};

/* One option (c, its value v, named opt in messages); 0, or the exit status. */
static int sim_option(struct sim_args *a, int c, const char *opt, const char *v)
{
	uint64_t n = 0;
	int rc = 0;

	switch (c) {
	case SIM_OPT_TRACE: a->trace = v; break;
	case SIM_OPT_GEN: a->gen = v; break;
	case 'o': a->out = v; break;
	case SIM_OPT_TEXT: a->text = 1; break;
	case SIM_OPT_INTERP: a->interp = 1; break;
	case SIM_OPT_JSON: cli_json = 1; break;
	case SIM_OPT_HITS: a->so.hits = 1; break;
	case SIM_OPT_POLICY:
		if (a->npol == SIM_MAX_POLICIES) {
			cli_error("sim: more than %d --policy arguments", SIM_MAX_POLICIES);
			return 2;
		}
		a->policies[a->npol++] = v;
		break;
	case SIM_OPT_SIZE: return cli_parse_bytes("sim", opt, v, &a->g.size);
	case SIM_OPT_BUDGET: return cli_parse_bytes("sim", opt, v, &a->budget);
	case SIM_OPT_OVERSUB: return sim_parse_num(opt, v, 0.01, &a->oversub);
	case SIM_OPT_HTOD: return sim_parse_num(opt, v, 0.001, &a->so.link.htod_gbps);
	case SIM_OPT_DTOH: return sim_parse_num(opt, v, 0.001, &a->so.link.dtoh_gbps);
	case SIM_OPT_BATCH_US: return sim_parse_num(opt, v, 0, &a->so.link.batch_us);
	case SIM_OPT_FAULT_NS: return sim_parse_num(opt, v, 0, &a->so.link.fault_ns);
	case SIM_OPT_GRANULE:
		if ((rc = cli_parse_bytes("sim", opt, v, &n)))
			return rc;
		if (n < 1u << MEM_PAGE_SHIFT || n > 1u << MEM_BLOCK_SHIFT || n & (n - 1)) {
			cli_error("sim: %s: '%s' is not a power of two in 4K..2M", opt, v);
			return 2;
		}
		a->so.fault_pages = (uint32_t)(n >> MEM_PAGE_SHIFT);
		break;
	case SIM_OPT_SEED: return sim_parse_uint(opt, v, 0, UINT64_MAX, &a->g.seed);
	case SIM_OPT_PASSES:
	case SIM_OPT_BATCH:
		rc = sim_parse_uint(opt, v, 1, 1000000, &n);
		if (!rc)
			*(c == SIM_OPT_PASSES ? &a->g.passes : &a->so.batch_max) = (uint32_t)n;
		break;
	}
	return rc;
}

/* The options into a; 0, -1 after --help, or the exit status. */
static int sim_parse(int argc, char **argv, struct sim_args *a)
{
	struct cli_opts o = {.cmd = "sim", .shorts = "o:", .longs = sim_longs};
	int c, rc;

	while ((c = cli_opts_next(&o, argc, argv)) != CLI_OPT_END) {
		if (c == CLI_OPT_HELP) {
			sim_usage(stdout);
			return -1;
		}
		if (c == CLI_OPT_ARG) {
			cli_error("sim: unexpected argument '%s' (see gpuext sim --help)", o.arg);
			return 2;
		}
		if (c == CLI_OPT_USAGE)
			return 2;
		if ((rc = sim_option(a, c, o.name, o.arg)))
			return rc;
	}
	if (!!a->trace == !!a->gen) {
		cli_error("sim: give one of --trace FILE or --gen PATTERN (see gpuext sim --help)");
		return 2;
	}
	if (!a->out && !!a->budget == (a->oversub > 0)) {
		cli_error("sim: give one of --budget BYTES or --oversub X");
		return 2;
	}
	if (a->out && (a->trace || a->npol || a->budget || a->oversub > 0)) {
		cli_error("sim: -o writes a generated trace; it takes no --trace, --policy or budget");
		return 2;
	}
	if (!a->npol)
		a->policies[a->npol++] = "none";
	return 0;
}

static const char *sim_backend_name(const struct uvm_sim_result *r)
{
	int any = 0;
	for (int op = 0; op < MEM_OP_CNT; op++) {
		if (r->backend[op] == PROG_BACKEND_INTERP)
			return "interp";
		any |= r->backend[op] >= 0;
	}
	return any ? "jit" : "-";
}

static void sim_print_json(const struct sim_args *a, const char *name, uint64_t footprint,
			   uint64_t budget, size_t records, const struct uvm_sim_result *r,
			   int npol)
{
	printf("{\"trace\":");
	cli_json_str(stdout, name);
	printf(",\"records\":%zu,\"footprint\":%llu,\"budget\":%llu,\"oversub\":%.3f,"
	       "\"batch_max\":%u,\"htod_gbps\":%g,\"dtoh_gbps\":%g,\"batch_us\":%g,"
	       "\"fault_ns\":%g,\"fault_granule\":%u,\"results\":[",
	       records, (unsigned long long)footprint, (unsigned long long)budget,
	       (double)footprint / (double)budget, a->so.batch_max, a->so.link.htod_gbps,
	       a->so.link.dtoh_gbps, a->so.link.batch_us, a->so.link.fault_ns,
	       a->so.fault_pages << MEM_PAGE_SHIFT);
	for (int i = 0; i < npol; i++) {
		const struct uvm_sim_result *x = &r[i];
		printf("%s{\"policy\":", i ? "," : "");
		cli_json_str(stdout, a->policies[i]);
		printf(",\"name\":");
		cli_json_str(stdout, a->names[i]);
		printf(",\"backend\":\"%s\",\"accesses\":%llu,\"hits\":%llu,\"faults\":%llu,"
		       "\"dup_faults\":%llu,\"batches\":%llu,\"pages_prefetched\":%llu,"
		       "\"bytes_htod\":%llu,\"bytes_dtoh\":%llu,\"evictions\":%llu,"
		       "\"policy_calls\":%llu,\"hit_calls\":%llu,\"policy_errors\":%llu,"
		       "\"clamped\":%llu,\"compute_s\":%.6f,\"overhead_s\":%.6f,\"transfer_s\":%.6f,"
		       "\"time_s\":%.6f,\"speedup\":%.4f}",
		       sim_backend_name(x), (unsigned long long)x->accesses,
		       (unsigned long long)x->hits, (unsigned long long)x->st.faults,
		       (unsigned long long)x->dup_faults, (unsigned long long)x->st.batches,
		       (unsigned long long)x->st.pages_prefetched,
		       (unsigned long long)x->bytes_htod, (unsigned long long)x->bytes_dtoh,
		       (unsigned long long)x->st.evictions, (unsigned long long)x->st.policy_calls,
		       (unsigned long long)x->st.hit_calls, (unsigned long long)x->st.policy_errors, (unsigned long long)x->st.clamped,
		       x->compute_s, x->overhead_s, x->transfer_s, x->total_s,
		       r[0].total_s / x->total_s);
	}
	printf("]}\n");
}

static void sim_print_text(const struct sim_args *a, const char *name, uint64_t footprint,
			   uint64_t budget, size_t records, const struct uvm_sim_result *r,
			   int npol)
{
	printf("trace %s: %zu accesses, footprint %.1f MiB; budget %.1f MiB (%llu blocks), "
	       "oversubscription %.2fx\n",
	       name, records, (double)footprint / 1048576.0, (double)budget / 1048576.0,
	       (unsigned long long)(budget >> MEM_BLOCK_SHIFT), (double)footprint / (double)budget);
	printf("model: batch %u faults, HtoD %g GB/s, DtoH %g GB/s, %g us/batch, %g ns/fault, "
	       "%u KiB a fault\n\n",
	       a->so.batch_max, a->so.link.htod_gbps, a->so.link.dtoh_gbps, a->so.link.batch_us,
	       a->so.link.fault_ns, a->so.fault_pages << (MEM_PAGE_SHIFT - 10));
	printf("%-28s %10s %8s %11s %11s %9s %10s %10s %8s %7s\n", "policy", "faults", "batches",
	       "HtoD MiB", "DtoH MiB", "evictions", "prefetched", "time ms", "vs first",
	       "clamped");
	for (int i = 0; i < npol; i++) {
		const struct uvm_sim_result *x = &r[i];
		printf("%-28s %10llu %8llu %11.1f %11.1f %9llu %10llu %10.2f %7.2fx %7llu\n",
		       a->names[i], (unsigned long long)x->st.faults,
		       (unsigned long long)x->st.batches, (double)x->bytes_htod / 1048576.0,
		       (double)x->bytes_dtoh / 1048576.0, (unsigned long long)x->st.evictions,
		       (unsigned long long)x->st.pages_prefetched, x->total_s * 1e3,
		       r[0].total_s / x->total_s, (unsigned long long)x->st.clamped);
	}
}

static int sim_run_all(struct sim_args *a, const struct uvm_trace *t, const char *name)
{
	struct uvm_sim_result r[SIM_MAX_POLICIES];
	uint64_t footprint = uvm_trace_footprint(t);
	uint64_t budget = a->budget;
	struct err e = {""};

	if (!t->cnt) {
		cli_error("sim: %s: the trace has no records", name);
		return 1;
	}
	if (a->oversub > 0)
		budget = (uint64_t)((double)footprint / a->oversub);
	a->so.budget = budget;
	for (int i = 0; i < a->npol; i++) {
		struct mem_policy *pol = NULL;
		a->so.optimal = !strcmp(a->policies[i], "optimal");
		if (strcmp(a->policies[i], "none") && !a->so.optimal &&
		    mem_policy_open(a->policies[i], &pol, &e)) {
			cli_error("sim: policy %s", e.msg);
			return 1;
		}
		if (pol && a->interp)
			mem_policy_use_interp(pol);
		snprintf(a->names[i], sizeof(a->names[i]), "%s",
			 a->so.optimal ? "optimal (Belady)" : mem_policy_name(pol));
		int err = uvm_sim_run(t, &a->so, pol, &r[i], &e);
		mem_policy_free(pol);
		if (err) {
			cli_error("sim: %s: %s", name, e.msg);
			return 1;
		}
	}
	if (cli_json)
		sim_print_json(a, name, footprint, budget, t->cnt, r, a->npol);
	else
		sim_print_text(a, name, footprint, budget, t->cnt, r, a->npol);
	return 0;
}

int do_sim(int argc, char **argv)
{
	struct sim_args a = {.g = {.size = 1ull << 30, .seed = 1, .passes = 4,
				   .ns_per_access = 2},
			     .so = {.batch_max = UVM_BATCH_MAX, .fault_pages = MEM_GROUP_PAGES,
				    .link = UVM_LINK_DEFAULT}};
	struct uvm_trace t;
	struct err e = {""};
	char name[128];
	int rc = sim_parse(argc, argv, &a);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (a.gen) {
		a.g.pattern = a.gen;
		if (uvm_gen(&a.g, &t, &e)) {
			cli_error("sim: %s", e.msg);
			return 2;
		}
		snprintf(name, sizeof(name), "gen:%s size %llu seed %llu passes %u", a.gen,
			 (unsigned long long)a.g.size, (unsigned long long)a.g.seed, a.g.passes);
	} else {
		if (uvm_trace_read(a.trace, &t, &e)) {
			cli_error("sim: %s", e.msg);
			return 1;
		}
		snprintf(name, sizeof(name), "%s", a.trace);
	}
	if (a.out) {
		rc = uvm_trace_write(a.out, &t, a.text, &e) ? 1 : 0;
		if (rc)
			cli_error("sim: %s", e.msg);
		else if (strcmp(a.out, "-"))
			fprintf(stderr, "gpuext sim: wrote %zu records to %s\n", t.cnt, a.out);
	} else {
		rc = sim_run_all(&a, &t, name);
	}
	uvm_trace_free(&t);
	return rc;
}
