# liburing-rs build: the Rust core becomes liburing.a, which is then linked
# into liburing.so.2 and liburing-ffi.so.2 with liburing's version nodes.
#
#   make                 build libraries, headers, .pc files and examples into build/
#   make demo            the above, then copy a file with examples/link-cp
#   make test            every test: Rust, C (shared and static), ABI checks
#   make bench           benchmarks against Debian's liburing (benches/results.md)
#   make install         install to $(DESTDIR)$(PREFIX)

VERSION    := 2.15
SOVERSION  := 2
PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
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
# liburing-rs's own exports, in their own version node URING_RS_1.0.
RS_SYMS := liburing_rs_ring_engine

SO      := $(B)/lib/liburing.so.$(VERSION)
FFI_SO  := $(B)/lib/liburing-ffi.so.$(VERSION)
A       := $(B)/lib/liburing.a
FFI_A   := $(B)/lib/liburing-ffi.a
PCS     := $(B)/lib/pkgconfig/liburing.pc $(B)/lib/pkgconfig/liburing-ffi.pc
EXAMPLES := $(patsubst examples/%.c,$(B)/examples/%,$(wildcard examples/*.c))
HEADERS := $(shell find include -name '*.h')

LINK_SO = $(CC) -shared -Wl,--whole-archive $(RUSTLIB) -Wl,--no-whole-archive \
	-Wl,--gc-sections -Wl,-z,defs -Wl,-z,now -Wl,-O1

.PHONY: all lib examples demo test fuzz bench bench-quick install uninstall clean FORCE

all: lib examples

lib: $(SO) $(FFI_SO) $(A) $(FFI_A) $(PCS)

# cargo decides itself whether anything changed.
$(RUSTLIB): FORCE
	$(CARGO) build --release

$(B)/liburing.map: $(ABI) scripts/gen-map.sh Makefile
	@mkdir -p $(B)
	URING_RS_SYMS="$(RS_SYMS)" sh scripts/gen-map.sh $(ABI) liburing.so.2 $(EXTRA_NODE) $(EXTRA_SYMS) > $@

$(B)/liburing-ffi.map: $(ABI) scripts/gen-map.sh Makefile
	@mkdir -p $(B)
	URING_RS_SYMS="$(RS_SYMS)" sh scripts/gen-map.sh $(ABI) liburing-ffi.so.2 $(EXTRA_NODE) $(EXTRA_SYMS) > $@

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

# The static libraries hold one relocatable object each: the Rust archive
# (our code plus the parts of core it uses) linked with --gc-sections from
# the exported symbols, then every other global made local. Users get no
# stray Rust symbols to collide with, and nothing that needs an unwinder.
$(B)/liburing.syms: $(ABI) Makefile
	@mkdir -p $(B)
	awk -F '\t' '$$3 == "liburing.so.2" { print $$1 }' $(ABI) > $@
	for s in $(EXTRA_SYMS) $(RS_SYMS); do echo $$s; done >> $@

$(B)/liburing-ffi.syms: $(ABI) Makefile
	@mkdir -p $(B)
	awk -F '\t' '$$3 == "liburing-ffi.so.2" { print $$1 }' $(ABI) > $@
	for s in $(EXTRA_SYMS) $(RS_SYMS); do echo $$s; done >> $@

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

examples: $(EXAMPLES)

$(B)/examples/%: examples/%.c $(SO) $(HEADERS)
	@mkdir -p $(B)/examples
	$(CC) $(CFLAGS) -Wall -Wextra -Iinclude $< -o $@ -L$(B)/lib -luring -Wl,-rpath,$(CURDIR)/$(B)/lib

demo: all
	sh scripts/demo.sh $(B)

test: all
	sh scripts/test.sh

# Differential fuzzing of the userspace engine against the kernel:
# `make fuzz N=5000 SEED=1` (make test runs 150 programs from seed 1).
N ?= 1000
SEED ?= 1
fuzz: lib
	FUZZ_N=$(N) FUZZ_SEED=$(SEED) cargo test --release --test engine_differential -- --nocapture

# Benchmarks against Debian's liburing (not part of `make test`).
bench: lib
	sh benches/run.sh

bench-quick: lib
	BENCH_QUICK=1 sh benches/run.sh

install: lib
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(INCLUDEDIR)/liburing/io_uring
	install -m 644 include/liburing.h $(DESTDIR)$(INCLUDEDIR)/liburing.h
	install -m 644 include/liburing/*.h $(DESTDIR)$(INCLUDEDIR)/liburing/
	install -m 644 include/liburing/io_uring/*.h $(DESTDIR)$(INCLUDEDIR)/liburing/io_uring/
	install -m 755 $(SO) $(FFI_SO) $(DESTDIR)$(LIBDIR)/
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

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/liburing.so* $(DESTDIR)$(LIBDIR)/liburing-ffi.so* \
	      $(DESTDIR)$(LIBDIR)/liburing.a $(DESTDIR)$(LIBDIR)/liburing-ffi.a \
	      $(DESTDIR)$(PKGCONFIGDIR)/liburing.pc $(DESTDIR)$(PKGCONFIGDIR)/liburing-ffi.pc \
	      $(DESTDIR)$(INCLUDEDIR)/liburing.h
	rm -rf $(DESTDIR)$(INCLUDEDIR)/liburing

clean:
	rm -rf $(B)
	$(CARGO) clean
