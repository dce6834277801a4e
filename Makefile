# Burrow's build. Knobs:
#   CUDA=auto|0|1      auto: use nvcc when it is on PATH (and say so); 1: require it
#   SAN=1              AddressSanitizer + UndefinedBehaviorSanitizer (or SAN=address,undefined,...)
#   DEBUG=1            -O0 -g
#   PREFIX=/usr/local  for make install
#   V=1                print full commands
# Each configuration builds in its own folder (build/, build/san/, build/debug/, ...),
# and every object depends on a stamp of the flags that built it.

MAJOR := 0
MINOR := 1
PATCH := 0
VERSION := $(MAJOR).$(MINOR).$(PATCH)

CUDA ?= auto
SAN ?= 0
DEBUG ?= 0
PREFIX ?= /usr/local
V ?= 0

ifeq ($(V),1)
Q :=
else
Q := @
endif

# ---------------------------------------------------------------- configuration folder
BUILD := build
ifneq ($(SAN),0)
BUILD := $(BUILD)/san
endif
ifneq ($(DEBUG),0)
BUILD := $(BUILD)/debug
endif

# ---------------------------------------------------------------- CUDA: requested vs detected
NVCC_PATH := $(shell command -v nvcc 2>/dev/null)
ifeq ($(CUDA),0)
HAS_CUDA := 0
else ifeq ($(CUDA),1)
ifeq ($(NVCC_PATH),)
$(error CUDA=1 but nvcc is not on PATH; install the CUDA toolkit or build with CUDA=0)
endif
HAS_CUDA := 1
else ifeq ($(CUDA),auto)
HAS_CUDA := $(if $(NVCC_PATH),1,0)
else
$(error CUDA must be auto, 0 or 1 (got '$(CUDA)'))
endif
ifeq ($(HAS_CUDA),1)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(realpath $(NVCC_PATH)))
NVCC := $(NVCC_PATH)
endif

# ---------------------------------------------------------------- flags
CC ?= cc
PKGS := libcjson liburing libzip libcurl zlib openblas ompi-c
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

OPT := -O2
ifneq ($(DEBUG),0)
OPT := -O0
endif
comma := ,
SAN_LIST := $(if $(filter 1,$(SAN)),address$(comma)undefined,$(SAN))
SANFLAGS :=
ifneq ($(SAN),0)
SANFLAGS := -fsanitize=$(SAN_LIST) -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif

CFLAGS_ALL := -std=c11 -Wall -Wextra -Werror -Wno-unknown-pragmas -g $(OPT) -fPIC -fopenmp \
	-fvisibility=hidden -D_FILE_OFFSET_BITS=64 -DBURROW_BUILDING -Iinclude $(PKG_CFLAGS) \
	$(SANFLAGS) $(CFLAGS)
LIBS_ALL := $(PKG_LIBS) -lmetis -lm -fopenmp -lpthread
ifeq ($(HAS_CUDA),1)
CFLAGS_ALL += -DBURROW_CUDA
LIBS_ALL += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart
NVCCFLAGS_ALL := -O2 -g -std=c++17 -DBURROW_BUILDING -DBURROW_CUDA -Iinclude \
	-Xcompiler -fPIC,-fvisibility=hidden,-Wall,-Werror $(NVCCFLAGS)
endif
LDFLAGS_ALL := $(SANFLAGS) $(LDFLAGS)

