# mt: Intel PT snapshots to call-stack timelines.  One flat Makefile.
#
#   make                 build the four programs into $(O)/bin
#   make check           unit tests, then bats tests; ends with "N passed, N failed"
#   make SANITIZE=address,undefined check
#   make deps            install the Debian packages needed to build and test
#   make fuzz            run each fuzz target for FUZZ_SECONDS (60) seconds
#   make demo            build, capture the demo, decode it, write trace.fxt.gz
#   make install PREFIX=/usr/local [DESTDIR=...]

.DEFAULT_GOAL := all
PROGS    = mt-capture mt-decode mt-symbolize mt-fxt
PKGS     = libelf libdw zlib libxxhash libdeflate
IPT_LIBS ?= -lipt
CAPSTONE_CFLAGS ?= $(shell pkg-config --cflags capstone 2>/dev/null)
CAPSTONE_LIBS   ?= $(shell pkg-config --libs capstone 2>/dev/null || echo -lcapstone)
IBERTY_LIBS ?= -liberty

CC      ?= cc
CFLAGS  ?= -O2 -g
PREFIX  ?= /usr/local
DESTDIR ?=

WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
       -Wpointer-arith -Wvla -Wformat=2 -Wwrite-strings -Wcast-qual
MT_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) -iquote common $(CAPSTONE_CFLAGS) \
            $(shell pkg-config --cflags $(PKGS) 2>/dev/null) -pthread -MMD -MP
MT_LDLIBS_SHARED = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lelf -ldw -lz -lxxhash -ldeflate) \
            $(IPT_LIBS) $(CAPSTONE_LIBS) $(IBERTY_LIBS) -pthread -lm
# The programs link the archives of these libraries (all but libc, and
# libipt, of which Debian ships no archive; mt-fxt loads ISA-L when an
# output needs it, mt-fxt/sink.c): each shared object costs a
# program's start-up its mapping, relocation and page faults
# (bench/RESULTS.md, "Session 6").  STATIC_LIBS=0 links them as shared
# objects.  The unit tests link the shared objects (test-elffile reads
# its own PLT stubs of libelf).
STATIC_LIBS ?= 1
ifeq ($(STATIC_LIBS),1)
MT_LDLIBS = -Wl,-Bstatic $(filter-out -pthread -lpthread,$(shell pkg-config --static --libs $(PKGS) 2>/dev/null || \
              echo -ldw -lelf -lz -llzma -lbz2 -lxxhash -ldeflate)) $(CAPSTONE_LIBS) -Wl,-Bdynamic \
            $(IPT_LIBS) $(IBERTY_LIBS) -pthread -lm
else
MT_LDLIBS = $(MT_LDLIBS_SHARED)
endif

ifeq ($(DEVELOPER),1)
MT_CFLAGS += -Werror
endif

# Link-time optimisation for the programs: the per-line paths of
# mt-fxt and mt-symbolize cross modules (reader, reconstruction, writer)
# and gain about a tenth from inlining across them (bench/RESULTS.md).
# Objects carry regular code too (fat), so the unit tests link them
# without LTO; LTO= turns it off, and the sanitizer build goes without.
ifeq ($(SANITIZE),)
LTO ?= -flto=auto
endif
ifneq ($(LTO),)
MT_OBJ_CFLAGS = $(LTO) -ffat-lto-objects
MT_PROG_LDFLAGS = $(LTO)
MT_TEST_LDFLAGS = -fno-lto
endif

ifneq ($(SANITIZE),)
MT_CFLAGS += -fsanitize=$(SANITIZE) -fno-sanitize-recover=$(SANITIZE) -fno-omit-frame-pointer
MT_LDFLAGS += -fsanitize=$(SANITIZE)
O ?= build-san
else
O ?= build
endif

