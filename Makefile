# SPDX-License-Identifier: MIT
#
# npuring build.  Kernel-style: quiet by default, V=1 shows the commands,
# O=dir builds out of tree, SANITIZE=address,undefined builds with ASan/UBSan.
#
#   make            library, tools, selftests
#   make check      all selftests; last line "N passed, N failed, N skipped"
#   make install    library, headers, npuring.pc, tools, man pages, Python
#                   module, software NPU (Documentation/install.rst);
#                   make uninstall removes them, make install-tests adds
#                   the selftests and their runner
#   make demo       face detection on a real photo, with timings
#   make bench      ring overhead (null device) and squeezenet1.1 throughput
#   make fuzz       the fuzz targets with libFuzzer (clang), in build-fuzz/
#   make clean

VERSION := 0.3.0
SONAME_MAJOR := 0

srctree := $(CURDIR)
O ?= .
obj := $(abspath $(O))

ifeq ($(V),1)
  Q :=
  quiet = @true
else
  Q := @
  quiet = @printf '  %-7s %s\n'
endif

CC ?= cc
ifeq ($(origin CC),default)
  CC := gcc
endif

PKG_CONFIG ?= pkg-config
XML_CFLAGS := $(shell $(PKG_CONFIG) --cflags libxml-2.0 2>/dev/null || echo -I/usr/include/libxml2)
XML_LIBS := $(shell $(PKG_CONFIG) --libs libxml-2.0 2>/dev/null || echo -lxml2)
PNG_CFLAGS := $(shell $(PKG_CONFIG) --cflags libpng 2>/dev/null)
PNG_LIBS := $(shell $(PKG_CONFIG) --libs libpng 2>/dev/null || echo -lpng)
JPEG_CFLAGS := $(shell $(PKG_CONFIG) --cflags libjpeg 2>/dev/null)
# libjpeg-turbo (libjpeg62-turbo-dev) has no .pc file on every release
JPEG_LIBS := $(shell $(PKG_CONFIG) --libs libjpeg 2>/dev/null || echo -ljpeg)
PROTOBUF_LIBS := $(shell $(PKG_CONFIG) --libs libprotobuf-c 2>/dev/null || echo -lprotobuf-c)
ONNX_PROTO ?= /usr/include/onnx/onnx.proto
PROTOC_C ?= protoc-c

# WERROR=1 (CI sets it) makes every warning an error
WERROR ?= 0
WERROR_FLAG := $(if $(filter 1,$(WERROR)),-Werror)
WARN := -Wall -Wextra $(WERROR_FLAG) -Wno-unused-parameter \
	-Wno-missing-field-initializers
OPT ?= -O2 -g
CFLAGS_BASE := -std=gnu11 $(OPT) $(WARN) -fPIC -pthread \
	-DNPR_LIB_VERSION='"$(VERSION)"' \
	-I$(srctree) -I$(srctree)/lib -I$(srctree)/lib/include -I$(obj)/lib/onnx/gen \
	$(XML_CFLAGS) $(PNG_CFLAGS) $(JPEG_CFLAGS)
ifneq ($(SANITIZE),)
  # a sanitizer's report is a failure: UBSan aborts instead of going on
  CFLAGS_BASE += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
  LDFLAGS += -fsanitize=$(SANITIZE)
endif
# CPPFLAGS (e.g. -D_FORTIFY_SOURCE) first, CFLAGS last: the caller's win
ALL_CFLAGS = $(CPPFLAGS) $(CFLAGS_BASE) $(CFLAGS)
LIBS := -luring $(XML_LIBS) $(PNG_LIBS) $(PROTOBUF_LIBS) -lm -pthread

include $(srctree)/Kbuild

