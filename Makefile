# Burrow's build. Knobs:
#   CUDA=auto|0|1      auto: use nvcc when it is on PATH (and say so); 1: require it
#   SAN=1              AddressSanitizer + UndefinedBehaviorSanitizer (or SAN=address,undefined,...)
#   CUDA_ARCH="80;90"  GPU architectures: machine code for each (sm_80, sm_90) plus PTX of
#                      the last, which later GPUs compile at load
#   DEBUG=1            -O0 -g (nvcc: -O0 -G, device code with debug information)
#   PREFIX=/usr/local  for make install
#   V=1                print full commands
#   FUZZ_SECONDS=1800  make fuzz: seconds each libFuzzer harness runs (tests/fuzz/, clang)
#   CC=clang           build with clang (in build/clang/); .ci/run keeps it building
# Each configuration builds in its own folder (build/, build/san/, build/debug/, ...),
# and every object depends on a stamp of the flags that built it.
# Outputs: libburrow (no MPI) and libburrow_mpi (libburrow plus distributed training, linking
# MPI), each shared and static; the burrow command and the tests link every object directly.

# The version has one source: include/burrow/core.h's BURROW_VERSION_* macros (burrow_version()
# prints them); the library's file names, SONAME and pkg-config files take it from there.
version_of = $(shell sed -n 's/^\#define BURROW_VERSION_$(1) \([0-9][0-9]*\).*/\1/p' include/burrow/core.h)
MAJOR := $(call version_of,MAJOR)
MINOR := $(call version_of,MINOR)
PATCH := $(call version_of,PATCH)
ifeq ($(MAJOR)$(MINOR)$(PATCH),)
$(error cannot read BURROW_VERSION_MAJOR, _MINOR, _PATCH from include/burrow/core.h)
endif
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
ifneq ($(findstring clang,$(notdir $(CC))),)
BUILD := $(BUILD)/clang
endif
ifneq ($(SAN),0)
BUILD := $(BUILD)/san
endif
ifneq ($(DEBUG),0)
BUILD := $(BUILD)/debug
endif
# the libFuzzer build (make fuzz sets FUZZ=1, CC=clang, SAN=fuzzer-no-link,address,undefined)
FUZZ ?= 0
ifeq ($(FUZZ),1)
BUILD := build/fuzz
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
# libburrow's own dependencies; MPI only for libburrow_mpi (distributed training), the CLI and tests
PKGS := libcjson liburing libzip libcurl zlib openblas
MPI_PKGS := ompi-c
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) $(MPI_PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
MPI_LIBS := $(shell pkg-config --libs $(MPI_PKGS) 2>/dev/null)

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

# -fno-math-errno: no math call's errno is read, and without it clang cannot vectorize an
# `omp simd` loop that calls sqrtf (Adam's), which -Werror turns into a failed build
CFLAGS_ALL := -std=c11 -Wall -Wextra -Werror -Wno-unknown-pragmas -g $(OPT) -fPIC -fopenmp -fno-math-errno \
	-fvisibility=hidden -D_FILE_OFFSET_BITS=64 -DBURROW_BUILDING -Iinclude $(PKG_CFLAGS) \
	$(SANFLAGS) $(CFLAGS)
# clang cannot vectorize sanitizer-instrumented `omp simd` loops and says so as a warning
ifneq ($(findstring clang,$(notdir $(CC))),)
ifneq ($(SAN),0)
CFLAGS_ALL += -Wno-pass-failed
endif
endif
LIBS_ALL := $(PKG_LIBS) -lmetis -lm -fopenmp -lpthread
CUDA_ARCH ?= 80;90
CUDA_ARCH_LIST := $(subst ;, ,$(CUDA_ARCH))
CUDA_GENCODE := $(foreach a,$(CUDA_ARCH_LIST),-gencode arch=compute_$(a)$(comma)code=sm_$(a)) \
	-gencode arch=compute_$(lastword $(CUDA_ARCH_LIST)),code=compute_$(lastword $(CUDA_ARCH_LIST))
NVCC_OPT := -O2 -lineinfo
ifneq ($(DEBUG),0)
NVCC_OPT := -O0 -G
endif
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -lstdc++
ifeq ($(HAS_CUDA),1)
CFLAGS_ALL += -DBURROW_CUDA
LIBS_ALL += $(CUDA_LIBS)
# NCCL, cuBLAS and cuSPARSE are not linked: their first user opens them (dlopen), so a
# binary starts where the toolkit keeps them elsewhere or lacks them
# --fmad=false: the kernels round as the CPU backend does (no contraction into FMA);
# -fno-gnu-unique: inline variables of CUB (sampler/sample_cuda.cu) become weak, not unique
# globals, so that, hidden, they are localized in libburrow.a like every non-API symbol
NVCCFLAGS_ALL := $(NVCC_OPT) -g -std=c++17 --fmad=false $(CUDA_GENCODE) -DBURROW_BUILDING -DBURROW_CUDA -Iinclude \
	-Xcompiler -fPIC,-fvisibility=hidden,-fno-gnu-unique,-fopenmp,-Wall,-Werror $(PKG_CFLAGS) $(NVCCFLAGS)
endif
LDFLAGS_ALL := $(SANFLAGS) $(LDFLAGS)

# ---------------------------------------------------------------- sources
LIB_DIRS := core device graph datasets sampler partition train
LIB_SRCS := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c $(d)/*/*.c))
# X_nocuda.c is a build without CUDA's X.cu: the same entry points, each refusing (so that
# C callers need no #ifdef); a CUDA build leaves it out
NOCUDA_SRCS := $(filter %_nocuda.c,$(LIB_SRCS))
LIB_SRCS := $(filter-out $(if $(filter 1,$(HAS_CUDA)),$(NOCUDA_SRCS)),$(LIB_SRCS))
CU_SRCS := $(if $(filter 1,$(HAS_CUDA)),$(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.cu $(d)/*/*.cu)))
TOOL_SRCS := $(wildcard tools/*.c)
TEST_SRCS := $(wildcard tests/*.c)
MPI_TEST_SRCS := $(wildcard tests/mpi/*.c)

# distributed training (MPI) is its own library: libburrow_mpi = libburrow + train/dist
# (with CUDA, its NCCL implementation of the communication layer, train/dist/*.cu, too)
MPI_LIB_SRCS := $(wildcard train/dist/*.c)
MPI_CU_SRCS := $(filter train/dist/%,$(CU_SRCS))
CORE_SRCS := $(filter-out $(MPI_LIB_SRCS),$(LIB_SRCS))
CORE_OBJS := $(CORE_SRCS:%.c=$(BUILD)/obj/%.o) $(patsubst %.cu,$(BUILD)/obj/%.cu.o,$(filter-out $(MPI_CU_SRCS),$(CU_SRCS)))
MPI_LIB_OBJS := $(MPI_LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(MPI_CU_SRCS:%.cu=$(BUILD)/obj/%.cu.o)
LIB_OBJS := $(CORE_OBJS) $(MPI_LIB_OBJS)
TOOL_OBJS := $(TOOL_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/obj/%.o)
MPI_TEST_BINS := $(MPI_TEST_SRCS:tests/mpi/%.c=$(BUILD)/tests/%)

STATIC := $(BUILD)/libburrow.a
STATIC_MPI := $(BUILD)/libburrow_mpi.a
INTERNAL := $(BUILD)/libburrow-internal.a
SHARED := $(BUILD)/libburrow.so.$(VERSION)
SHARED_MPI := $(BUILD)/libburrow_mpi.so.$(VERSION)
BIN := $(BUILD)/burrow
TESTBIN := $(BUILD)/tests/burrow-tests

# ---------------------------------------------------------------- flags stamp
STAMP := $(BUILD)/.flags
FLAGS_NOW := $(CC) $(CFLAGS_ALL) | $(LIBS_ALL) $(MPI_LIBS) | $(LDFLAGS_ALL) | cuda=$(HAS_CUDA) $(NVCC) $(NVCCFLAGS_ALL)
FLAGS_OLD := $(shell cat $(STAMP) 2>/dev/null)
ifneq ($(strip $(FLAGS_NOW)),$(strip $(FLAGS_OLD)))
$(shell mkdir -p $(BUILD) && printf '%s\n' '$(strip $(FLAGS_NOW))' > $(STAMP))
endif

.PHONY: all lib test check check-layers check-lengths python-check demo demo-run deps install uninstall clean bench bench-scale cuda-info fuzz fuzz-build fuzz-bins device-rehearsal
.DEFAULT_GOAL := all

all: cuda-info lib $(BIN)

cuda-info:
ifeq ($(CUDA),auto)
	@echo "burrow: CUDA=auto: $(if $(filter 1,$(HAS_CUDA)),building the CUDA backend with $(NVCC),nvcc not on PATH; CPU only)"
endif

lib: $(STATIC) $(STATIC_MPI) $(BUILD)/libburrow.so $(BUILD)/libburrow_mpi.so

$(BUILD)/obj/%.o: %.c $(STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.cu.o: %.cu $(STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) $(NVCCFLAGS_ALL) -MMD -MP -c $< -o $@

# The installed archives hold one relocatable object each whose internal (hidden) symbols
# are made local, so a static link sees only burrow_*; the CLI and the tests link the plain
# archive of every object, internals included.
$(INTERNAL): $(LIB_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/libburrow.o: $(CORE_OBJS)
	@$(if $(Q),echo "  LD -r   $@")
	$(Q)$(LD) -r -o $@ $^ && objcopy --localize-hidden $@

$(BUILD)/libburrow_mpi.o: $(LIB_OBJS)
	@$(if $(Q),echo "  LD -r   $@")
	$(Q)$(LD) -r -o $@ $^ && objcopy --localize-hidden $@

$(STATIC) $(STATIC_MPI): $(BUILD)/%.a: $(BUILD)/%.o
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $<

$(SHARED): $(CORE_OBJS) libburrow.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -o $@ $(CORE_OBJS) -Wl,-soname=libburrow.so.$(MAJOR) -Wl,--version-script=libburrow.map \
		-Wl,-z,defs -Wl,--as-needed $(LDFLAGS_ALL) $(LIBS_ALL)

$(SHARED_MPI): $(LIB_OBJS) libburrow.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -o $@ $(LIB_OBJS) -Wl,-soname=libburrow_mpi.so.$(MAJOR) -Wl,--version-script=libburrow.map \
		-Wl,-z,defs -Wl,--as-needed $(LDFLAGS_ALL) $(LIBS_ALL) $(MPI_LIBS)

$(BUILD)/libburrow.so: $(SHARED)
	$(Q)ln -sf libburrow.so.$(VERSION) $(BUILD)/libburrow.so.$(MAJOR) && ln -sf libburrow.so.$(VERSION) $@

$(BUILD)/libburrow_mpi.so: $(SHARED_MPI)
	$(Q)ln -sf libburrow_mpi.so.$(VERSION) $(BUILD)/libburrow_mpi.so.$(MAJOR) && ln -sf libburrow_mpi.so.$(VERSION) $@

$(BIN): $(TOOL_OBJS) $(INTERNAL)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $(TOOL_OBJS) $(INTERNAL) $(LDFLAGS_ALL) $(LIBS_ALL) $(MPI_LIBS)

$(TESTBIN): $(TEST_OBJS) $(INTERNAL)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $(TEST_OBJS) $(INTERNAL) $(LDFLAGS_ALL) $(LIBS_ALL) $(MPI_LIBS) $(shell pkg-config --libs criterion 2>/dev/null)

$(BUILD)/obj/tests/%.o: CFLAGS_ALL += -Icore -Igraph -Wno-missing-field-initializers

# MPI test programs: one executable each, started under mpirun by tests/test_mpi.c
$(BUILD)/tests/%: $(BUILD)/obj/tests/mpi/%.o $(INTERNAL)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $< $(INTERNAL) $(LDFLAGS_ALL) $(LIBS_ALL) $(MPI_LIBS)

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

# make check-layers: every quoted #include of the library and the command points down the
# layer table (docs/layers.md); make check runs it before the tests
check-layers:
	$(Q)tools/check-layers.sh include $(LIB_DIRS) tools

# make check-lengths: no library function over LENGTH_MAX lines (tools/func-lengths.py over
# every .c and .cu of the library); make check runs it before the tests. LENGTH_EXCEPTIONS:
# functions still over (file:function, space-separated; none now), let through until split;
# one that is split is named as such, to be dropped from the list.
LENGTH_MAX := 120
LENGTH_EXCEPTIONS :=
LENGTH_SRCS := $(sort $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c $(d)/*/*.c $(d)/*.cu $(d)/*/*.cu)))
check-lengths:
	$(Q)tools/func-lengths.py $(LENGTH_MAX) $(LENGTH_SRCS) | awk -v ex="$(LENGTH_EXCEPTIONS)" -v max=$(LENGTH_MAX) ' \
		BEGIN { n = split(ex, e, " "); for (i = 1; i <= n; i++) known[e[i]] = 1 } \
		{ f = $$2; sub(/:[0-9]+$$/, "", f); k = f ":" $$3 } \
		k in known { seen[k] = 1; print "check-lengths: known exception: " $$0; next } \
		{ print "check-lengths: over " max " lines: " $$0; bad = 1 } \
		END { for (k in known) if (!(k in seen)) \
			print "check-lengths: " k " is no longer over " max " lines: drop it from LENGTH_EXCEPTIONS"; \
		      exit bad }'

