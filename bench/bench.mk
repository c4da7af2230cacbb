# bench.mk - `make bench`: the CPU benchmarks (included by the Makefile).
#
#   make bench                              gpuext engines and native only
#   make bench UBPF_DIR=/work/ext/ubpf      plus uBPF's interpreter and JIT
#                                           (built by bench/build-ubpf.sh)
#
# The eBPF programs bench/progs/*.bpf.c are built with every other program
# (BPF_SRCS); the native column is the same source compiled by clang -O2.
# A gpuext column is built in when libgpuext has that backend and the helper
# table it is given (src/bpf/helpers.c).

BENCH_CLANG    ?= clang
BENCH_DIR      := build/bench
BENCH_BIN      := $(BENCH_DIR)/cpu_bench
BENCH_ARGS     ?=
BENCH_SRCS     := bench/cpu_bench.c $(wildcard bench/bench_*.c)
BENCH_NATIVE   := $(patsubst bench/native/%.c,$(BENCH_DIR)/native/%.o,$(wildcard bench/native/*.c))
BENCH_PROGS    := $(patsubst %.bpf.c,build/bpf/%.bpf.o,$(wildcard bench/progs/*.bpf.c))
BENCH_CFLAGS   := -DBENCH_GPUEXT_REV='"$(shell git describe --always --dirty 2>/dev/null || echo unknown)"' \
                  $(if $(and $(wildcard src/bpf/interp.c),$(wildcard src/bpf/helpers.c)),-DBENCH_HAVE_INTERP) \
                  $(if $(and $(wildcard src/bpf/jit.h),$(wildcard src/bpf/helpers.c)),-DBENCH_HAVE_JIT)
BENCH_LIBS     :=

ifneq ($(UBPF_DIR),)
# The revision for the report: a git checkout says it; an exported snapshot
# has no history, so name it with UBPF_REV=COMMIT.
UBPF_REV       ?= $(if $(wildcard $(UBPF_DIR)/.git),$(shell git -C $(UBPF_DIR) rev-parse --short HEAD),from $(UBPF_DIR))
BENCH_CFLAGS   += -DBENCH_HAVE_UBPF -DBENCH_UBPF_REV='"$(UBPF_REV)"' \
                  -I$(UBPF_DIR)/vm/inc -I$(UBPF_DIR)/build/vm
BENCH_LIBS     += $(UBPF_DIR)/build/lib/libubpf.a
endif

$(BENCH_DIR)/native/%.o: bench/native/%.c bench/native/native.h $(wildcard bench/kernels/*.h)
	@mkdir -p $(dir $@)
	$(BENCH_CLANG) -std=c17 -O2 -Wall -Wextra -Werror -c $< -o $@

# Rebuilt every time: whether UBPF_DIR is set is not visible in any file date.
$(BENCH_BIN): $(BENCH_SRCS) bench/bench.h $(BENCH_NATIVE) $(LIB) FORCE
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BENCH_CFLAGS) -Ibench $(LDFLAGS) -o $@ $(BENCH_SRCS) \
		$(BENCH_NATIVE) $(LIB) $(BENCH_LIBS) $(LDLIBS)

bench: $(BENCH_BIN) $(BENCH_PROGS)
	$(BENCH_BIN) $(BENCH_ARGS)

bench-check: $(BENCH_BIN) $(BENCH_PROGS)
	$(BENCH_BIN) --check

.PHONY: bench-check FORCE
FORCE:

# Verification time of the shipped and test programs and of loop-heavy
# programs near the complexity budget (issue 3, Must show 5).
VFY_BENCH := $(BENCH_DIR)/verifier_bench
$(VFY_BENCH): bench/verifier/verifier_bench.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)
verifier-bench: $(VFY_BENCH) bpf
	$(VFY_BENCH) build/bpf
.PHONY: verifier-bench

# The in-process API probe trampolines (issue 7): hooked vs unhooked call.
APIPROBE_BENCH := $(BENCH_DIR)/apiprobe_bench
$(APIPROBE_BENCH): bench/apiprobe_bench.c $(AGENT_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(AGENT_LIB) $(LIB) $(LDLIBS)
apiprobe-bench: $(APIPROBE_BENCH) build/bpf/bench/progs/apiprobe.bpf.o
	$(APIPROBE_BENCH)
.PHONY: apiprobe-bench
# Built by `make`: the GPU batch (tests/gpu/host.sh) runs it on the GPU machine.
all: $(APIPROBE_BENCH)

# The UVM simulator's speed on 1M-fault traces, one core (issue 8, Must show 3).
SIM_BENCH := $(BENCH_DIR)/sim_bench
$(SIM_BENCH): bench/sim_bench.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)
sim-bench: $(SIM_BENCH) bpf
	$(if $(shell command -v taskset),taskset -c 0) $(SIM_BENCH) build/bpf/policies
.PHONY: sim-bench
# Kernel uprobes vs in-process API probes on a real driver call (issue 7,
# Must show 3): needs libcuda.so.1 and root where it runs (tests/gpu/attach.sh).
UPROBE_BENCH := $(BENCH_DIR)/uprobe_bench
$(UPROBE_BENCH): bench/uprobe_bench.c $(AGENT_LIB) $(HOST_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(HOST_OBJS) $(AGENT_LIB) $(LIB) $(HOST_LIBS) $(LDLIBS)
all: $(UPROBE_BENCH)