LIB_OBJS := $(addprefix $(obj)/,$(lib-y) $(ref-y) $(npu-y))
# LIBA: every object with its internal symbols, what tools and tests link;
# LIBA_API: the installed static library, only the map's symbols global
LIBA := $(obj)/lib/libnpuring-internal.a
LIBA_API := $(obj)/lib/libnpuring.a
LIBSO_REAL := $(obj)/lib/libnpuring.so.$(VERSION)
LIBSO := $(obj)/lib/libnpuring.so
TOOLS := $(addprefix $(obj)/tools/,$(tools-y))
TESTS := $(addprefix $(obj)/selftests/,$(selftests-y))
TESTPROGS := $(addprefix $(obj)/selftests/,$(selftests-prog-y))
EXAMPLES := $(addprefix $(obj)/examples/,$(examples-y))

all: $(LIBA) $(LIBA_API) $(LIBSO) $(TOOLS) $(TESTS) $(TESTPROGS) $(EXAMPLES)

# CFLAGS_<dir>/ for every object of a folder; CFLAGS_<object> instead of it
obj_cflags = $(or $(CFLAGS_$(1)),$(CFLAGS_$(dir $(1))))

$(obj)/%.o: $(srctree)/%.c
	$(quiet) CC $(patsubst $(obj)/%,%,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(call obj_cflags,$(patsubst $(obj)/%,%,$@)) -MMD -MP -c $< -o $@

# ONNX message code, generated at build time from Debian's onnx.proto
$(obj)/lib/onnx/gen/onnx.pb-c.c $(obj)/lib/onnx/gen/onnx.pb-c.h &: $(ONNX_PROTO)
	$(quiet) PROTOC lib/onnx/gen/onnx.pb-c.c
	$(Q)mkdir -p $(obj)/lib/onnx/gen
	$(Q)$(PROTOC_C) --c_out=$(obj)/lib/onnx/gen -I$(dir $(ONNX_PROTO)) $(ONNX_PROTO)

$(obj)/lib/onnx/gen/onnx.pb-c.o: $(obj)/lib/onnx/gen/onnx.pb-c.c
	$(quiet) CC lib/onnx/gen/onnx.pb-c.o
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS_BASE) $(CFLAGS) -Wno-error -c $< -o $@

$(filter-out $(obj)/lib/onnx/gen/onnx.pb-c.o,$(LIB_OBJS)): | $(obj)/lib/onnx/gen/onnx.pb-c.h

# the attributes of every ONNX op version, generated at build time from the
# schemas of Debian's libonnx by a small C++ program (lib/onnx/schema.c)
ONNX_CXXFLAGS ?= -std=c++17 -O1 -DONNX_NAMESPACE=onnx -DONNX_ML=1
ONNX_CXXLIBS ?= -lonnx -lonnx_proto -lprotobuf
$(obj)/lib/onnx/gen/gen-schemas: $(srctree)/lib/onnx/gen-schemas.cc \
		$(wildcard /usr/include/onnx/common/version.h)
	$(quiet) CXX lib/onnx/gen/gen-schemas
	$(Q)mkdir -p $(obj)/lib/onnx/gen
	$(Q)$(CXX) $(CPPFLAGS) $(ONNX_CXXFLAGS) -Wall -Wextra $(WERROR_FLAG) $< \
		$(LDFLAGS) -o $@ $(ONNX_CXXLIBS)

$(obj)/lib/onnx/gen/onnx-schemas.c $(obj)/lib/onnx/gen/onnx-schemas.h &: $(obj)/lib/onnx/gen/gen-schemas
	$(quiet) GEN lib/onnx/gen/onnx-schemas.c
	$(Q)$< $(obj)/lib/onnx/gen/onnx-schemas.h $(obj)/lib/onnx/gen/onnx-schemas.c

$(obj)/lib/onnx/gen/onnx-schemas.o: $(obj)/lib/onnx/gen/onnx-schemas.c
	$(quiet) CC lib/onnx/gen/onnx-schemas.o
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(obj)/lib/onnx/schema.o: $(obj)/lib/onnx/gen/onnx-schemas.h