check: check-layers check-lengths all $(TESTBIN) $(MPI_TEST_BINS)
	@echo "burrow: running tests ($(BUILD))"
	$(Q)BURROW_BIN=$(abspath $(BIN)) BURROW_BUILD=$(abspath $(BUILD)) BURROW_DATASETS=$(abspath $(BURROW_DATASETS)) \
		$(if $(filter-out 0,$(SAN)),$(SAN_ENV)) $(TESTBIN) --jobs 2 --timeout 300
ifeq ($(SAN),0)
	$(Q)tests/install-check.sh CUDA=$(CUDA) DEBUG=$(DEBUG)
	$(Q)tests/readme-check.sh $(BIN)
	$(Q)$(MAKE) --no-print-directory python-check
endif

# the Python package's tests (python/tests) in build/venv, made by tools/python-venv.sh when missing;
# not under SAN=1: a sanitized libburrow.so cannot be loaded into an unsanitized python
VENV := build/venv
python-check: all
	$(Q)tools/python-venv.sh $(VENV)
	$(Q)BURROW_LIB=$(abspath $(BUILD))/libburrow.so BURROW_BIN=$(abspath $(BIN)) \
		BURROW_DATASETS=$(abspath $(BURROW_DATASETS)) $(VENV)/bin/python -m pytest -q -p no:cacheprovider python/tests

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
	tools/python-venv.sh $(VENV)
	[ -d $(BUILD)/bench-data/rmat20 ] || $(BIN) gen rmat $(BUILD)/bench-data/rmat20 --scale 20 --quiet
	BURROW_LIB=$(abspath $(BUILD))/libburrow.so BURROW_BIN=$(abspath $(BIN)) PYTHONPATH=python \
		$(VENV)/bin/python -m burrow.bench $(BUILD)/bench-data/rmat20
	BENCH_DIR=$(BUILD)/bench-data tools/bench-scaling.sh $(BIN)
	BENCH_DIR=$(BUILD)/bench-data PEERS_VENV=$(BUILD)/venv-peers tools/bench-peers.sh $(BIN)