COMMON_SRCS = $(sort $(wildcard common/*.c))
COMMON_OBJS = $(COMMON_SRCS:%.c=$(O)/%.o)
LIBCOMMON   = $(O)/libmtcommon.a

# Each program: main.c plus the other files in its directory, which also go
# into $(O)/lib<prog>.a so unit tests can reach program-local modules.
# mt-capture's ptrace backend keeps JIT code's versions as the qemu
# plugin does, with the plugin's module.
mt-capture_EXTRA_SRCS = mt-capture/qemu/qcode.c
define prog_rules
$(1)_SRCS = $$(sort $$(wildcard $(1)/*.c)) $$($(1)_EXTRA_SRCS)
$(1)_OBJS = $$($(1)_SRCS:%.c=$(O)/%.o)
$(1)_LIBOBJS = $$(filter-out $(O)/$(1)/main.o,$$($(1)_OBJS))
$(O)/lib$(1).a: $$($(1)_LIBOBJS)
	@mkdir -p $$(@D)
	rm -f $$@ && $(AR) rcs $$@ $$^ $(O)/.empty.o
$(O)/bin/$(1): $(O)/$(1)/main.o $(O)/lib$(1).a $(LIBCOMMON)
	@mkdir -p $$(@D)
	$(CC) $(CFLAGS) $(MT_LDFLAGS) $(MT_PROG_LDFLAGS) $(LDFLAGS) -o $$@ $$^ $(MT_LDLIBS) $(LDLIBS)
endef
$(foreach p,$(PROGS),$(eval $(call prog_rules,$(p))))
# mt-fxt's own modules (reader's fast path, reconstruction, output) and
# the FXT writer (common/fxt.c, which only mt-fxt links) at -O3 (LTO
# keeps each function's level): about 5% fewer instructions and CPU on
# the mruby row than -O2 (bench/RESULTS.md, "Session 10 ... mt-fxt").
# MT_FXT_OPT= leaves them at CFLAGS'.
MT_FXT_OPT ?= -O3
$(O)/mt-fxt/%.o $(O)/common/fxt.o: CFLAGS += $(MT_FXT_OPT)

BINS = $(PROGS:%=$(O)/bin/%)

# The qemu backend's TCG plugin: a shared object loaded by qemu-x86_64,
# built from mt-capture/qemu/, the packet encoder it shares with the
# ptrace backend and the shared directory's file mapping (qemu-ipc.c),
# -fPIC and never sanitized (QEMU is not).  It lives in $(O)/lib/mt, as
# in $(PREFIX)/lib/mt: mt-capture finds it at ../lib/mt/mt-qemu.so from
# its own binary.
QEMU_PLUGIN = $(O)/lib/mt/mt-qemu.so
QEMU_PLUGIN_SRCS = $(sort $(wildcard mt-capture/qemu/*.c)) \
	mt-capture/emu-pt.c mt-capture/emu-insn.c mt-capture/ring.c \
	mt-capture/qemu-ipc.c
QEMU_PLUGIN_OBJS = $(QEMU_PLUGIN_SRCS:%.c=$(O)/pic/%.o)
PIC_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) -iquote common -iquote mt-capture \
	$(CAPSTONE_CFLAGS) -pthread -fPIC -fvisibility=hidden -MMD -MP
$(O)/pic/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PIC_CFLAGS) $(CPPFLAGS) -c -o $@ $<
$(QEMU_PLUGIN): $(QEMU_PLUGIN_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -shared -pthread $(LDFLAGS) -o $@ $^ $(IPT_LIBS) $(CAPSTONE_LIBS)
PROG_LIBS = $(PROGS:%=$(O)/lib%.a)

# Demo programs: built -O2 -g without sanitizers (they are targets, not mt).
DEMOS = demo/demo demo/recursive demo/threads demo/cxxdemo
DEMO_CFLAGS = -O2 -g -fno-omit-frame-pointer
demo/demo: demo/demo.c
	$(CC) $(DEMO_CFLAGS) -o $@ $< -ldl
demo/recursive: demo/recursive.c
	$(CC) $(DEMO_CFLAGS) -o $@ $<
demo/threads: demo/threads.c
	$(CC) $(DEMO_CFLAGS) -pthread -o $@ $< -lm
demo/cxxdemo: demo/cxxdemo.cpp
	$(CXX) $(DEMO_CFLAGS) -o $@ $<

UNIT_SRCS = $(sort $(wildcard tests/unit/test-*.c))
UNIT_BINS = $(UNIT_SRCS:tests/unit/%.c=$(O)/tests/%)

.PHONY: all check deps demo install clean bench fuzz
all: $(BINS) $(QEMU_PLUGIN) $(DEMOS)

$(O)/.empty.o:
	@mkdir -p $(@D)
	echo 'int mt_empty_object_;' | $(CC) -x c -c -o $@ -

$(O)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(MT_CFLAGS) $(MT_OBJ_CFLAGS) $(CPPFLAGS) -c -o $@ $<

$(LIBCOMMON): $(COMMON_OBJS) $(O)/.empty.o
	rm -f $@ && $(AR) rcs $@ $^

$(PROG_LIBS): $(O)/.empty.o

$(O)/tests/%: tests/unit/%.c $(PROG_LIBS) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(MT_CFLAGS) -Itests/unit $(MT_LDFLAGS) $(MT_TEST_LDFLAGS) $(LDFLAGS) -o $@ $< \
		$(PROG_LIBS) $(LIBCOMMON) $(MT_LDLIBS_SHARED) $(LDLIBS)

# MT_TESTS narrows the run: make check MT_TESTS='tests/unit/test-snap.c tests/mt-fxt-*.bats'
check: deps
	@$(MAKE) --no-print-directory all $(UNIT_BINS)
	MT_BUILD=$(abspath $(O)) MT_SANITIZE=$(SANITIZE) tests/helpers/run-tests $(MT_TESTS)

deps:
	@tests/helpers/deps

demo: deps all
	MT_BUILD=$(abspath $(O)) demo/run-demo

bench: all
	MT_BUILD=$(abspath $(O)) bench/run

# libFuzzer targets of tests/fuzz/, FUZZ_SECONDS (default 60) each.
fuzz:
	FUZZ_BUILD=$(O)/fuzz tests/helpers/fuzz

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5
	install -m 755 $(BINS) $(DESTDIR)$(PREFIX)/bin/
	install -d $(DESTDIR)$(PREFIX)/lib/mt
	install -m 644 $(QEMU_PLUGIN) $(DESTDIR)$(PREFIX)/lib/mt/
	for f in docs/man/*.1; do [ -f "$$f" ] && install -m 644 "$$f" $(DESTDIR)$(PREFIX)/share/man/man1/; done; true
	for f in docs/man/*.5; do [ -f "$$f" ] && install -m 644 "$$f" $(DESTDIR)$(PREFIX)/share/man/man5/; done; true
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	for p in $(PROGS); do install -m 644 docs/bash-completion/mt $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$p; done

clean:
	rm -rf $(O) $(DEMOS)

-include $(shell find $(O) -name '*.d' 2>/dev/null)