$(LIBA): $(LIB_OBJS)
	$(quiet) AR $(patsubst $(obj)/%,%,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

# The static library to install: one relocatable object of every library
# object (ld -r), every symbol but the map's made local, so that a program
# linking it sees the API only (Documentation/install.rst).
LD ?= ld
OBJCOPY ?= objcopy
$(LIBA_API): $(LIB_OBJS) $(srctree)/lib/npuring.map
	$(quiet) AR $(patsubst $(obj)/%,%,$@)
	$(Q)sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p' \
		$(srctree)/lib/npuring.map > $(obj)/lib/libnpuring.syms
	$(Q)$(LD) -r -o $(obj)/lib/libnpuring.o $(LIB_OBJS)
	$(Q)$(OBJCOPY) --keep-global-symbols=$(obj)/lib/libnpuring.syms \
		$(obj)/lib/libnpuring.o
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $(obj)/lib/libnpuring.o

# libnpuring.so.VERSION, with libnpuring.so.0 (the soname) and
# libnpuring.so (the link-time name) pointing at it
$(LIBSO_REAL): $(LIB_OBJS) $(srctree)/lib/npuring.map
	$(quiet) LD $(patsubst $(obj)/%,%,$@)
	$(Q)$(CC) -shared -Wl,-soname,libnpuring.so.$(SONAME_MAJOR) \
		-Wl,--version-script=$(srctree)/lib/npuring.map \
		$(LDFLAGS) -o $@ $(LIB_OBJS) $(LIBS)

$(LIBSO): $(LIBSO_REAL)
	$(Q)ln -sf libnpuring.so.$(VERSION) $(LIBSO).$(SONAME_MAJOR)
	$(Q)ln -sf libnpuring.so.$(SONAME_MAJOR) $@

# Tools and tests link the internal static library (LIBA, every symbol):
# no LD_LIBRARY_PATH needed.
# <prog>-ldflags: link flags of that program only (fault_test's --wrap);
# <prog>-libs: libraries of that program only; a program with the image
# readers (tools/image.o) gets libjpeg, the library never does.
define link_prog
$(obj)/$(1)/$(2): $(addprefix $(obj)/,$($(2)-objs)) $(LIBA)
	$$(quiet) LD $(1)/$(2)
	$$(Q)$$(CC) $$(LDFLAGS) $$($(2)-ldflags) -o $$@ $(addprefix $(obj)/,$($(2)-objs)) $(LIBA) $$($(2)-libs) $$(if $$(filter tools/image.o,$$($(2)-objs)),$$(JPEG_LIBS)) $$(LIBS)
endef
$(foreach t,$(tools-y),$(eval $(call link_prog,tools,$(t))))

# npu/vnpu/: the software NPU, a Level Zero driver library the system's
# loader loads; built only where the Level Zero headers are installed.
ZE_HEADERS := $(shell echo '\#include <level_zero/ze_api.h>' | \
	$(CC) $(CPPFLAGS) $(CFLAGS) -E -x c - >/dev/null 2>&1 && echo yes)
VNPU := $(obj)/npu/vnpu/libze_intel_vpu.so.1
ifneq ($(ZE_HEADERS),)
all: $(VNPU)
$(VNPU): $(addprefix $(obj)/,$(vnpu-objs)) $(LIB_OBJS) $(srctree)/npu/vnpu/vnpu.map
	$(quiet) LD npu/vnpu/libze_intel_vpu.so.1
	$(Q)$(CC) -shared -Wl,-soname,libze_intel_vpu.so.1 -Wl,-Bsymbolic \
		-Wl,--version-script=$(srctree)/npu/vnpu/vnpu.map $(LDFLAGS) \
		-o $@ $(addprefix $(obj)/,$(vnpu-objs)) $(LIB_OBJS) $(LIBS) -ldl
# a loader with zeInitDrivers, for npu_driver_test (selftests/ze_shim.c)
ZE_SHIM := $(obj)/selftests/libze_shim.so.1
all: $(ZE_SHIM)
$(ZE_SHIM): $(obj)/selftests/ze_shim.o
	$(quiet) LD selftests/libze_shim.so.1
	$(Q)$(CC) -shared -Wl,-soname,libze_shim.so.1 $(LDFLAGS) -o $@ $< \
		-lze_loader
else
CFLAGS_BASE += -DNPR_NO_LEVEL_ZERO
all:
	@echo "  SKIP    npu/vnpu (no Level Zero headers: apt-get install libze-dev)"
endif
$(foreach t,$(selftests-y) $(selftests-prog-y),$(if $($(t)-objs),,\
	$(eval $(t)-objs := selftests/$(t).o)))
$(foreach t,$(selftests-y) $(selftests-prog-y),$(eval $(call link_prog,selftests,$(t))))
$(foreach t,$(examples-y),$(eval $(call link_prog,examples,$(t))))

# `make tools/npr-run` (a program by its name under O): the rules above
# name the programs by absolute path, so without these make would link
# the name with its built-in rule, against nothing it had rebuilt.
REL_PROGS := $(patsubst $(obj)/%,%,$(TOOLS) $(TESTS) $(TESTPROGS) $(EXAMPLES))
.PHONY: $(REL_PROGS)
$(REL_PROGS): %: $(obj)/%

SHARED ?= $(abspath $(srctree)/../shared)

# make check under sanitizers (Documentation/testing.rst): their options
# first, the environment's after them (they win).  A test child ends with
# _exit(), so TSan stops at its first report or its exit status is lost;
# LSan runs in each child (selftests/harness.h); tests get more time.
comma := ,
TSAN := $(filter thread,$(subst $(comma), ,$(SANITIZE)))
SANITIZE_ENV := $(if $(SANITIZE),\
	ASAN_OPTIONS="detect_leaks=1:$$ASAN_OPTIONS" \
	UBSAN_OPTIONS="print_stacktrace=1:$$UBSAN_OPTIONS" \
	TSAN_OPTIONS="halt_on_error=1 $$TSAN_OPTIONS" \
	TEST_TIMEOUT="$${TEST_TIMEOUT:-600}" NPR_SANITIZE=$(SANITIZE))
# The thread build leaves out the suites of selftests-tsan-skip-y (Kbuild),
# each counted as skipped with its reason, and runs without address space
# randomisation: TSan's fixed layout fails with "unexpected memory mapping"
# where the kernel randomises mmap more widely (vm.mmap_rnd_bits > 28).
TSAN_SKIP := $(foreach t,$(selftests-tsan-skip-y),$(t)=$(tsan-why-$(t));)
TSAN_RUN := $(if $(TSAN),$$(setarch $$(uname -m) -R true 2>/dev/null && \
	echo setarch $$(uname -m) -R))

deps:
	$(Q)$(srctree)/scripts/deps.sh

check: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)NPR_SHARED=$(SHARED) NPR_VNPU=$(if $(ZE_HEADERS),$(VNPU)) \
		NPR_CONFORMANCE_EXPECT=$(srctree)/selftests/conformance.expect \
		NPR_VALGRIND="$(if $(SANITIZE),,$(selftests-valgrind-y))" \
		NPR_TESTDIR=$(obj)/selftests NPR_SRCTREE=$(srctree) \
		NPR_CC="$(CC)" NPR_CXX="$(CXX)" \
		$(SANITIZE_ENV) NPR_SKIP="$(if $(TSAN),$(TSAN_SKIP))" \
		$(TSAN_RUN) $(srctree)/selftests/run.sh $(TESTS) \
		$(srctree)/selftests/ring_fallback_test.sh \
		$(srctree)/selftests/npu_modes_test.sh \
		$(srctree)/selftests/fuzz_test.sh \
		$(srctree)/selftests/layering_test.sh \
		$(srctree)/selftests/header_test.sh \
		$(srctree)/selftests/spdx_test.sh \
		$(srctree)/selftests/install_test.sh \
		$(srctree)/selftests/man_test.sh \
		$(srctree)/selftests/python_test.sh

