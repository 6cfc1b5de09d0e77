# Tests of the in-VM profiler (Check and end-to-end through the Lua API).
# Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.

# The patched VM's PIC objects, linked straight into the test: it reaches
# the public API and, through the tree's headers, the internals.
PROF_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/$(LJ_TREE)/src \
	-I$(top_srcdir)/src -I$(top_srcdir)/tests/profiler \
	$(MP_STREAM_CPPFLAGS)

check_PROGRAMS += tests/profiler/check_memprof tests/profiler/mpcheck \
	tests/profiler/cmod.so tests/profiler/smod.so tests/profiler/amod.so
tests_profiler_check_memprof_SOURCES = tests/profiler/check_memprof.c \
	tests/profiler/mpread.c tests/profiler/mpread.h
tests_profiler_check_memprof_CPPFLAGS = $(PROF_CPPFLAGS)
tests_profiler_check_memprof_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
# -E: the C module loaded by the tests binds to this program's lua_*.
tests_profiler_check_memprof_LDFLAGS = -Wl,-E -Wl,--wrap=syscall -pthread
tests_profiler_check_memprof_LDADD = $(LJ_OBJS) tools/libmpstream.a \
	$(CHECK_LIBS) $(LJ_LIBS)
$(tests_profiler_check_memprof_OBJECTS): $(LJ_TREE)/.built

# Reads a stream, checks it, prints counts (for the shell tests).
tests_profiler_mpcheck_SOURCES = tests/profiler/mpcheck.c \
	tests/profiler/mpread.c tests/profiler/mpread.h
tests_profiler_mpcheck_CPPFLAGS = $(PROF_CPPFLAGS)
tests_profiler_mpcheck_LDADD = tools/libmpstream.a

# A C module that the tests require while profiling: stripped, with a GNU
# hash table only (libc, found at start, has a SysV one too).
tests_profiler_cmod_so_SOURCES = tests/profiler/cmod.c
tests_profiler_cmod_so_CPPFLAGS = $(PROF_CPPFLAGS)
tests_profiler_cmod_so_CFLAGS = $(AM_CFLAGS) -fPIC
tests_profiler_cmod_so_LDFLAGS = -shared -s -Wl,--hash-style=gnu
$(tests_profiler_cmod_so_OBJECTS): $(LJ_TREE)/.built

# A C module with a static Lua function, unstripped, with a build ID:
# tests/shim/cnames.test strips a copy and makes its debug file.
tests_profiler_smod_so_SOURCES = tests/profiler/smod.c
tests_profiler_smod_so_CPPFLAGS = $(PROF_CPPFLAGS)
tests_profiler_smod_so_CFLAGS = $(AM_CFLAGS) -fPIC -fno-toplevel-reorder
tests_profiler_smod_so_LDFLAGS = -shared -Wl,--build-id
$(tests_profiler_smod_so_OBJECTS): $(LJ_TREE)/.built

# A C module that allocates through the pair lua_getallocf gives it:
# tests/shim/modalloc.test samples its bytes.
tests_profiler_amod_so_SOURCES = tests/profiler/amod.c
tests_profiler_amod_so_CPPFLAGS = $(PROF_CPPFLAGS)
tests_profiler_amod_so_CFLAGS = $(AM_CFLAGS) -fPIC
tests_profiler_amod_so_LDFLAGS = -shared
$(tests_profiler_amod_so_OBJECTS): $(LJ_TREE)/.built

PROFILER_TESTS = tests/profiler/luaapi.test tests/profiler/unchanged.test \
	tests/profiler/traceleaf.test
TESTS += tests/profiler/check_memprof $(PROFILER_TESTS)
EXTRA_DIST += $(PROFILER_TESTS) $(wildcard $(srcdir)/tests/profiler/progs/*.lua) \
	tests/profiler/traceleaf.lua
