# The foundation: the shim is the patched VM under the system's soname.
BUILD_TESTS = tests/build/exports.test tests/build/interpose.test \
	tests/build/invisible.test tests/build/get-source.test \
	tests/build/manpages.test tests/build/inert.test \
	tests/build/patches.test tests/build/srclink.test \
	tests/build/cross.test
TESTS += $(BUILD_TESTS)
EXTRA_DIST += $(BUILD_TESTS) tests/build/hello.lua tests/build/whoami.lua \
	tests/build/globals.lua tests/build/minicheck/check.h \
	tests/build/hostcc32-qemu
check_SCRIPTS += preload/libljmprof.so $(LJ_PRODUCTS)
# patches.test works in the build folder and keeps a failed tree there.
CLEAN_CLI += clean-port-test
clean-port-test:
	-rm -rf tests/build/patches.d
PHONY_CLI += clean-port-test