# make install (Documentation/install.rst): the layout and its variables.
# Build and install with the same PREFIX and LIBDIR: the library finds the
# installed software NPU in $(LIBDIR)/npuring/vnpu (npu/device.c).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
PYTHON ?= python3
PYTHONDIR ?= $(shell $(PYTHON) $(srctree)/scripts/pythondir.py $(PREFIX))
PKGLIBDIR := $(LIBDIR)/npuring
INSTALL ?= install
CFLAGS_npu/device.o += -DNPR_VNPU_DIR='"$(PKGLIBDIR)/vnpu"'

MAN_PAGES := $(wildcard $(srctree)/Documentation/man/*.[137])
PY_MODULES := $(wildcard $(srctree)/python/npuring/*.py)
# the link flags a static link adds after the library's own
LIBS_PRIVATE := $(strip -luring $(XML_LIBS) $(PNG_LIBS) $(PROTOBUF_LIBS) \
	-lm -pthread)
# ${prefix}/... in npuring.pc where a directory lies under PREFIX
pc_dir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))

install: all
	$(quiet) INSTALL $(DESTDIR)$(PREFIX)
	$(Q)$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(INCLUDEDIR)/npuring $(DESTDIR)$(PKGCONFIGDIR)
	$(Q)$(INSTALL) -m 644 $(LIBSO_REAL) $(DESTDIR)$(LIBDIR)/
	$(Q)ln -sf libnpuring.so.$(VERSION) \
		$(DESTDIR)$(LIBDIR)/libnpuring.so.$(SONAME_MAJOR)
	$(Q)ln -sf libnpuring.so.$(SONAME_MAJOR) $(DESTDIR)$(LIBDIR)/libnpuring.so
	$(Q)$(INSTALL) -m 644 $(LIBA_API) $(DESTDIR)$(LIBDIR)/libnpuring.a
	$(Q)$(INSTALL) -m 644 $(srctree)/lib/include/npuring.h \
		$(DESTDIR)$(INCLUDEDIR)/npuring.h
	$(Q)$(INSTALL) -m 644 $(srctree)/uapi/npuring.h \
		$(DESTDIR)$(INCLUDEDIR)/npuring/uapi.h
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' \
		-e 's|@LIBDIR@|$(call pc_dir,$(LIBDIR))|' \
		-e 's|@INCLUDEDIR@|$(call pc_dir,$(INCLUDEDIR))|' \
		-e 's|@VERSION@|$(VERSION)|' \
		-e 's|@LIBS_PRIVATE@|$(LIBS_PRIVATE)|' \
		$(srctree)/lib/npuring.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/npuring.pc
	$(Q)$(INSTALL) -m 755 $(TOOLS) $(DESTDIR)$(BINDIR)/
	$(Q)for f in $(MAN_PAGES); do \
		s=$${f##*.}; \
		$(INSTALL) -d $(DESTDIR)$(MANDIR)/man$$s && \
		$(INSTALL) -m 644 $$f $(DESTDIR)$(MANDIR)/man$$s/ || exit 1; \
	done
ifneq ($(ZE_HEADERS),)
	$(Q)$(INSTALL) -d $(DESTDIR)$(PKGLIBDIR)/vnpu
	$(Q)$(INSTALL) -m 644 $(VNPU) $(DESTDIR)$(PKGLIBDIR)/vnpu/
endif
ifneq ($(PY_MODULES),)
	$(Q)test -n "$(PYTHONDIR)" || { echo "make install: no PYTHONDIR ($(PYTHON) not found)" >&2; exit 1; }
	$(Q)$(INSTALL) -d $(DESTDIR)$(PYTHONDIR)/npuring
	$(Q)$(INSTALL) -m 644 $(PY_MODULES) $(DESTDIR)$(PYTHONDIR)/npuring/
endif

# make install-tests: the selftests, what they run (the examples' server
# and client) and read (the expectations, the fuzz corpus), and run_tests,
# which runs them as make check does (selftests/run_tests.in)
TESTS_DIR := $(PKGLIBDIR)/selftests
TEST_SCRIPTS := run.sh ring_fallback_test.sh npu_modes_test.sh fuzz_test.sh \
	header_test.sh
FUZZ_REPLAY := $(addprefix $(obj)/selftests/fuzz_replay_,$(fuzz-targets))

install-tests: all
	$(quiet) INSTALL $(DESTDIR)$(TESTS_DIR)
	$(Q)$(INSTALL) -d $(DESTDIR)$(TESTS_DIR) $(DESTDIR)$(PKGLIBDIR)/examples
	$(Q)$(INSTALL) -m 755 $(TESTS) $(FUZZ_REPLAY) \
		$(addprefix $(srctree)/selftests/,$(TEST_SCRIPTS)) \
		$(DESTDIR)$(TESTS_DIR)/
	$(Q)$(INSTALL) -m 644 $(srctree)/selftests/conformance.expect \
		$(DESTDIR)$(TESTS_DIR)/
	$(Q)$(INSTALL) -m 755 $(obj)/examples/uring-server \
		$(obj)/examples/uring-client $(DESTDIR)$(PKGLIBDIR)/examples/
	$(Q)for d in $(srctree)/selftests/fuzz/corpus/*/; do \
		t=$$(basename $$d); \
		$(INSTALL) -d $(DESTDIR)$(TESTS_DIR)/fuzz/corpus/$$t && \
		$(INSTALL) -m 644 $$d* $(DESTDIR)$(TESTS_DIR)/fuzz/corpus/$$t/ || \
		exit 1; \
	done
	$(Q)sed -e 's|@BINDIR@|$(BINDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@TESTS@|$(selftests-y) $(filter-out run.sh,$(TEST_SCRIPTS))|' \
		-e 's|@VALGRIND@|$(selftests-valgrind-y)|' \
		-e 's|@VERSION@|$(VERSION)|' \
		$(srctree)/selftests/run_tests.in > $(DESTDIR)$(TESTS_DIR)/run_tests
	$(Q)chmod 755 $(DESTDIR)$(TESTS_DIR)/run_tests

# removes what install and install-tests put there, and the directories
# of npuring's own they leave empty
uninstall:
	$(quiet) UNINST $(DESTDIR)$(PREFIX)
	$(Q)rm -f $(DESTDIR)$(LIBDIR)/libnpuring.so.$(VERSION) \
		$(DESTDIR)$(LIBDIR)/libnpuring.so.$(SONAME_MAJOR) \
		$(DESTDIR)$(LIBDIR)/libnpuring.so $(DESTDIR)$(LIBDIR)/libnpuring.a \
		$(DESTDIR)$(INCLUDEDIR)/npuring.h \
		$(DESTDIR)$(INCLUDEDIR)/npuring/uapi.h \
		$(DESTDIR)$(PKGCONFIGDIR)/npuring.pc \
		$(addprefix $(DESTDIR)$(BINDIR)/,$(tools-y)) \
		$(DESTDIR)$(PKGLIBDIR)/vnpu/libze_intel_vpu.so.1
	$(Q)for f in $(notdir $(MAN_PAGES)); do \
		rm -f $(DESTDIR)$(MANDIR)/man$${f##*.}/$$f; \
	done
	$(Q)rm -rf $(DESTDIR)$(TESTS_DIR) $(DESTDIR)$(PKGLIBDIR)/examples
ifneq ($(PY_MODULES),)
	$(Q)rm -f $(addprefix $(DESTDIR)$(PYTHONDIR)/npuring/,$(notdir $(PY_MODULES)))
	$(Q)rm -rf $(DESTDIR)$(PYTHONDIR)/npuring/__pycache__
	$(Q)rmdir $(DESTDIR)$(PYTHONDIR)/npuring 2>/dev/null || true
endif
	$(Q)rmdir $(DESTDIR)$(INCLUDEDIR)/npuring $(DESTDIR)$(PKGLIBDIR)/vnpu \
		$(DESTDIR)$(PKGLIBDIR) 2>/dev/null || true

DEMO_MODEL := $(SHARED)/models/ir/face-detection-retail-0004/FP32-v10/face-detection-retail-0004.xml
DEMO_IMAGE := $(SHARED)/images/astronaut.png

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(obj)/tools/npr-run -d cpu -m $(DEMO_MODEL) -i $(DEMO_IMAGE) --niter 20 --ring

BENCH_MODEL := $(SHARED)/models/ir/squeezenet1.1/FP16/squeezenet1.1.xml

# the ring against the io_uring floors, requests in flight, then the CPU
# kernels and whole models against onnxruntime (scripts/bench.sh)
bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(obj)/tools/npr-bench -d null
	$(Q)$(obj)/tools/npr-bench -d cpu -m $(BENCH_MODEL) -t 1 --nireq 1 --time 3
	$(Q)$(obj)/tools/npr-bench -d cpu -m $(BENCH_MODEL) -t 1 --nireq 2 --time 3
	$(Q)NPR_SHARED=$(SHARED) NPR_KBENCH=$(obj)/selftests/npr-kbench \
		$(srctree)/scripts/bench.sh

# The fuzz targets of selftests/fuzz/ with libFuzzer, ASan and UBSan: the
# library built with clang in a tree of its own (FUZZ_O), instrumented for
# coverage; scripts/fuzz.sh makes the seeds and runs one target.
FUZZ_O ?= $(srctree)/build-fuzz
FUZZ_CC ?= clang

fuzz:
	$(Q)command -v $(FUZZ_CC) >/dev/null 2>&1 || { \
		echo "make fuzz: $(FUZZ_CC) not found (scripts/deps.sh --fuzz)" >&2; \
		exit 1; }
	$(Q)echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' | \
		$(FUZZ_CC) -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null || { \
		echo "make fuzz: $(FUZZ_CC) cannot link -fsanitize=fuzzer: its libFuzzer runtime is missing (scripts/deps.sh --fuzz)" >&2; \
		exit 1; }
	$(Q)$(MAKE) --no-print-directory O=$(FUZZ_O) CC=$(FUZZ_CC) \
		SANITIZE=address,undefined CFLAGS=-fsanitize=fuzzer-no-link \
		fuzz-bins

fuzz-bins: $(addprefix $(obj)/fuzz/fuzz_,$(fuzz-targets))

define link_fuzz
$(obj)/fuzz/fuzz_$(1): $(obj)/selftests/fuzz/fuzz_$(1).o $$(addprefix $(obj)/,$$(fuzz_$(1)-objs)) $(LIBA)
	$$(quiet) LD fuzz/fuzz_$(1)
	$$(Q)mkdir -p $$(dir $$@)
	$$(Q)$$(CC) $$(LDFLAGS) -fsanitize=fuzzer -o $$@ $$(filter %.o,$$^) $(LIBA) $$(LIBS)
endef
$(foreach t,$(fuzz-targets),$(eval $(call link_fuzz,$(t))))

clean:
	$(quiet) CLEAN $(obj)
	$(Q)rm -f $(LIB_OBJS) $(LIB_OBJS:.o=.d) $(LIBA) $(LIBA_API) $(LIBSO) \
		$(LIBSO).$(SONAME_MAJOR) $(LIBSO_REAL) $(obj)/lib/libnpuring.o \
		$(obj)/lib/libnpuring.syms $(TOOLS) $(TESTS) $(TESTPROGS)
	$(Q)rm -f $(VNPU) $(addprefix $(obj)/,$(vnpu-objs)) $(EXAMPLES) \
		$(ZE_SHIM) $(obj)/selftests/ze_shim.o
	$(Q)rm -rf $(obj)/lib/onnx/gen
	$(Q)find $(obj)/lib $(obj)/ref $(obj)/npu $(obj)/tools $(obj)/selftests \
		$(obj)/examples -name '*.[od]' -delete 2>/dev/null || true

.PHONY: all check demo deps clean bench fuzz fuzz-bins install install-tests \
	uninstall

-include $(LIB_OBJS:.o=.d) $(addprefix $(obj)/,$(vnpu-objs:.o=.d))
# tools, tests and examples include library-internal headers too
-include $(wildcard $(obj)/tools/*.d $(obj)/selftests/*.d $(obj)/examples/*.d)
-include $(wildcard $(obj)/selftests/fuzz/*.d)
