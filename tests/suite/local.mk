# LuaJIT's own test suite under the profiler (issue 11). The suite lives
# outside the tree (LJMPROF_SHARED, default SRCDIR/../shared); the test
# copies it into the build folder and builds its C modules there with
# $(CC) and $(CXX), against the patched tree's headers.

SUITE_TESTS = tests/suite/luajit-tests.test
TESTS += $(SUITE_TESTS)
EXTRA_DIST += $(SUITE_TESTS)
AM_TESTS_ENVIRONMENT += \
	CC='$(CC)'; CXX='$(CXX)'; export CC CXX; \
	LJMPROF_LUAJIT_INC='$(abs_top_builddir)/$(LJ_TREE)/src'; export LJMPROF_LUAJIT_INC;

CLEAN_CLI += clean-suite
clean-suite:
	-rm -rf tests/suite/luajit-tests.dir
PHONY_CLI += clean-suite