# make bench-scale: the papers100M-shaped pipeline (gen, verify, one epoch, eval, bench train,
# partition) at 1/64 and 1/16 of its size, each phase's time, peak RSS and I/O into
# $(SCALE_DIR)/<fraction>/scale.json (docs/scale.md); 1/16 takes about 6 GB of disk and, on
# 2 cores, most of an hour. The full size is run by hand: tools/scale-run.sh 1 DIR.
SCALE_DIR ?= $(BUILD)/scale
bench-scale: all
	SCALE_BENCH=1 BURROW=$(BIN) nice -n 10 tools/scale-run.sh 1/64 $(SCALE_DIR)/64
	SCALE_BENCH=1 BURROW=$(BIN) nice -n 10 tools/scale-run.sh 1/16 $(SCALE_DIR)/16

# make device-rehearsal: tools/device-check.sh prepare, then its smoke and full stages inside a
# mount namespace hiding the Debian libraries Burrow links and the toolkit's NCCL, as on a bare
# GPU machine (root; a few minutes; tools/device-rehearsal.sh)
device-rehearsal:
	tools/device-rehearsal.sh

# ---------------------------------------------------------------- fuzzing
# make fuzz: every libFuzzer harness of tests/fuzz/ (clang, ASan + UBSan) for FUZZ_SECONDS
# each, niced, from its committed seeds (tests/fuzz/corpus/NAME for fuzz_NAME, read only) and the corpus it
# grows in build/fuzz/corpus/NAME; a crash leaves build/fuzz/crash-NAME-* and fails the target
# after every harness ran. Reproduce one: build/fuzz/NAME build/fuzz/crash-NAME-<hash>.
FUZZ_SECONDS ?= 1800
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES := $(FUZZ_SRCS:tests/fuzz/%.c=%)
FUZZ_BINS := $(FUZZ_NAMES:%=$(BUILD)/%)
FUZZ_ENV := ASAN_OPTIONS=detect_leaks=1:protect_shadow_gap=0:allocator_may_return_null=1 \
	LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp):print_suppressions=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

