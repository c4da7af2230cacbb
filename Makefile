# gpuext build.  `make` builds the library, the CLI and every shipped eBPF
# program; `make test` runs the whole suite twice: plainly and under
# ASan+UBSan.  Sources are found by folder (one folder per layer, see
# docs/ARCHITECTURE.md), so adding a file needs no edit here.

CC        ?= cc
CLANG_BPF ?= clang
PREFIX    ?= /usr/local
CUDA_HOME ?= /usr/local/cuda
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
VERSION   := 0.1.0

SAN ?= 0
ifeq ($(SAN),1)
BUILD     ?= build/san
SANFLAGS  := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPT       := -O1 -g
else
BUILD     ?= build
SANFLAGS  :=
OPT       := -O2 -g
endif

WARN      := -Wall -Wextra -Werror -Wno-unused-parameter
CFLAGS    += -std=c17 -D_GNU_SOURCE $(OPT) $(WARN) $(SANFLAGS) -fPIC \
             -fvisibility=hidden -Iinclude -Isrc -I$(CUDA_HOME)/include
LDFLAGS   += $(SANFLAGS)
LDLIBS    += -lzstd -llz4 -lpthread -ldl -lm

# Layers that make up libgpuext (the agent and the CLI sit on top of it).
LIB_DIRS  := src/bpf src/ptx src/cuda src/policy
LIB_SRCS  := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_SRCS  := $(wildcard src/cli/*.c) $(wildcard src/host/*.c)
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/%.o)
# The kernel-uprobe backend (src/host/): in the CLI, its test and
# bench/uprobe_bench only, with libbpf; never in the library or the agent.
HOST_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard src/host/*.c))
HOST_LIBS := $(if $(HOST_OBJS),-lbpf -lelf -lz)
AGENT_SRCS:= $(wildcard src/agent/*.c src/agent/*.S)
AGENT_OBJS:= $(patsubst %.S,$(BUILD)/%.o,$(AGENT_SRCS:%.c=$(BUILD)/%.o))
# The agent's objects as an archive too: unit tests and benchmarks link
# the parts they test (the API probe trampolines) without the preload.
AGENT_LIB := $(BUILD)/libgpuext-agent.a

TEST_SRCS := $(wildcard tests/unit/test_*.c)
TEST_BINS := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
TEST_LIB_SRCS := $(filter-out tests/unit/test_%.c,$(wildcard tests/unit/*.c))
TEST_LIB_OBJS := $(TEST_LIB_SRCS:%.c=$(BUILD)/%.o)
# Libraries one test binary needs besides the others' (test-only dependencies).
TEST_LIBS_test_hosttools := -ljson-c

# eBPF programs: shipped tools and policies, examples, test programs.
BPF_SRCS  := $(wildcard tools/*.bpf.c policies/*.bpf.c examples/*.bpf.c tests/progs/*.bpf.c \
                         tests/verifier/progs/*.bpf.c tests/policies/*.bpf.c \
                         bench/progs/*.bpf.c)
BPF_OBJS  := $(BPF_SRCS:%.bpf.c=build/bpf/%.bpf.o)
BPF_CFLAGS := -O2 -g -target bpf -Wall -Werror -Iinclude -I/usr/include/$(MULTIARCH)

# The loader is tested on the output of two compilers: the test programs are
# also built with clang-19 where it is installed (Debian 12: apt install clang-19).
CLANG19   := $(shell command -v clang-19 2>/dev/null)
BPF19_OBJS := $(if $(CLANG19),$(patsubst %.bpf.c,build/bpf-clang19/%.bpf.o,$(wildcard tests/progs/*.bpf.c)))

LIB       := $(BUILD)/libgpuext.a
SOLIB     := $(BUILD)/libgpuext.so
CLI       := $(BUILD)/gpuext
AGENT     := $(BUILD)/libgpuext-agent.so

# The GPU batch (tests/gpu/run.sh): programs built here, run on a GPU machine.
GPU_COMMON:= tests/gpu/gpu_common.c tests/unit/ptx_conf.c tests/unit/testutil.c tests/unit/ptx_corpus.c
GPU_SRCS  := $(filter-out $(GPU_COMMON),$(wildcard tests/gpu/*.c)) $(wildcard bench/gpu_*.c)
GPU_BINS  := $(addprefix $(BUILD)/gpu/,$(basename $(notdir $(GPU_SRCS))))

.PHONY: all test test-plain test-san bpf clean install fuzz fuzz-bins bench
all: $(LIB) $(SOLIB) $(CLI) bpf $(if $(AGENT_SRCS),$(AGENT)) $(GPU_BINS) cuda-examples

bpf: $(BPF_OBJS) $(BPF19_OBJS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -c $< -o $@

build/bpf/%.bpf.o: %.bpf.c
	@mkdir -p $(dir $@)
	$(CLANG_BPF) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

# The device runtime: CUDA C compiled to PTX at build time (never at run
# time), its module header dropped and its functions made module-local so
# that it can be pasted into any module; ptx_rt_text.c embeds it.
NVCC      ?= $(CUDA_HOME)/bin/nvcc
build/gen/ptx_rt_dev.ptx: src/ptx/ptx_rt_dev.cu src/ptx/ptx_devmap.h
	@mkdir -p $(dir $@)
	$(NVCC) -ptx -arch=compute_75 -keep-device-functions -O3 -Isrc/ptx $< -o $@.tmp
	sed -e '/^\.version/d' -e '/^\.target/d' -e '/^\.address_size/d' \
	    -e 's/^\.visible \.func/.func/' -e '/used_bytes_mask/d' $@.tmp > $@ && rm -f $@.tmp
# The same compiled for the GPUs of CUDA 13 (-rdc: its functions are linked
# into an instrumented module by the driver's JIT linker, so the first
# launch does not JIT-compile them).  At most 32 registers: compiled apart
# from the kernel, a function's registers add to the kernel's under the call
# ABI (vecadd with map lookups: 68 registers uncapped, 30 capped; a kernel
# of 12 keeps full occupancy).
RT_ARCHS  := 75 80 86 89 90 100 120
build/gen/ptx_rt_dev.fatbin: src/ptx/ptx_rt_dev.cu src/ptx/ptx_devmap.h
	@mkdir -p $(dir $@)
	$(NVCC) -fatbin -rdc=true -O3 -maxrregcount=32 -Isrc/ptx \
	    $(foreach a,$(RT_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) -x cu $< -o $@
$(BUILD)/src/ptx/ptx_rt_text.o build/fuzz/src/ptx/ptx_rt_text.o: build/gen/ptx_rt_dev.ptx build/gen/ptx_rt_dev.fatbin

# CUDA examples (examples/cuda, see examples/cuda/README.md): nvcc's default
# build (sm_75 SASS plus ZSTD-compressed compute_75 PTX), variants that take
# the other loading paths or fatbin layouts, and reference PTX (nvcc -ptx)
# that the fatbin tests compare decoded entries with.  Not in build/san:
# they are test data and GPU programs, not part of the library.  Skipped
# with a message when nvcc is absent.
NVCC_FOUND := $(shell command -v $(NVCC) 2>/dev/null)
EX_DIR    := build/examples
EX_HDRS   := $(wildcard examples/cuda/*.h examples/cuda/*.cuh)
EX_NVCC   := $(NVCC) -O2 -Iexamples/cuda
EX_BINS   := $(patsubst examples/cuda/%.cu,$(EX_DIR)/%,$(wildcard examples/cuda/*.cu)) \
             $(addprefix $(EX_DIR)/,vecadd_shared vecadd_compress_all vecadd_nocompress \
                 vecadd_lz4 vecadd_multi vecadd_rdc vecadd_debug drv_vecadd link_vecadd \
                 drv_launches)
EX_REFS   := $(patsubst examples/cuda/%.cu,$(EX_DIR)/ref/%.compute_75.ptx,$(wildcard examples/cuda/*.cu)) \
             $(EX_DIR)/ref/vecadd.compute_80.ptx $(EX_DIR)/ref/vecadd.compute_90.ptx
EX_MULTI  := -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=[sm_80,compute_80] \
             -gencode arch=compute_90,code=[sm_90,compute_90]

# The benchmarks' examples as applications ship them: sm_90 SASS (and
# compute_90 PTX), which an H100/H200 runs without a JIT compile
# (bench/first_launch.sh: NAME@sm90).
EX90_DIR  := build/examples-sm90
EX90_BINS := $(addprefix $(EX90_DIR)/,vecadd gemm reduce imbalance)

.PHONY: cuda-examples
cuda-examples: $(if $(NVCC_FOUND),$(EX_BINS) $(EX90_BINS) $(EX_REFS) build/gpu/uvm_truth)
	$(if $(NVCC_FOUND),,@echo "cuda-examples: skipped (no nvcc at $(NVCC))")

# Unified memory measured three ways, no agent (a GPU diagnostic run by
# tests/gpu/uvm_truth.sh): CUPTI, the UVM tools queue, the driver's counters.
build/gpu/uvm_truth: tests/gpu/uvm_truth.cu build/libgpuext.a
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -Iinclude -Isrc $< build/libgpuext.a -o $@ -L$(CUDA_HOME)/lib64 \
	    -L$(CUDA_HOME)/lib64/stubs -lcupti -lcuda -lpthread
$(EX_DIR)/%: examples/cuda/%.cu $(EX_HDRS)
	@mkdir -p $(dir $@)
	$(EX_NVCC) $< -o $@
$(EX90_DIR)/%: examples/cuda/%.cu $(EX_HDRS)
	@mkdir -p $(dir $@)
	$(EX_NVCC) -arch=sm_90 $< -o $@
$(EX_DIR)/vecadd_shared: examples/cuda/vecadd.cu $(EX_HDRS)
	$(EX_NVCC) -cudart shared $< -o $@
$(EX_DIR)/vecadd_compress_all: examples/cuda/vecadd.cu $(EX_HDRS)
	$(EX_NVCC) -Xfatbin -compress-all $< -o $@
$(EX_DIR)/vecadd_nocompress: examples/cuda/vecadd.cu $(EX_HDRS)
	$(EX_NVCC) --no-compress $< -o $@
$(EX_DIR)/vecadd_lz4: examples/cuda/vecadd.cu $(EX_HDRS)
	$(EX_NVCC) -compress-mode=speed $< -o $@
$(EX_DIR)/vecadd_multi: examples/cuda/vecadd.cu $(EX_HDRS)
	$(EX_NVCC) $(EX_MULTI) $< -o $@
$(EX_DIR)/vecadd_rdc: examples/cuda/vecadd.cu $(EX_HDRS)
	$(EX_NVCC) -rdc=true $< -o $@
$(EX_DIR)/vecadd_debug: examples/cuda/vecadd.cu $(EX_HDRS)
	$(EX_NVCC) -G $< -o $@
$(EX_DIR)/ref/%.compute_75.ptx: examples/cuda/%.cu $(EX_HDRS)
	@mkdir -p $(dir $@)
	$(EX_NVCC) -ptx -arch=compute_75 $< -o $@
$(EX_DIR)/ref/vecadd.%.ptx: examples/cuda/vecadd.cu $(EX_HDRS)
	@mkdir -p $(dir $@)
	$(EX_NVCC) -ptx -arch=$* $< -o $@
# The driver-API examples: plain C against cuda.h and the toolkit's libcuda
# stub; the PTX they load is vecadd_kernel.cuh compiled here and embedded.
$(EX_DIR)/gen/vecadd_ptx.h: examples/cuda/vecadd_kernel.cuh
	@mkdir -p $(dir $@)
	$(NVCC) -ptx -O2 -arch=compute_75 -x cu $< -o $(EX_DIR)/gen/vecadd_kernel.ptx
	$(CUDA_HOME)/bin/bin2c -c -p 0 -n vecadd_ptx $(EX_DIR)/gen/vecadd_kernel.ptx > $@
EX_DRV    = $(CC) -std=c17 -O2 -Wall -Wextra -Werror -Iexamples/cuda -I$(EX_DIR)/gen \
            -I$(CUDA_HOME)/include -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda
$(EX_DIR)/drv_vecadd: examples/cuda/drv_vecadd.c $(EX_DIR)/gen/vecadd_ptx.h $(EX_HDRS)
	$(EX_DRV)
$(EX_DIR)/link_vecadd: examples/cuda/drv_vecadd.c $(EX_DIR)/gen/vecadd_ptx.h $(EX_HDRS)
	$(EX_DRV) -DEXAMPLE_USE_LINKER
$(EX_DIR)/drv_launches: examples/cuda/drv_launches.c $(EX_DIR)/gen/vecadd_ptx.h $(EX_HDRS)
	$(EX_DRV)

build/bpf-clang19/%.bpf.o: %.bpf.c
	@mkdir -p $(dir $@)
	$(CLANG19) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(SOLIB): $(LIB_OBJS)
	$(CC) -shared $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(CLI): $(CLI_OBJS) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(LDLIBS) $(HOST_LIBS)

$(AGENT): $(AGENT_OBJS) $(LIB)
	$(CC) -shared $(LDFLAGS) -Wl,--exclude-libs,ALL -o $@ $(AGENT_OBJS) $(LIB) $(LDLIBS)

$(AGENT_LIB): $(AGENT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/tests/%: tests/unit/%.c $(TEST_LIB_OBJS) $(LIB) $(if $(AGENT_SRCS),$(AGENT_LIB))
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -fvisibility=default -Itests/unit $(LDFLAGS) -o $@ $< $(TEST_LIB_OBJS) \
	    $(if $(AGENT_SRCS),$(AGENT_LIB)) $(LIB) -lcmocka $(TEST_LIBS_$*) $(LDLIBS)

$(BUILD)/gpu/%: tests/gpu/%.c $(GPU_COMMON) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit -Itests/gpu $(LDFLAGS) -o $@ $< $(GPU_COMMON) $(LIB) $(LDLIBS)
$(BUILD)/gpu/%: bench/%.c $(GPU_COMMON) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit -Itests/gpu $(LDFLAGS) -o $@ $< $(GPU_COMMON) $(LIB) $(LDLIBS)

# The test suite: plain build, then ASan+UBSan build, the fuzz corpora
# replayed (fuzz/smoke.sh, skipped without libFuzzer); one summary line last.
test:
	@$(MAKE) --no-print-directory all test-bins
	@$(MAKE) --no-print-directory SAN=1 test-bins
	@fuzz/smoke.sh; smoke=$$?; tests/run.sh build build/san && exit $$smoke

# Fuzzing: every fuzz/fuzz_*.c becomes a libFuzzer binary in build/fuzz,
# linked with the library compiled by clang with the fuzzer's coverage
# instrumentation and ASan+UBSan.  fuzz/smoke.sh checks that clang has
# libFuzzer first, so `make fuzz` says so and skips where it has not.
FUZZ_CC     ?= clang
FUZZ_BUILD  := build/fuzz
FUZZ_SRCS   := $(wildcard fuzz/fuzz_*.c)
FUZZ_BINS   := $(FUZZ_SRCS:fuzz/%.c=$(FUZZ_BUILD)/%)
FUZZ_OBJS   := $(LIB_SRCS:%.c=$(FUZZ_BUILD)/%.o)
FUZZ_CFLAGS := -std=c17 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer $(WARN) \
               -Iinclude -Isrc -I$(CUDA_HOME)/include

fuzz:
	@fuzz/smoke.sh --build-only

fuzz-bins: $(FUZZ_BINS)

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c $(FUZZ_OBJS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -o $@ $< $(FUZZ_OBJS) $(LDLIBS)

# The verifier's fuzzer mutates programs of the generator (fuzz/progen.c).
$(FUZZ_BUILD)/fuzz_verifier: fuzz/fuzz_verifier.c fuzz/progen.c fuzz/progen.h $(FUZZ_OBJS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Ifuzz -fsanitize=fuzzer,address,undefined -o $@ \
		fuzz/fuzz_verifier.c fuzz/progen.c $(FUZZ_OBJS) $(LDLIBS)

test-bins: $(TEST_BINS) $(CLI) $(if $(AGENT_SRCS),$(AGENT))
test-plain: all $(TEST_BINS)
	@tests/run.sh build

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	           $(DESTDIR)$(PREFIX)/include/gpuext $(DESTDIR)$(PREFIX)/include/bpf \
	           $(DESTDIR)$(PREFIX)/share/gpuext/tools
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/gpuext
	install -m 644 $(LIB) $(SOLIB) $(DESTDIR)$(PREFIX)/lib/
	$(if $(AGENT_SRCS),install -m 644 $(AGENT) $(DESTDIR)$(PREFIX)/lib/)
	install -m 644 include/gpuext/*.h $(DESTDIR)$(PREFIX)/include/gpuext/
	-install -m 644 include/bpf/*.h $(DESTDIR)$(PREFIX)/include/bpf/
	-install -m 644 $(wildcard build/bpf/tools/*.bpf.o) $(DESTDIR)$(PREFIX)/share/gpuext/tools/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' gpuext.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/gpuext.pc

clean:
	rm -rf build

include bench/bench.mk

-include $(shell find build -name '*.d' 2>/dev/null)

# The JIT's differential fuzzer (fuzz/jit_diff.c with the program generator
# fuzz/progen.c; a smoke run is part of the tests, see tests/unit/test_jit_diff.c)
# and its compile-time bench.
JIT_DIFF       := $(BUILD)/fuzz/jit_diff
JIT_BENCH      := $(BUILD)/bench/jit_compile_bench
$(JIT_DIFF): fuzz/jit_diff.c fuzz/progen.c fuzz/progen.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Ifuzz $(LDFLAGS) -o $@ fuzz/jit_diff.c fuzz/progen.c $(LIB) $(LDLIBS)
$(JIT_BENCH): bench/jit/compile_bench.c fuzz/progen.c fuzz/progen.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Ifuzz $(LDFLAGS) -o $@ bench/jit/compile_bench.c fuzz/progen.c $(LIB) $(LDLIBS)
jit-bench: $(JIT_BENCH)
	$(JIT_BENCH)
test-bins: $(JIT_DIFF)
.PHONY: jit-bench

# The verifier corpora against the Linux verifier (needs root and libbpf;
# issue 3, Must show 4): build/tests/verifier_kernel_diff, run from the root.
VFY_KDIFF := $(BUILD)/tests/verifier_kernel_diff
$(VFY_KDIFF): tests/verifier/kernel_diff.c $(TEST_LIB_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fvisibility=default -Itests/unit $(LDFLAGS) -o $@ $< $(TEST_LIB_OBJS) $(LIB) -lcmocka -lbpf $(LDLIBS)
verifier-kernel-diff: $(VFY_KDIFF)
	$(VFY_KDIFF)
.PHONY: verifier-kernel-diff
test-bins: $(VFY_KDIFF)

# Host map throughput under 1..16 threads (bench/maps/map_bench.c).
MAP_BENCH := $(BUILD)/bench/map_bench
$(MAP_BENCH): bench/maps/map_bench.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)
map-bench: $(MAP_BENCH)
	$(MAP_BENCH)
.PHONY: map-bench
# The agent's test fixtures (tests/fakecuda): a fake libcuda.so.1 and a
# driver-API application linked against it; test_agent runs the app under
# `gpuext run` with the agent preloaded.
FAKECUDA_DIR := $(BUILD)/fakecuda
$(FAKECUDA_DIR)/libcuda.so.1: tests/fakecuda/fakecuda.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic -o $@ $< -lpthread -ldl
$(FAKECUDA_DIR)/app: tests/fakecuda/app.c tests/fakecuda/fakeapp.h $(FAKECUDA_DIR)/libcuda.so.1
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -L$(FAKECUDA_DIR) -l:libcuda.so.1 \
		-Wl,-rpath,'$$ORIGIN' -ldl
test-bins: $(FAKECUDA_DIR)/app
all: $(FAKECUDA_DIR)/app
$(FAKECUDA_DIR)/launchapp: tests/fakecuda/launchapp.c tests/fakecuda/fakeapp.h $(FAKECUDA_DIR)/libcuda.so.1
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -L$(FAKECUDA_DIR) -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN'
test-bins: $(FAKECUDA_DIR)/launchapp
all: $(FAKECUDA_DIR)/launchapp
# laid out like an nvcc-built program: the PTX below in its fatbin
RTAPP_PTX := tests/ptx_corpus/checked.compute_75.ptx
$(FAKECUDA_DIR)/rtapp: tests/fakecuda/rtapp.c $(RTAPP_PTX) $(FAKECUDA_DIR)/libcuda.so.1
	$(CC) $(CFLAGS) $(LDFLAGS) -DRTAPP_PTX=$(RTAPP_PTX) -o $@ $< -L$(FAKECUDA_DIR) \
		-l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN'
test-bins: $(FAKECUDA_DIR)/rtapp
all: $(FAKECUDA_DIR)/rtapp
$(FAKECUDA_DIR)/memapp: tests/fakecuda/memapp.c $(FAKECUDA_DIR)/libcuda.so.1
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -Wl,-rpath,'$$ORIGIN' -ldl
test-bins: $(FAKECUDA_DIR)/memapp
all: $(FAKECUDA_DIR)/memapp
$(FAKECUDA_DIR)/managedapp: tests/fakecuda/managedapp.c $(FAKECUDA_DIR)/libcuda.so.1
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -L$(FAKECUDA_DIR) -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN'
test-bins: $(FAKECUDA_DIR)/managedapp
all: $(FAKECUDA_DIR)/managedapp
$(FAKECUDA_DIR)/schedapp: tests/fakecuda/schedapp.c $(FAKECUDA_DIR)/libcuda.so.1
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -L$(FAKECUDA_DIR) -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN'
test-bins: $(FAKECUDA_DIR)/schedapp
all: $(FAKECUDA_DIR)/schedapp
$(FAKECUDA_DIR)/session_writer: tests/fakecuda/session_writer.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)
test-bins: $(FAKECUDA_DIR)/session_writer
all: $(FAKECUDA_DIR)/session_writer
# The CUPTI source's test fixture (tests/fakecupti): a fake libcupti that
# hands out synthetic activity records through CUPTI's buffer protocol.
FAKECUPTI := $(BUILD)/fakecupti/libcupti.so.13
$(FAKECUPTI): tests/fakecupti/fakecupti.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,libcupti.so.13 -o $@ $< -lpthread
test-bins: $(FAKECUPTI)
all: $(FAKECUPTI)
$(FAKECUDA_DIR)/version_loop: tests/fakecuda/version_loop.c $(FAKECUDA_DIR)/libcuda.so.1
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -L$(FAKECUDA_DIR) -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN'
test-bins: $(FAKECUDA_DIR)/version_loop
all: $(FAKECUDA_DIR)/version_loop

# The kernel-uprobe backend's test links its objects and libbpf (HOST_OBJS).
$(BUILD)/tests/test_host: tests/unit/test_host.c $(TEST_LIB_OBJS) $(HOST_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -fvisibility=default -Itests/unit $(LDFLAGS) -o $@ $< $(TEST_LIB_OBJS) \
	    $(HOST_OBJS) $(LIB) -lcmocka $(HOST_LIBS) $(LDLIBS)
