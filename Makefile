# bach: complete hardware address traces of Intel Pentium machines.
#
# Targets
#   make               build the programs into $(BUILD)/bin (default build/bin)
#                      and $(BUILD)/lib/bach; installs nothing, but names the
#                      Debian packages of missing libraries (make deps)
#   make check         install missing packages, build, run the test suite, then
#                      build and run it again with SANITIZE=address,undefined
#   make check-fast    the suite once, without the sanitizer pass
#   make demo          build, generate a trace, show what it holds
#   make bench         performance figures (ratios measured in one run):
#                      bench/run.sh (trace files), bench/decode.sh (decoder),
#                      bench/markers.sh (marker rules' cost, a ratio),
#                      bench/timing.sh (timing sidecars' cost, a ratio),
#                      bench/soak.sh (bachd for SOAK_MINUTES=10: flat RSS
#                      and fds, accounting, retention),
#                      bench/analysis.sh (bach sim and bach mrc),
#                      bench/dist.sh (bach.dist: 2 Dask workers against 1)
#                      bench/compress.sh (the compressors and the transforms
#                      of bench/transform.c on three traces; alone: make
#                      bench-compress)
#   make soak          long fault runs, out of make check: bench/fault_soak.sh
#                      (SOAK_CYCLES=40 kills of bachd amid SIGHUP storms, then
#                      every capture recovered, whole and adding up)
#   make fuzz          longer libFuzzer runs of every parser (FUZZ_SECONDS each)
#   make install       install everything: the programs, libbach.so and its
#                      headers, the Python module, the manual pages, bash
#                      completion and the systemd files ("make install" near
#                      the end lists each part; PREFIX, DESTDIR and the
#                      directories below are honoured)
#   make deps          install the Debian packages the build and tests need
#   make format        clang-format the C sources
#   make clean
#
# Knobs
#   PREFIX=/usr/local  install prefix (install only)
#   DESTDIR=           staging root (install only)
#   SYSCONFDIR=/etc    bach/bachd.conf.example goes in $(SYSCONFDIR)/bach,
#                      and the unit reads $(SYSCONFDIR)/bach/bachd.conf
#   SYSTEMDUNITDIR=$(PREFIX)/lib/systemd/system   bachd.service, bachd@.service,
#                                                 bach-failure@.service
#   LIBEXECDIR=$(PREFIX)/lib/bach                 bach-failure (OnFailure= report)
#   SYSUSERSDIR=$(PREFIX)/lib/sysusers.d          bach.conf (user bach)
#   TMPFILESDIR=$(PREFIX)/lib/tmpfiles.d          bach.conf (/var/lib/bach)
#   UDEVRULESDIR=/lib/udev/rules.d   60-bach.rules (udev does not read
#                      /usr/local)
#   LIBDIR=$(PREFIX)/lib                          libbach.so.0
#   INCLUDEDIR=$(PREFIX)/include                  bach/*.h, the public headers
#   PKGCONFIGDIR=$(LIBDIR)/pkgconfig              bach.pc
#   PYTHON=/usr/bin/python3 (else python3 on PATH)
#   PYTHONDIR          the Python module: /usr/lib/python3/dist-packages
#                      under PREFIX=/usr (where Debian's python3 finds it),
#                      else $(PREFIX)/lib/python3.X/dist-packages
#   MANDIR=$(PREFIX)/share/man                    bach.1, bachd.8, bachd.conf.5
#   BASHCOMPDIR=$(PREFIX)/share/bash-completion/completions   bach, bachd
#   CFLAGS=...         kept as given; the project's flags are added after
#   V=1                show the commands
#   SANITIZE=address,undefined   build everything sanitized (into build/san)
#   DEVELOPER=1        add -Werror
#   BUILD=build        build directory
#   NO_DEPS=1          do not run scripts/deps.sh (neither check nor install)
#   NO_USB=1           build without libusb: no usb driver
#   NO_SIGROK=1        build without libsigrok: no sigrok driver; bach decode
#                      and replay of analyzer captures refuse, saying why

