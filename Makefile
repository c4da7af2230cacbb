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
AGENT_SRCS:= $(wildcard src/agent/*.c)
AGENT_OBJS:= $(AGENT_SRCS:%.c=$(BUILD)/%.o)

TEST_SRCS := $(wildcard tests/unit/test_*.c)
TEST_BINS := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
TEST_LIB_SRCS := $(filter-out tests/unit/test_%.c,$(wildcard tests/unit/*.c))
TEST_LIB_OBJS := $(TEST_LIB_SRCS:%.c=$(BUILD)/%.o)

# eBPF programs: shipped tools and policies, examples, test programs.
BPF_SRCS  := $(wildcard tools/*.bpf.c policies/*.bpf.c examples/*.bpf.c tests/progs/*.bpf.c \
                         bench/progs/*.bpf.c)
BPF_OBJS  := $(BPF_SRCS:%.bpf.c=build/bpf/%.bpf.o)
BPF_CFLAGS := -O2 -g -target bpf -Wall -Werror -Iinclude -I/usr/include/$(MULTIARCH)

LIB       := $(BUILD)/libgpuext.a
SOLIB     := $(BUILD)/libgpuext.so
CLI       := $(BUILD)/gpuext
AGENT     := $(BUILD)/libgpuext-agent.so

.PHONY: all test test-plain test-san bpf clean install fuzz bench
all: $(LIB) $(SOLIB) $(CLI) bpf $(if $(AGENT_SRCS),$(AGENT))

bpf: $(BPF_OBJS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

build/bpf/%.bpf.o: %.bpf.c
	@mkdir -p $(dir $@)
	$(CLANG_BPF) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(SOLIB): $(LIB_OBJS)
	$(CC) -shared $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(CLI): $(CLI_OBJS) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(LDLIBS) $(if $(wildcard src/host/*.c),-lbpf -lelf -lz)

$(AGENT): $(AGENT_OBJS) $(LIB)
	$(CC) -shared $(LDFLAGS) -Wl,--exclude-libs,ALL -o $@ $(AGENT_OBJS) $(LIB) $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(TEST_LIB_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fvisibility=default -Itests/unit $(LDFLAGS) -o $@ $< $(TEST_LIB_OBJS) $(LIB) -lcmocka $(LDLIBS)

# The test suite: plain build, then ASan+UBSan build; one summary line.
test:
	@$(MAKE) --no-print-directory all test-bins
	@$(MAKE) --no-print-directory SAN=1 test-bins
	@tests/run.sh build build/san

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
