# Tests: each folder adds its own; the environment tells every test where
# the programs under test are. Point LJMPROF_SHIM, LJMPROF_LUAJIT and
# LJMPROF_CLI elsewhere to test an installed copy.

LJMPROF_SHIM ?= $(abs_top_builddir)/preload/libljmprof.so
LJMPROF_LUAJIT ?= $(abs_top_builddir)/src/luajit
LJMPROF_CLI ?= $(abs_top_builddir)/tools/ljmprof
# The shim and frontend of OpenResty's flavour (nginx's Lua module needs
# it): the main ones when they are of that flavour, else those in
# luajit2/, else none (the tests that need them skip).
if HAVE_LUAJIT2
LJ2_BUILT = $(abs_top_builddir)/luajit2
endif
LJMPROF_SHIM_LUAJIT2 ?= $(if $(filter luajit2,$(LUAJIT_FLAVOUR)),$(LJMPROF_SHIM),$(if $(LJ2_BUILT),$(LJ2_BUILT)/preload/libljmprof.so))
LJMPROF_LUAJIT_LUAJIT2 ?= $(if $(filter luajit2,$(LUAJIT_FLAVOUR)),$(LJMPROF_LUAJIT),$(if $(LJ2_BUILT),$(LJ2_BUILT)/src/luajit))
# Where setup.sh unpacked nginx's Lua module and lua-resty-core, never
# installed (they would replace Debian's LuaJIT by OpenResty's).
LJMPROF_NGINX_LUA ?= $(abs_top_builddir)/nginx-lua

AM_TESTS_ENVIRONMENT = \
	top_srcdir='$(abs_top_srcdir)'; export top_srcdir; \
	top_builddir='$(abs_top_builddir)'; export top_builddir; \
	LJMPROF_SHIM='$(LJMPROF_SHIM)'; export LJMPROF_SHIM; \
	LJMPROF_LUAJIT='$(LJMPROF_LUAJIT)'; export LJMPROF_LUAJIT; \
	LJMPROF_CLI='$(LJMPROF_CLI)'; export LJMPROF_CLI; \
	LJMPROF_SHIM_LUAJIT2='$(LJMPROF_SHIM_LUAJIT2)'; export LJMPROF_SHIM_LUAJIT2; \
	LJMPROF_LUAJIT_LUAJIT2='$(LJMPROF_LUAJIT_LUAJIT2)'; export LJMPROF_LUAJIT_LUAJIT2; \
	LJMPROF_NGINX_LUA='$(LJMPROF_NGINX_LUA)'; export LJMPROF_NGINX_LUA; \
	LJMPROF_LIB='$(abs_top_builddir)/src/libluajit-5.1.so.2'; export LJMPROF_LIB; \
	SYSTEM_LUAJIT_LIB='$(SYSTEM_LUAJIT_LIB)'; export SYSTEM_LUAJIT_LIB; \
	LUAJIT_FLAVOUR='$(LUAJIT_FLAVOUR)'; export LUAJIT_FLAVOUR; \
	LUAJIT_SRC='$(LUAJIT_SRC)'; export LUAJIT_SRC; \
	LUAJIT2_SRC='$(LUAJIT2_SRC)'; export LUAJIT2_SRC; \
	LJMPROF_FUZZ_SECONDS='$(LJMPROF_FUZZ_SECONDS)'; export LJMPROF_FUZZ_SECONDS; \
	unset LJMPROF_OUT LJMPROF_VERBOSE LJMPROF_SIGNAL LD_PRELOAD;

# make check fuzzes the parser briefly; make fuzz for as long as it takes
# to find something (600 s, or LJMPROF_FUZZ_SECONDS from the command line
# or the environment).
LJMPROF_FUZZ_SECONDS ?= 10
FUZZ_LONG_SECONDS = $(if $(filter file,$(origin LJMPROF_FUZZ_SECONDS)),600,$(LJMPROF_FUZZ_SECONDS))
if HAVE_LIBFUZZER
fuzz: tests/fuzz/fuzz_parse
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	LJMPROF_FUZZ_SECONDS='$(FUZZ_LONG_SECONDS)' $(SHELL) $(srcdir)/tests/fuzz/run-fuzz
else
fuzz:
	@echo "make fuzz: no clang with libFuzzer (apt-get install clang libclang-rt-14-dev, then configure again)" >&2; exit 1
endif
PHONY_CLI += fuzz

# Shared by the shell tests.
EXTRA_DIST += tests/lib.sh

# The sanitizer build. Every test runs through tests/sanitized, which
# fails it on any ASan report from any process; lib.sh fails a test whose
# captured output holds a UBSan report. The tests preload the ASan runtime
# before the shim into programs not built with ASan
# ($$LJMPROF_SAN_PRELOAD, see lib.sh). Check's timeouts are ten times
# longer: everything runs two to ten times slower.
# UBSan findings in LuaJIT's own code are suppressed by function in
# tests/ubsan.supp, which says why for each; halt_on_error makes any
# other fatal (exit status 97). Stack traces by frame pointers: the
# default unwinder aborts on JIT-compiled frames. No leak check: hosts
# such as neovim and wrk never close their VMs, and a VM still open at
# exit is the shim's design, not a leak.
EXTRA_DIST += tests/sanitized tests/ubsan.supp
if SANITIZERS
LOG_COMPILER = $(SHELL) $(srcdir)/tests/sanitized
TEST_LOG_COMPILER = $(SHELL) $(srcdir)/tests/sanitized
AM_TESTS_ENVIRONMENT += \
	LJMPROF_SANITIZED=yes; export LJMPROF_SANITIZED; \
	LJMPROF_SAN_PRELOAD='$(SAN_PRELOAD)'; export LJMPROF_SAN_PRELOAD; \
	CK_TIMEOUT_MULTIPLIER=10; export CK_TIMEOUT_MULTIPLIER; \
	ASAN_OPTIONS='detect_leaks=0:fast_unwind_on_fatal=1'; export ASAN_OPTIONS; \
	UBSAN_OPTIONS='suppressions=$(abs_top_srcdir)/tests/ubsan.supp:halt_on_error=1:exitcode=97:print_stacktrace=1:fast_unwind_on_fatal=1'; \
	export UBSAN_OPTIONS;
endif

# A C host built against the system's LuaJIT (the way real hosts are).
if HAVE_SYSLUAJIT
check_PROGRAMS += tests/hosts/lhost
tests_hosts_lhost_SOURCES = tests/hosts/lhost.c
tests_hosts_lhost_CFLAGS = $(AM_CFLAGS) $(SYSLUAJIT_CFLAGS)
tests_hosts_lhost_LDADD = $(SYSLUAJIT_LIBS)
endif

include $(srcdir)/tests/build/local.mk
include $(srcdir)/tests/profiler/local.mk
include $(srcdir)/tests/shim/local.mk
include $(srcdir)/tests/suite/local.mk
include $(srcdir)/tests/attach/local.mk
EXTRA_DIST += tests/run-installed