PREFIX ?= /usr/local
BINDIR = $(PREFIX)/bin
SYSCONFDIR ?= /etc
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
LIBEXECDIR ?= $(PREFIX)/lib/bach
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
UDEVRULESDIR ?= /lib/udev/rules.d
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
PYTHON ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)
PYTHONDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')/dist-packages)
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
CC ?= cc
CFLAGS ?= -O2 -g
FUZZ_SECONDS ?= 60

ifdef SANITIZE
BUILD ?= build/san
SAN_FLAGS = -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD ?= build
SAN_FLAGS =
endif

WARN = -Wall -Wextra -Wmissing-prototypes -Wstrict-prototypes -Wshadow \
       -Wpointer-arith -Wwrite-strings -Wformat=2 -Wvla
ifdef DEVELOPER
WARN += -Werror
endif

VERSION = 0.1.0
BACH_CFLAGS = -std=gnu11 -D_GNU_SOURCE -DBACH_VERSION=\"$(VERSION)\" -Iinclude -I. $(WARN) -MMD -MP -pthread \
	      $(SAN_FLAGS) $(EXT_DEFS)
LIBS = -lz -ldeflate -lzstd -ljansson -pthread
# ISA-L's igzip, compared with the block compressors in make bench only
BENCH_LIBS = -lisal
# The hardware side: NO_USB=1 builds without libusb (no usb driver),
# NO_SIGROK=1 without libsigrok (no sigrok driver, and bach decode and
# replay of analyzer captures refuse, saying why: analyzer/la_none.c)
EXT_PKGS = $(if $(NO_USB),,libusb-1.0) $(if $(NO_SIGROK),,libsigrok libzip)
EXT_DEFS = $(if $(NO_USB),-DBACH_NO_USB) $(if $(NO_SIGROK),-DBACH_NO_SIGROK)
# pkg-config runs when a command needs these (after scripts/deps.sh)
EXT_CFLAGS = $(if $(strip $(EXT_PKGS)),$(shell pkg-config --cflags $(EXT_PKGS)))
EXT_LIBS = $(if $(strip $(EXT_PKGS)),$(shell pkg-config --libs $(EXT_PKGS)))
# cairo draws bach plot's and bach report's pictures, pango lays their
# text out (bach-draw only)
CAIRO_CFLAGS = $(shell pkg-config --cflags cairo pangocairo)
CAIRO_LIBS = $(shell pkg-config --libs cairo pangocairo) -lm
DAEMON_LIBS = -luring -linih -lsystemd $(EXT_LIBS)
ALL_CFLAGS = $(CFLAGS) $(BACH_CFLAGS)
ALL_LDFLAGS = $(LDFLAGS) $(SAN_FLAGS)

ifneq ($(V),1)
Q = @
QUIET_CC = @echo '   CC    ' $@;
QUIET_LINK = @echo '   LINK  ' $@;
QUIET_AR = @echo '   AR    ' $@;
endif