# ---------------------------------------------------------------- sources
LIB_DIRS := core graph datasets sampler partition train
LIB_SRCS := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c $(d)/*/*.c))
CU_SRCS := $(if $(filter 1,$(HAS_CUDA)),$(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.cu $(d)/*/*.cu)))
TOOL_SRCS := $(wildcard tools/*.c)
TEST_SRCS := $(wildcard tests/*.c)
MPI_TEST_SRCS := $(wildcard tests/mpi/*.c)

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(CU_SRCS:%.cu=$(BUILD)/obj/%.cu.o)
TOOL_OBJS := $(TOOL_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/obj/%.o)
MPI_TEST_BINS := $(MPI_TEST_SRCS:tests/mpi/%.c=$(BUILD)/tests/%)

STATIC := $(BUILD)/libburrow.a
SHARED := $(BUILD)/libburrow.so.$(VERSION)
BIN := $(BUILD)/burrow
TESTBIN := $(BUILD)/tests/burrow-tests

# ---------------------------------------------------------------- flags stamp
STAMP := $(BUILD)/.flags
FLAGS_NOW := $(CC) $(CFLAGS_ALL) | $(LIBS_ALL) | $(LDFLAGS_ALL) | cuda=$(HAS_CUDA) $(NVCC) $(NVCCFLAGS_ALL)
FLAGS_OLD := $(shell cat $(STAMP) 2>/dev/null)
ifneq ($(strip $(FLAGS_NOW)),$(strip $(FLAGS_OLD)))
$(shell mkdir -p $(BUILD) && printf '%s\n' '$(strip $(FLAGS_NOW))' > $(STAMP))
endif

.PHONY: all lib test check demo demo-run deps install uninstall clean bench cuda-info
.DEFAULT_GOAL := all

all: cuda-info $(STATIC) $(BUILD)/libburrow.so $(BIN)

cuda-info:
ifeq ($(CUDA),auto)
	@echo "burrow: CUDA=auto: $(if $(filter 1,$(HAS_CUDA)),building the CUDA backend with $(NVCC),nvcc not on PATH; CPU only)"
endif

lib: $(STATIC) $(BUILD)/libburrow.so

$(BUILD)/obj/%.o: %.c $(STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.cu.o: %.cu $(STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) $(NVCCFLAGS_ALL) -MMD -MP -c $< -o $@

$(STATIC): $(LIB_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(SHARED): $(LIB_OBJS) libburrow.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -o $@ $(LIB_OBJS) -Wl,-soname=libburrow.so.$(MAJOR) -Wl,--version-script=libburrow.map \
		-Wl,-z,defs -Wl,--as-needed $(LDFLAGS_ALL) $(LIBS_ALL)

$(BUILD)/libburrow.so: $(SHARED)
	$(Q)ln -sf libburrow.so.$(VERSION) $(BUILD)/libburrow.so.$(MAJOR) && ln -sf libburrow.so.$(VERSION) $@

$(BIN): $(TOOL_OBJS) $(STATIC)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $(TOOL_OBJS) $(STATIC) $(LDFLAGS_ALL) $(LIBS_ALL)

$(TESTBIN): $(TEST_OBJS) $(STATIC)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $(TEST_OBJS) $(STATIC) $(LDFLAGS_ALL) $(LIBS_ALL) $(shell pkg-config --libs criterion 2>/dev/null)

$(BUILD)/obj/tests/%.o: CFLAGS_ALL += -Icore -Igraph -Wno-missing-field-initializers

# MPI test programs: one executable each, started under mpirun by tests/test_mpi.c
$(BUILD)/tests/%: $(BUILD)/obj/tests/mpi/%.o $(STATIC)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $< $(STATIC) $(LDFLAGS_ALL) $(LIBS_ALL)

# ---------------------------------------------------------------- the README's commands
deps:
	@tools/install-deps.sh

# make test: install what is missing, build, run every test (Criterion prints the summary)
test: deps
	@$(MAKE) --no-print-directory check

SAN_ENV := ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0:protect_shadow_gap=0 \
	LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp):print_suppressions=0 UBSAN_OPTIONS=print_stacktrace=1
.SECONDARY: $(MPI_TEST_SRCS:%.c=$(BUILD)/obj/%.o)

# the small real datasets (Cora) a few tests read; where the folder is absent they skip
BURROW_DATASETS ?= ../shared/datasets

check: all $(TESTBIN) $(MPI_TEST_BINS)
	@echo "burrow: running tests ($(BUILD))"
	$(Q)BURROW_BIN=$(abspath $(BIN)) BURROW_BUILD=$(abspath $(BUILD)) BURROW_DATASETS=$(abspath $(BURROW_DATASETS)) \
		$(if $(filter-out 0,$(SAN)),$(SAN_ENV)) $(TESTBIN) --jobs 2 --timeout 300
ifeq ($(SAN),0)
	$(Q)tests/install-check.sh CUDA=$(CUDA) DEBUG=$(DEBUG)
endif

DEMO_DIR := $(BUILD)/demo/csbm
# make demo: install, build, generate the embedded default dataset and train on it (mini-batch)
demo: deps
	@$(MAKE) --no-print-directory demo-run

demo-run: all
	$(BIN) gen csbm $(DEMO_DIR) --force
	$(BIN) train $(DEMO_DIR) --epochs 10

# make bench: every benchmark in one run (several GB of scratch data in build/bench-data)
bench: all
	tools/bench.sh $(BIN)

# ---------------------------------------------------------------- install
DESTDIR ?=
install: all
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 0644 include/burrow.h $(DESTDIR)$(PREFIX)/include/burrow.h
	install -m 0644 $(STATIC) $(DESTDIR)$(PREFIX)/lib/libburrow.a
	install -m 0755 $(SHARED) $(DESTDIR)$(PREFIX)/lib/libburrow.so.$(VERSION)
	ln -sf libburrow.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libburrow.so.$(MAJOR)
	ln -sf libburrow.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libburrow.so
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/burrow
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@PKGS@|$(PKGS)|g' \
		-e 's|@LIBS_PRIVATE@|-lmetis -lm -fopenmp -lpthread$(if $(filter 1,$(HAS_CUDA)), -L$(CUDA_HOME)/lib64 -lcudart)|g' \
		burrow.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/burrow.pc

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/include/burrow.h $(DESTDIR)$(PREFIX)/lib/libburrow.* \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig/burrow.pc $(DESTDIR)$(PREFIX)/bin/burrow

clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(TOOL_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(MPI_TEST_SRCS:%.c=$(BUILD)/obj/%.d)
