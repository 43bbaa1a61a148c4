# liburing-rs build: the Rust core becomes liburing.a, which is then linked
# into liburing.so.2 and liburing-ffi.so.2 with liburing's version nodes.
#
#   make                 build libraries, headers, .pc files, uring-info, uring-run and examples into build/
#   make demo            the above, then copy a file with examples/link-cp
#   make test            every test: Rust, C (shared and static), ABI checks,
#                        and the C tests on older kernels under qemu
#   make test-kernels    only the older-kernel run; updates docs/compat/kernels.tsv
#   make bench           benchmarks against Debian's liburing (benches/results.md)
#   make install         install to $(DESTDIR)$(PREFIX), manual pages to $(mandir)
#   make install-man     only the manual pages (make uninstall-man removes them)

VERSION    := 2.15
SOVERSION  := 2
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
mandir     ?= $(PREFIX)/share/man
DESTDIR    ?=

CARGO  ?= cargo
CC     ?= cc
AR     ?= ar
LD     ?= ld
OBJCOPY ?= objcopy
CFLAGS ?= -O2 -g

B       := build
RUSTLIB := target/release/liburing.a
ABI     := abi/liburing-2.15-symbols.tsv
# liburing's own tests call these internals; the static library has them
# anyway, the shared one exports them beside the table's symbols.
EXTRA_NODE := LIBURING_2.15
EXTRA_SYMS := __io_uring_queue_init_params io_uring_unmap_rings
# The project's own exports (version node URING_RS_1.0).
OWN     := abi/liburing-rs-symbols.txt
OWN_SYMS := $(shell sed -e 's/\#.*//' -e '/^[[:space:]]*$$/d' $(OWN))