LIB_SRC = $(wildcard lib/*.c lib/*/*.c)
LIB_OBJ = $(LIB_SRC:%.c=$(BUILD)/%.o)
BACH_SRC = $(wildcard tools/bach/*.c)
BACH_OBJ = $(BACH_SRC:%.c=$(BUILD)/%.o)
# `bach` is three binaries: the commands that run drivers or libsigrok
# (capture, decode) are in bach-acquire and those that draw with cairo
# (plot, report) in bach-draw, which `bach` executes (tools/bach/
# exec_helper.c), so that dump and the rest load none of those libraries.
# Each binary has the others' commands as stubs (exec_acquire.c,
# exec_draw.c). Which binary a new command goes in: tools/bach/cmd.h.
# plot is tools/bach/plot.c and its plot_*.c siblings.
ACQ_CMD_OBJ = $(BUILD)/tools/bach/capture.o $(BUILD)/tools/bach/decode.o
PLOT_OBJ = $(filter $(BUILD)/tools/bach/plot%.o,$(BACH_OBJ))
DRAW_CMD_OBJ = $(PLOT_OBJ) $(BUILD)/tools/bach/report.o
ACQ_STUB_OBJ = $(BUILD)/tools/bach/exec_acquire.o
DRAW_STUB_OBJ = $(BUILD)/tools/bach/exec_draw.o
BACH_COMMON_OBJ = $(filter-out $(ACQ_CMD_OBJ) $(DRAW_CMD_OBJ) $(ACQ_STUB_OBJ) $(DRAW_STUB_OBJ),$(BACH_OBJ))
ACQUIRE = $(BUILD)/lib/bach/bach-acquire
DRAW = $(BUILD)/lib/bach/bach-draw
# the capture engine (core/), the drivers and the analyzer file reader, and
# bachd's command line and configuration: shared by bachd and `bach capture`
CORE_SRC = $(wildcard core/*.c) \
	   $(filter-out daemon/bachd.c,$(wildcard daemon/*.c)) \
	   $(wildcard drivers/*.c) \
	   $(if $(NO_USB),,$(wildcard drivers/usb/*.c)) \
	   $(if $(NO_SIGROK),analyzer/la_none.c,$(wildcard drivers/sigrok/*.c) $(filter-out analyzer/la_none.c,$(wildcard analyzer/*.c)))
CORE_OBJ = $(CORE_SRC:%.c=$(BUILD)/%.o)
BACHD_OBJ = $(BUILD)/daemon/bachd.o
TEST_SRC = $(wildcard tests/unit/test_*.c)
TEST_BIN = $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_SRC = $(wildcard bench/*.c)
BENCH_BIN = $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
PROGRAMS = $(BUILD)/bin/bach $(BUILD)/bin/bachd $(ACQUIRE) $(DRAW)

# Plain `make` installs nothing: it checks with pkg-config that the
# libraries are there and names the packages that are not. `make deps`,
# `make demo` and `make check` install what is missing (scripts/deps.sh).
DEPS_STAMP = $(BUILD)/.deps-checked

all: $(PROGRAMS)

ifndef NO_DEPS
$(LIB_OBJ) $(BACH_OBJ) $(CORE_OBJ) $(BACHD_OBJ): | $(DEPS_STAMP)
endif

$(DEPS_STAMP): scripts/deps.sh
	$(Q)NO_USB=$(NO_USB) NO_SIGROK=$(NO_SIGROK) scripts/deps.sh --check
	$(Q)mkdir -p $(dir $@) && touch $@

deps:
	scripts/deps.sh

# Objects depend on the flags they were built with: a changed CFLAGS,
# DEVELOPER or CC rebuilds them.
FLAGS_NOW = $(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS)
$(BUILD)/.flags: FORCE
	$(Q)mkdir -p $(BUILD)
	$(Q)echo '$(FLAGS_NOW)' | cmp -s - $@ || echo '$(FLAGS_NOW)' > $@

$(BUILD)/%.o: %.c $(BUILD)/.flags
	$(Q)mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/libbach.a: $(LIB_OBJ)
	$(QUIET_AR)rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/libbachcore.a: $(CORE_OBJ)
	$(QUIET_AR)rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/core/%.o $(BUILD)/daemon/%.o $(BUILD)/drivers/%.o $(BUILD)/tools/bach/%.o: ALL_CFLAGS += -Icore -Idaemon
$(BUILD)/drivers/%.o $(BUILD)/analyzer/%.o $(BUILD)/tools/bach/%.o: ALL_CFLAGS += $(EXT_CFLAGS)
$(BUILD)/drivers/sigrok/%.o: ALL_CFLAGS += -Ianalyzer
$(DRAW_CMD_OBJ): ALL_CFLAGS += $(CAIRO_CFLAGS)

$(BUILD)/tools/bach/exec_helper.o: ALL_CFLAGS += -DBACH_LIBEXECDIR=\"$(LIBEXECDIR)\"

# only the engine's objects it needs (recovery), none of the drivers'
$(BUILD)/bin/bach: $(BACH_COMMON_OBJ) $(ACQ_STUB_OBJ) $(DRAW_STUB_OBJ) $(BUILD)/libbachcore.a $(BUILD)/libbach.a
	$(Q)mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(ACQUIRE): $(BACH_COMMON_OBJ) $(ACQ_CMD_OBJ) $(DRAW_STUB_OBJ) $(BUILD)/libbachcore.a $(BUILD)/libbach.a
	$(Q)mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DAEMON_LIBS) $(LIBS)

$(DRAW): $(BACH_COMMON_OBJ) $(DRAW_CMD_OBJ) $(ACQ_STUB_OBJ) $(BUILD)/libbachcore.a $(BUILD)/libbach.a
	$(Q)mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(CAIRO_LIBS) $(LIBS)

$(BUILD)/bin/bachd: $(BACHD_OBJ) $(BUILD)/libbachcore.a $(BUILD)/libbach.a
	$(Q)mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DAEMON_LIBS) $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libbach.a | $(DEPS_STAMP)
	$(Q)mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< \
		$(BUILD)/libbach.a -lcmocka $(LIBS)

# tests of the capture engine: core/'s objects (and bachd's configuration,
# daemon/), from its library
$(BUILD)/tests/test_core_%: tests/unit/test_core_%.c $(BUILD)/libbachcore.a $(BUILD)/libbach.a | $(DEPS_STAMP)
	$(Q)mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) -Icore -Idaemon $(ALL_LDFLAGS) -o $@ $< \
		$(BUILD)/libbachcore.a $(BUILD)/libbach.a -lcmocka $(DAEMON_LIBS) $(LIBS)

# Test helpers the tests/cli scripts run, with the project's flags (and
# sanitized in the sanitized pass). usb_board, the board emulated on
# umockdev, is left out where umockdev's development files are missing
# (tests/cli/usb.sh then skips).
UMOCKDEV_PKGS = umockdev-1.0 gio-2.0 glib-2.0
PLAIN_HELPERS = crc32 ctl_raw gapwalk no_io_uring notify_listen
HELPER_BIN = $(BUILD)/tests/helpers/usb_board \
	     $(PLAIN_HELPERS:%=$(BUILD)/tests/helpers/%) \
	     $(BUILD)/tests/helpers/truncate_shim.so \
	     $(if $(NO_SIGROK),,$(BUILD)/tests/helpers/srzip_edit)

$(PLAIN_HELPERS:%=$(BUILD)/tests/helpers/%): $(BUILD)/tests/helpers/%: tests/helpers/%.c | $(DEPS_STAMP)
	$(Q)mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIBS)

# truncate_shim.so cuts a file short under a reader (LD_PRELOAD, for
# tests/cli/truncate_read.sh): without the sanitizers, which would have
# their runtime loaded first
$(BUILD)/tests/helpers/truncate_shim.so: tests/helpers/truncate_shim.c | $(DEPS_STAMP)
	$(Q)mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -fPIC -shared \
		-o $@ $< -ldl

# srzip_edit damages .sr sessions (libzip) for tests/cli/decode.sh
$(BUILD)/tests/helpers/srzip_edit: tests/helpers/srzip_edit.c | $(DEPS_STAMP)
	$(Q)mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) $(EXT_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(EXT_LIBS) $(LIBS)

$(BUILD)/tests/helpers/usb_board: tests/helpers/usb_board.c \
		$(BUILD)/drivers/board_model.o $(BUILD)/drivers/common.o \
		$(BUILD)/libbach.a | $(DEPS_STAMP)
	$(Q)mkdir -p $(dir $@)
	$(Q)if pkg-config --exists $(UMOCKDEV_PKGS); then \
		$(if $(Q),echo '   LINK  ' $@;) \
		$(CC) $(ALL_CFLAGS) -Idrivers \
			$$(pkg-config --cflags $(UMOCKDEV_PKGS) | sed 's/-I/-isystem /g') \
			$(ALL_LDFLAGS) -o $@ $< $(filter %.o %.a,$^) \
			$$(pkg-config --libs $(UMOCKDEV_PKGS)) $(LIBS); \
	else \
		echo "   SKIP   $@: no $(UMOCKDEV_PKGS) development files"; \
	fi

$(BUILD)/bench/%: bench/%.c $(BUILD)/libbach.a | $(DEPS_STAMP)
	$(Q)mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< \
		$(BUILD)/libbach.a $(BENCH_LIBS) $(LIBS)

tests: $(PROGRAMS) $(TEST_BIN) $(HELPER_BIN)

# These install what is missing first (scripts/deps.sh), then build: the
# README's two commands work on a fresh Debian 12 machine.
INSTALL_DEPS = $(if $(NO_DEPS),:,scripts/deps.sh)
SUBMAKE = $(MAKE) --no-print-directory

check-fast:
	$(Q)$(INSTALL_DEPS)
	$(Q)$(SUBMAKE) tests
	$(Q)BUILD=$(BUILD) tests/run.sh

check:
	$(Q)$(INSTALL_DEPS)
	$(Q)$(SUBMAKE) tests
	$(Q)BUILD=$(BUILD) tests/run.sh
	$(Q)$(SUBMAKE) SANITIZE=address,undefined tests
	$(Q)BUILD=build/san BACH_SANITIZED=1 tests/run.sh

fuzz:
	$(Q)$(INSTALL_DEPS)
	$(Q)$(SUBMAKE) $(PROGRAMS)
	$(Q)FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh long

bench:
	$(Q)$(INSTALL_DEPS)
	$(Q)$(SUBMAKE) $(PROGRAMS) $(BENCH_BIN) $(BUILD)/libbach.so
	$(Q)rc=0; BUILD=$(BUILD) bench/run.sh || rc=1; \
		echo; BUILD=$(BUILD) bench/diff.sh || rc=1; \
		echo; BUILD=$(BUILD) bench/decode.sh || rc=1; \
		echo; BUILD=$(BUILD) bench/analysis.sh || rc=1; \
		echo; BUILD=$(BUILD) PYTHON=$(PYTHON) bench/dist.sh || rc=1; \
		echo; BUILD=$(BUILD) bench/markers.sh || rc=1; \
		echo; BUILD=$(BUILD) bench/timing.sh || rc=1; \
		echo; BUILD=$(BUILD) bench/compress.sh || rc=1; \
		echo; BUILD=$(BUILD) bench/soak.sh || rc=1; exit $$rc

soak:
	$(Q)$(INSTALL_DEPS)
	$(Q)$(SUBMAKE) $(PROGRAMS)
	$(Q)BUILD=$(BUILD) bench/fault_soak.sh

demo:
	$(Q)$(INSTALL_DEPS)
	$(Q)$(SUBMAKE) $(PROGRAMS)
	$(Q)BUILD=$(BUILD) scripts/demo.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build demo-capture

.PHONY: all deps tests check check-fast fuzz bench soak demo format clean FORCE
.DELETE_ON_ERROR:

# the gateware: make fpga-lint, fpga-sim, fpga-synth
-include fpga/fpga.mk

# ---- libbach.so, its public headers and bach.pc ---------------------------
# The library as other programs link it: lib/'s objects built again as
# position-independent code into one shared object that exports only the
# public API (lib/libbach.map, checked by tests/cli/libbach.sh), plus the
# headers include/bach/bach.h includes and a pkg-config file (installed by
# install-lib). bach and bachd keep linking the static libbach.a.
SONAME = libbach.so.0
# include/bach holds the public headers and nothing else
PUBLIC_HEADERS = $(wildcard include/bach/*.h)
PIC_OBJ = $(LIB_SRC:%.c=$(BUILD)/pic/%.o)
SHLIB = $(BUILD)/$(SONAME)

all: $(BUILD)/libbach.so
tests: $(BUILD)/libbach.so

ifndef NO_DEPS
$(PIC_OBJ): | $(DEPS_STAMP)
endif

$(BUILD)/pic/%.o: %.c $(BUILD)/.flags
	$(Q)mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) -fPIC -c -o $@ $<

$(SHLIB): $(PIC_OBJ) lib/libbach.map
	$(QUIET_LINK)$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=lib/libbach.map -Wl,--no-undefined \
		-o $@ $(PIC_OBJ) $(LIBS)

$(BUILD)/libbach.so: $(SHLIB)
	$(Q)ln -sf $(SONAME) $@

# ---- make bench-python, make bench-seek ----------------------------------
# the Python module (python/bach): reading a .byu.gz into numpy against
# bach stat on the same file
bench-python: $(PROGRAMS) $(BUILD)/libbach.so
	$(Q)BUILD=$(BUILD) PYTHON=$(PYTHON) bench/python.sh

.PHONY: bench-python

# seek to record 10^9 of a capture and dump 10 records, .byu.gz and .byu.zst
# segments (about 4 GiB of captures kept in build/bench-seek between runs)
bench-seek: $(PROGRAMS) $(BUILD)/bench/seek10
	$(Q)BUILD=$(BUILD) bench/seek.sh

.PHONY: bench-seek

# the compressors and record-aware transforms on a real program's trace
# (valgrind lackey), bach gen and a decoded bus capture (traces kept in
# build/bench-data/compress between runs)
bench-compress: $(PROGRAMS) $(BUILD)/bench/transform
	$(Q)BUILD=$(BUILD) bench/compress.sh

.PHONY: bench-compress

# ---- manual pages (docs/man/*.scd) ---------------------------------------
# make man: scdoc turns docs/man/NAME.SECTION.scd into $(BUILD)/man/NAME.SECTION
# (install-man puts them in $(MANDIR)/manSECTION).
MAN_SRC = $(wildcard docs/man/*.scd)
MAN_PAGES = $(MAN_SRC:docs/man/%.scd=$(BUILD)/man/%)

man: $(MAN_PAGES)

ifndef NO_DEPS
$(MAN_PAGES): | $(DEPS_STAMP)
endif

$(BUILD)/man/%: docs/man/%.scd
	$(Q)mkdir -p $(dir $@)
	$(if $(Q),@echo '   SCDOC ' $@;)scdoc < $< > $@

.PHONY: man

# ---- make install ---------------------------------------------------------
# Everything `make install` installs, one part per target (each can be run
# alone; all honour DESTDIR, PREFIX and the directories at the top):
#   install-programs    bach and bachd in $(BINDIR); bach-acquire, bach-draw
#                       and bach-failure in $(LIBEXECDIR)
#   install-systemd     bachd.service, bachd@.service, bach-failure@.service
#                       (paths substituted), sysusers, tmpfiles, udev rules,
#                       $(SYSCONFDIR)/bach/bachd.conf.example
#   install-lib         libbach.so.0 and its links, the public headers,
#                       bach.pc (made here, for this install's directories)
#   install-python      the Python module, and its _config.py naming where
#                       libbach.so.0 went
#   install-man         bach(1), bachd(8), bachd.conf(5) in $(MANDIR)
#   install-completion  tools/completion/bach.bash as bach and as bachd
INSTALL_PARTS = install-programs install-systemd install-lib install-python \
		install-man install-completion

install: $(INSTALL_PARTS)

install-programs: $(PROGRAMS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR)
	install -m 755 $(BUILD)/bin/bach $(BUILD)/bin/bachd $(DESTDIR)$(BINDIR)/
	install -m 755 $(ACQUIRE) $(DRAW) $(DESTDIR)$(LIBEXECDIR)/
	install -m 755 systemd/bach-failure $(DESTDIR)$(LIBEXECDIR)/bach-failure

install-systemd:
	install -d $(DESTDIR)$(SYSTEMDUNITDIR) \
		$(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR) \
		$(DESTDIR)$(UDEVRULESDIR) $(DESTDIR)$(SYSCONFDIR)/bach
	for u in bachd.service bachd@.service bach-failure@.service; do \
		sed -e 's|@bindir@|$(BINDIR)|g' -e 's|@sysconfdir@|$(SYSCONFDIR)|g' \
			-e 's|@libexecdir@|$(LIBEXECDIR)|g' \
			systemd/$$u > $(DESTDIR)$(SYSTEMDUNITDIR)/$$u && \
		chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/$$u || exit 1; \
	done
	install -m 644 systemd/bach.sysusers $(DESTDIR)$(SYSUSERSDIR)/bach.conf
	install -m 644 systemd/bach.tmpfiles $(DESTDIR)$(TMPFILESDIR)/bach.conf
	install -m 644 systemd/60-bach.rules $(DESTDIR)$(UDEVRULESDIR)/60-bach.rules
	install -m 644 systemd/bachd.conf.example \
		$(DESTDIR)$(SYSCONFDIR)/bach/bachd.conf.example

install-lib: $(BUILD)/libbach.so
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/bach \
		$(DESTDIR)$(PKGCONFIGDIR)
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/libbach.so.$(VERSION)
	ln -sf libbach.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libbach.so
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCLUDEDIR)/bach/
	sed -e 's|@prefix@|$(PREFIX)|' -e 's|@libdir@|$(LIBDIR)|' \
		-e 's|@includedir@|$(INCLUDEDIR)|' -e 's|@version@|$(VERSION)|' \
		lib/bach.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/bach.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/bach.pc
	$(if $(DESTDIR),,-ldconfig 2>/dev/null)

install-python: install-lib
	install -d $(DESTDIR)$(PYTHONDIR)/bach
	install -m 644 python/bach/__init__.py python/bach/_lib.py python/bach/plot.py \
		python/bach/dist.py \
		$(DESTDIR)$(PYTHONDIR)/bach/
	echo 'LIBRARY = "$(LIBDIR)/$(SONAME)"' > $(DESTDIR)$(PYTHONDIR)/bach/_config.py

install-man: $(MAN_PAGES)
	for p in $(MAN_PAGES); do \
		s=$${p##*.}; \
		install -d $(DESTDIR)$(MANDIR)/man$$s && \
		install -m 644 $$p $(DESTDIR)$(MANDIR)/man$$s/ || exit 1; \
	done

install-completion:
	install -d $(DESTDIR)$(BASHCOMPDIR)
	install -m 644 tools/completion/bach.bash $(DESTDIR)$(BASHCOMPDIR)/bach
	install -m 644 tools/completion/bach.bash $(DESTDIR)$(BASHCOMPDIR)/bachd

.PHONY: install $(INSTALL_PARTS)

# What each object and binary built with -MMD includes (its .d file), so
# that a changed header rebuilds everything that includes it: the
# programs' objects, the shared library's, the unit tests, the test
# helpers, the benchmarks and the gateware's test bench programs.
-include $(LIB_OBJ:.o=.d) $(BACH_OBJ:.o=.d) $(CORE_OBJ:.o=.d) \
	 $(BACHD_OBJ:.o=.d) $(PIC_OBJ:.o=.d) $(TEST_BIN:=.d) \
	 $(addsuffix .d,$(filter-out %.so,$(HELPER_BIN))) $(BENCH_BIN:=.d) \
	 $(FPGA_OUT)/tbgen.d $(FPGA_OUT)/check_stream.d
