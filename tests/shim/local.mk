# The shim: unit tests of its core (linked directly, no preloading), and
# end-to-end tests that run real programs under LD_PRELOAD.

check_PROGRAMS += tests/shim/check_core
tests_shim_check_core_SOURCES = tests/shim/check_core.c
tests_shim_check_core_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/preload
tests_shim_check_core_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_shim_check_core_LDADD = preload/libljmcore.a $(CHECK_LIBS)
TESTS += tests/shim/check_core
