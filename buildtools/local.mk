# buildtools/: programs and scripts that only the build runs.
# Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.

# envdoc prints the core's environment table as roff for the man pages
# (doc/local.mk).
noinst_PROGRAMS = buildtools/envdoc
buildtools_envdoc_SOURCES = buildtools/envdoc.c
buildtools_envdoc_CPPFLAGS = $(AM_CPPFLAGS) $(LJM_CORE_CPPFLAGS)
buildtools_envdoc_LDADD = common/libljmcore.a