fuzz-build:
	@$(MAKE) --no-print-directory FUZZ=1 CC=clang CUDA=0 SAN=fuzzer-no-link,address,undefined fuzz-bins

fuzz-bins: $(FUZZ_BINS)
.SECONDARY: $(FUZZ_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/tests/fuzz/fuzz.o

$(BUILD)/fuzz_%: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(BUILD)/obj/tests/fuzz/fuzz.o $(INTERNAL)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -fsanitize=fuzzer -o $@ $^ $(LDFLAGS_ALL) $(LIBS_ALL) $(MPI_LIBS)

fuzz: fuzz-build
	@fail=0; for h in $(FUZZ_NAMES); do \
		mkdir -p build/fuzz/corpus/$$h; \
		echo "burrow: fuzzing $$h for $(FUZZ_SECONDS) s (log: build/fuzz/$$h.log)"; \
		if $(FUZZ_ENV) nice -n 10 build/fuzz/$$h -max_total_time=$(FUZZ_SECONDS) -timeout=60 \
			-rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix=build/fuzz/crash-$$h- \
			build/fuzz/corpus/$$h tests/fuzz/corpus/$${h#fuzz_} > build/fuzz/$$h.log 2>&1; then \
			echo "burrow: $$h: $$(sed -n 's/^stat::number_of_executed_units: *//p' build/fuzz/$$h.log) execs, no crash"; \
		else \
			fail=1; echo "burrow: $$h: FAILED:"; grep -m3 -E 'ERROR|SUMMARY|runtime error|fuzz:' build/fuzz/$$h.log; \
			ls build/fuzz/crash-$$h-* 2>/dev/null; \
		fi; \
	done; exit $$fail

# ---------------------------------------------------------------- install
DESTDIR ?=
# the umbrella include/burrow.h and the module headers it includes
PUBLIC_HEADERS := $(wildcard include/burrow/*.h)
# one .pc per library; Libs.private names the direct dependencies only, so that
# `pkg-config --static` does not pull in what those libraries link privately
PC_PRIVATE := $(PKG_LIBS) -lmetis -lm -fopenmp -lpthread$(if $(filter 1,$(HAS_CUDA)), -L$(CUDA_HOME)/lib64 -lcudart -lstdc++)
define pc_file
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@NAME@|$(1)|g' -e 's|@LIB@|$(2)|g' \
		-e 's|@DESCRIPTION@|$(3)|g' -e 's|@LIBS_PRIVATE@|$(strip $(4))|g' burrow.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/$(1).pc
endef

install: all
	install -d $(DESTDIR)$(PREFIX)/include/burrow $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 0644 include/burrow.h $(DESTDIR)$(PREFIX)/include/burrow.h
	install -m 0644 $(PUBLIC_HEADERS) $(DESTDIR)$(PREFIX)/include/burrow/
	install -m 0644 $(STATIC) $(STATIC_MPI) $(DESTDIR)$(PREFIX)/lib/
	install -m 0755 $(SHARED) $(SHARED_MPI) $(DESTDIR)$(PREFIX)/lib/
	for l in libburrow libburrow_mpi; do \
		ln -sf $$l.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/$$l.so.$(MAJOR) && \
		ln -sf $$l.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/$$l.so || exit 1; done
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/burrow
	$(call pc_file,burrow,burrow,Out-of-core graph neural network training (libburrow),$(PC_PRIVATE))
	$(call pc_file,burrow-mpi,burrow_mpi,libburrow with partition-parallel training over MPI (libburrow_mpi),$(PC_PRIVATE) $(MPI_LIBS))

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/include/burrow.h $(PUBLIC_HEADERS:include/%=$(DESTDIR)$(PREFIX)/include/%) \
		$(DESTDIR)$(PREFIX)/lib/libburrow.* $(DESTDIR)$(PREFIX)/lib/libburrow_mpi.* \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig/burrow.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/burrow-mpi.pc \
		$(DESTDIR)$(PREFIX)/bin/burrow
	rmdir $(DESTDIR)$(PREFIX)/include/burrow 2>/dev/null || true

clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(TOOL_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(FUZZ_SRCS:%.c=$(BUILD)/obj/%.d) $(MPI_TEST_SRCS:%.c=$(BUILD)/obj/%.d)
