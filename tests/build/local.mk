# The foundation: the shim is the patched VM under the system's soname.
BUILD_TESTS = tests/build/exports.test tests/build/interpose.test \
	tests/build/invisible.test tests/build/get-source.test \
	tests/build/manpages.test tests/build/inert.test \
	tests/build/patches.test tests/build/srclink.test
TESTS += $(BUILD_TESTS)
# The cross builds under qemu, one test a target (minutes each), with
# their shared body: Makefile.am puts them first in TESTS, so that make
# -j2 check starts them first and runs the short tests beside them.
CROSS_TESTS = tests/build/cross-arm64.test tests/build/cross-i386.test \
	tests/build/cross-armhf.test tests/build/package-cross.test
EXTRA_DIST += $(BUILD_TESTS) $(CROSS_TESTS) tests/build/cross.sh \
	tests/build/hello.lua tests/build/whoami.lua \
	tests/build/globals.lua tests/build/minicheck/check.h
check_SCRIPTS += preload/libljmprof.so $(LJ_PRODUCTS)
# patches.test works in the build folder and keeps a failed tree there.
CLEAN_CLI += clean-port-test
clean-port-test:
	-rm -rf tests/build/patches.d
PHONY_CLI += clean-port-test
