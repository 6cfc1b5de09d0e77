# common/: the core that the shim (preload/) and the CLI (`ljmprof
# record`) share: the environment table and its parsing, file names, the
# file writer, messages, ELF questions. None of it needs a VM.
# Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
#
# Built once, position-independent (the shim is a shared object) and
# hidden (the shim exports nothing of it), so that the shim, the unit
# tests, buildtools/envdoc and `ljmprof record` all link the same archive.

LJM_CORE_SOURCES = common/config.c common/ljm_config.h \
	common/outpath.c common/outpath.h common/writer.c common/writer.h \
	common/msg.c common/msg.h common/elfinfo.c common/elfinfo.h
LJM_DEFS = -DLJM_FLAVOUR='"$(LUAJIT_FLAVOUR)"' \
	-DLJM_MULTIARCH='"$(MULTIARCH)"' -DLJM_LIBDIR='"$(libdir)/ljmprof"'
LJM_CORE_CPPFLAGS = -I$(top_srcdir)/common

noinst_LIBRARIES += common/libljmcore.a
common_libljmcore_a_SOURCES = $(LJM_CORE_SOURCES)
# elfinfo.c maps and walks ELF files with the profiler's own header,
# src/lj_memprof_elf.h, which needs nothing of LuaJIT.
common_libljmcore_a_CPPFLAGS = $(AM_CPPFLAGS) $(LJM_DEFS) -I$(top_srcdir)/src
common_libljmcore_a_CFLAGS = $(AM_CFLAGS) -fPIC -fvisibility=hidden