SO      := $(B)/lib/liburing.so.$(VERSION)
FFI_SO  := $(B)/lib/liburing-ffi.so.$(VERSION)
A       := $(B)/lib/liburing.a
FFI_A   := $(B)/lib/liburing-ffi.a
# The diagnostics (LIBURING_RS_TRACE/CHECK), loaded by the libraries on demand.
DIAG_SO := $(B)/lib/liburing-rs-diag.so.$(VERSION)
# syscall(3) for uring-run to preload: the io_uring calls go to the engine
# without a seccomp trap (src/preload-syscall.c).
SYSCALL_SO := $(B)/lib/liburing-rs-syscall.so.$(VERSION)
PCS     := $(B)/lib/pkgconfig/liburing.pc $(B)/lib/pkgconfig/liburing-ffi.pc
INFO    := $(B)/bin/uring-info
RUN     := $(B)/bin/uring-run
EXAMPLES := $(patsubst examples/%.c,$(B)/examples/%,$(wildcard examples/*.c))
HEADERS := $(shell find include -name '*.h')
# Every page and .so alias under man/, whoever added it.
MANPAGES := $(wildcard man/man[1-9]/*.[1-9])

LINK_SO = $(CC) -shared -Wl,--whole-archive $(RUSTLIB) -Wl,--no-whole-archive \
	-Wl,--gc-sections -Wl,-z,defs -Wl,-z,now -Wl,-O1

.PHONY: all lib bin examples demo test test-kernels fuzz load bench bench-quick bench-programs install uninstall install-man uninstall-man clean FORCE

all: lib bin examples

lib: $(SO) $(FFI_SO) $(A) $(FFI_A) $(DIAG_SO) $(SYSCALL_SO) $(PCS)

# cargo decides itself whether anything changed.
$(RUSTLIB): FORCE
	$(CARGO) build --release

$(B)/liburing.map: $(ABI) $(OWN) scripts/gen-map.sh
	@mkdir -p $(B)
	sh scripts/gen-map.sh $(ABI) liburing.so.2 $(OWN) $(EXTRA_NODE) $(EXTRA_SYMS) > $@

$(B)/liburing-ffi.map: $(ABI) $(OWN) scripts/gen-map.sh
	@mkdir -p $(B)
	sh scripts/gen-map.sh $(ABI) liburing-ffi.so.2 $(OWN) $(EXTRA_NODE) $(EXTRA_SYMS) > $@

$(B)/ffi.o: src/ffi.c $(HEADERS)
	@mkdir -p $(B)
	$(CC) $(CFLAGS) -fPIC -ffunction-sections -fdata-sections -Wall -Wextra -Werror -Iinclude -c $< -o $@

$(SO): $(RUSTLIB) $(B)/liburing.map
	@mkdir -p $(B)/lib
	$(LINK_SO) -Wl,--version-script=$(B)/liburing.map -Wl,-soname,liburing.so.$(SOVERSION) -o $@
	ln -sf liburing.so.$(VERSION) $(B)/lib/liburing.so.$(SOVERSION)
	ln -sf liburing.so.$(SOVERSION) $(B)/lib/liburing.so

$(FFI_SO): $(RUSTLIB) $(B)/ffi.o $(B)/liburing-ffi.map
	@mkdir -p $(B)/lib
	$(LINK_SO) $(B)/ffi.o -Wl,--version-script=$(B)/liburing-ffi.map -Wl,-soname,liburing-ffi.so.$(SOVERSION) -o $@
	ln -sf liburing-ffi.so.$(VERSION) $(B)/lib/liburing-ffi.so.$(SOVERSION)
	ln -sf liburing-ffi.so.$(SOVERSION) $(B)/lib/liburing-ffi.so

# Only the diagnostics' entry table is global: --gc-sections keeps just what
# it reaches, and the libraries above, which never name it, none of it.
$(B)/liburing-rs-diag.map:
	@mkdir -p $(B)
	printf 'URING_RS_1.0 {\n\tglobal:\n\t\tliburing_rs_diag_hooks;\n\tlocal:\n\t\t*;\n};\n' > $@

$(DIAG_SO): $(RUSTLIB) $(B)/liburing-rs-diag.map
	@mkdir -p $(B)/lib
	$(LINK_SO) -Wl,--version-script=$(B)/liburing-rs-diag.map -Wl,-soname,liburing-rs-diag.so.$(VERSION) -o $@

# C alone, no Rust: only `syscall` is exported, unversioned as an
# interposer of glibc's must be for every caller's version to bind to it;
# the library's entry is a weak reference the loader binds in the process.
$(B)/liburing-rs-syscall.map:
	@mkdir -p $(B)
	printf '{\n\tglobal:\n\t\tsyscall;\n\tlocal:\n\t\t*;\n};\n' > $@

$(SYSCALL_SO): src/preload-syscall.c $(B)/liburing-rs-syscall.map
	@mkdir -p $(B)/lib
	$(CC) $(CFLAGS) -fPIC -Wall -Wextra -Werror -shared $< -o $@ -Wl,-z,defs -Wl,-z,now -Wl,-O1 \
	    -Wl,--version-script=$(B)/liburing-rs-syscall.map -Wl,-soname,liburing-rs-syscall.so.$(VERSION)

# The static libraries hold one relocatable object each: the Rust archive
# (our code plus the parts of core it uses) linked with --gc-sections from
# the exported symbols, then every other global made local. Users get no
# stray Rust symbols to collide with, and nothing that needs an unwinder.
$(B)/liburing.syms: $(ABI) $(OWN)
	@mkdir -p $(B)
	awk -F '\t' '$$3 == "liburing.so.2" { print $$1 }' $(ABI) > $@
	for s in $(EXTRA_SYMS) $(OWN_SYMS); do echo $$s; done >> $@

$(B)/liburing-ffi.syms: $(ABI) $(OWN)
	@mkdir -p $(B)
	awk -F '\t' '$$3 == "liburing-ffi.so.2" { print $$1 }' $(ABI) > $@
	for s in $(EXTRA_SYMS) $(OWN_SYMS); do echo $$s; done >> $@

$(B)/liburing.o: $(RUSTLIB) $(B)/liburing.syms
	$(LD) -r -o $@.tmp --whole-archive $(RUSTLIB) --no-whole-archive --gc-sections \
	    $$(sed 's/^/-u /' $(B)/liburing.syms)
	$(OBJCOPY) --strip-unneeded --remove-section=.llvmbc --remove-section=.llvmcmd --keep-global-symbols=$(B)/liburing.syms $@.tmp $@
	rm -f $@.tmp

$(B)/liburing-ffi.o: $(RUSTLIB) $(B)/ffi.o $(B)/liburing-ffi.syms
	$(LD) -r -o $@.tmp $(B)/ffi.o --whole-archive $(RUSTLIB) --no-whole-archive --gc-sections \
	    $$(sed 's/^/-u /' $(B)/liburing-ffi.syms)
	$(OBJCOPY) --strip-unneeded --remove-section=.llvmbc --remove-section=.llvmcmd --keep-global-symbols=$(B)/liburing-ffi.syms $@.tmp $@
	rm -f $@.tmp

$(A): $(B)/liburing.o
	@mkdir -p $(B)/lib
	rm -f $@
	$(AR) rcs $@ $<

$(FFI_A): $(B)/liburing-ffi.o
	@mkdir -p $(B)/lib
	rm -f $@
	$(AR) rcs $@ $<

$(B)/lib/pkgconfig/%.pc: pkgconfig/%.pc.in
	@mkdir -p $(B)/lib/pkgconfig
	sed -e 's|@PREFIX@|$(CURDIR)/$(B)|' -e 's|@LIBDIR@|$(CURDIR)/$(B)/lib|' \
	    -e 's|@INCLUDEDIR@|$(CURDIR)/include|' -e 's|@VERSION@|$(VERSION)|' $< > $@

# uring-info is a binary of the crate; the cargo run above builds it, and
# may change it without touching the library, hence the comparison.
bin: $(INFO) $(RUN)

$(INFO): $(RUSTLIB) FORCE
	@mkdir -p $(B)/bin
	@cmp -s target/release/uring-info $@ || cp target/release/uring-info $@

$(RUN): $(RUSTLIB) FORCE
	@mkdir -p $(B)/bin
	@cmp -s target/release/uring-run $@ || cp target/release/uring-run $@

examples: $(EXAMPLES)

$(B)/examples/%: examples/%.c $(SO) $(HEADERS)
	@mkdir -p $(B)/examples
	$(CC) $(CFLAGS) -Wall -Wextra -Iinclude $< -o $@ -L$(B)/lib -luring -Wl,-rpath,$(CURDIR)/$(B)/lib

demo: all
	sh scripts/demo.sh $(B)

test: all
	sh scripts/test.sh

# Exit 77 (no qemu, or no kernel packages in reach) is a skip, not an error.
test-kernels: lib
	sh scripts/test-kernels.sh -o docs/compat/kernels.tsv; st=$$?; [ $$st -eq 0 ] || [ $$st -eq 77 ]

# Differential fuzzing of the userspace engine against the kernel:
# `make fuzz N=5000 SEED=1` (make test runs 150 programs from seed 1).
N ?= 1000
SEED ?= 1
fuzz: lib
	FUZZ_N=$(N) FUZZ_SEED=$(SEED) cargo test --release --test engine_differential -- --nocapture

# Load test of provided buffers on the userspace engine (make test runs a
# short version): a multishot-recv echo server, 1000 loopback connections,
# 1 GiB echoed and verified; prints the time, peak RSS and threads.
LOAD_CONNS ?= 1000
LOAD_MIB ?= 1024
load: lib
	$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -Iinclude -o $(B)/op-kbuf-echo-load c-tests/op-kbuf-echo-load.c \
		-L$(B)/lib -luring -Wl,-rpath,$(abspath $(B))/lib -lpthread
	LIBURING_RS_ENGINE=user LIBURING_RS_LOAD_CONNS=$(LOAD_CONNS) LIBURING_RS_LOAD_MIB=$(LOAD_MIB) $(B)/op-kbuf-echo-load

# Benchmarks against Debian's liburing (not part of `make test`).
bench: lib bin
	sh benches/run.sh

bench-quick: lib bin
	BENCH_QUICK=1 sh benches/run.sh

bench-programs: lib
	sh benches/programs.sh

install: lib bin install-man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(INCLUDEDIR)/liburing/io_uring
	install -m 644 include/liburing.h $(DESTDIR)$(INCLUDEDIR)/liburing.h
	install -m 644 include/liburing/*.h $(DESTDIR)$(INCLUDEDIR)/liburing/
	install -m 644 include/liburing/io_uring/*.h $(DESTDIR)$(INCLUDEDIR)/liburing/io_uring/
	install -m 755 $(SO) $(FFI_SO) $(DIAG_SO) $(SYSCALL_SO) $(DESTDIR)$(LIBDIR)/
	# Stripped: it is built without debug information, so a symbol table is
	# all there would be to keep (and dh_strip would detach an empty one).
	install -m 755 -s $(INFO) $(DESTDIR)$(BINDIR)/uring-info
	install -m 755 -s $(RUN) $(DESTDIR)$(BINDIR)/uring-run
	install -m 644 $(A) $(FFI_A) $(DESTDIR)$(LIBDIR)/
	ln -sf liburing.so.$(VERSION) $(DESTDIR)$(LIBDIR)/liburing.so.$(SOVERSION)
	ln -sf liburing.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/liburing.so
	ln -sf liburing-ffi.so.$(VERSION) $(DESTDIR)$(LIBDIR)/liburing-ffi.so.$(SOVERSION)
	ln -sf liburing-ffi.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/liburing-ffi.so
	for pc in liburing liburing-ffi; do \
	  sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	      -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	      pkgconfig/$$pc.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/$$pc.pc; \
	done

# Aliases are one-line .so files and are installed as they are.
install-man:
	for f in $(MANPAGES); do \
	  d=$(DESTDIR)$(mandir)/$$(basename $$(dirname $$f)); \
	  install -d $$d && install -m 644 $$f $$d/ || exit 1; \
	done

uninstall-man:
	for f in $(MANPAGES); do \
	  rm -f $(DESTDIR)$(mandir)/$$(basename $$(dirname $$f))/$$(basename $$f); \
	done

uninstall: uninstall-man
	rm -f $(DESTDIR)$(LIBDIR)/liburing.so* $(DESTDIR)$(LIBDIR)/liburing-ffi.so* \
	      $(DESTDIR)$(LIBDIR)/liburing.a $(DESTDIR)$(LIBDIR)/liburing-ffi.a \
	      $(DESTDIR)$(LIBDIR)/liburing-rs-diag.so.$(VERSION) \
	      $(DESTDIR)$(LIBDIR)/liburing-rs-syscall.so.$(VERSION) \
	      $(DESTDIR)$(PKGCONFIGDIR)/liburing.pc $(DESTDIR)$(PKGCONFIGDIR)/liburing-ffi.pc \
	      $(DESTDIR)$(INCLUDEDIR)/liburing.h $(DESTDIR)$(BINDIR)/uring-info \
	      $(DESTDIR)$(BINDIR)/uring-run
	rm -rf $(DESTDIR)$(INCLUDEDIR)/liburing

clean:
	rm -rf $(B)
	$(CARGO) clean

# Debian packages liburing-rs2 and liburing-rs-dev, with their .changes and
# .buildinfo, into build/deb/ (see debian/ and the README). -d: cargo and
# rustc come from rustup, so Debian's build-dependency check would fail.
DEB_DIR = $(B)/deb
DEB_NAME = liburing-rs_$(shell dpkg-parsechangelog -SVersion)_$(shell dpkg-architecture -qDEB_HOST_ARCH)

deb:
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_DIR)
	LIBURING_RS_DEB_DIR=$(CURDIR)/$(DEB_DIR) dpkg-buildpackage -us -uc -b -d --post-clean \
	    --buildinfo-file=$(DEB_DIR)/$(DEB_NAME).buildinfo --buildinfo-option=-u$(DEB_DIR) \
	    --changes-file=$(DEB_DIR)/$(DEB_NAME).changes --changes-option=-u$(DEB_DIR)

.PHONY: deb
