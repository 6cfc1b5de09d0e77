# The patched LuaJIT: copy the given tree into the build folder, apply
# src/patches in series order, add src/*.[ch], build it with the
# distribution's options, and take its PIC objects.

LJ_TREE = luajit
# OpenResty's flavour, when configure found its tree: luajit2/ of the
# build tree holds its patched tree and the same products as the top,
# luajit2/src/libluajit-5.1.so.2, luajit2/src/luajit and
# luajit2/preload/libljmprof.so. The rules below serve both trees: the
# tree is the target's folder.
LJ2_TREE = luajit2/luajit
# The VM as a static archive, for test programs that reach its internals.
LJ_OBJS = $(LJ_TREE)/src/libluajit.a
# The PIC objects of libluajit.so: listed after the build, since the
# flavours differ (OpenResty's adds lj_str_hash and lj_init).
LJ_DYNOBJS = `cat $(LJ_TREE)/.dynobjs`
LJ_OURS = $(wildcard $(srcdir)/src/*.[ch]) $(wildcard $(srcdir)/src/patches/*)
LJ_LIBS = -lm -ldl

# Verbose LuaJIT build with V=1, quiet otherwise.
LJ_MAKE_Q = $(LJ_MAKE_Q_$(V))
LJ_MAKE_Q_ = $(LJ_MAKE_Q_$(AM_DEFAULT_VERBOSITY))
LJ_MAKE_Q_0 = Q=@ E=@echo
LJ_MAKE_Q_1 = Q= E=@:

# Re-run whenever one of our files, a patch or the series changes; the
# script updates only the files whose contents changed, and makes the
# tree afresh when the series or the set of files changed.
$(LJ_TREE)/.prepared: $(LUAJIT_SRC)/src/lj_api.c $(LJ_OURS) \
		$(srcdir)/buildtools/prepare-luajit-tree
	$(AM_V_GEN)CC='$(CC)' $(SHELL) $(srcdir)/buildtools/prepare-luajit-tree \
	  $(LUAJIT_SRC) $(srcdir)/src $(LJ_TREE) && touch $@
if HAVE_LUAJIT2
$(LJ2_TREE)/.prepared: $(LUAJIT2_SRC)/src/lj_api.c $(LJ_OURS) \
		$(srcdir)/buildtools/prepare-luajit-tree
	$(AM_V_GEN)$(MKDIR_P) luajit2 && CC='$(CC)' \
	  $(SHELL) $(srcdir)/buildtools/prepare-luajit-tree \
	  $(LUAJIT2_SRC) $(srcdir)/src $(LJ2_TREE) && touch $@
endif

# In a cross build (configure --host), LUAJIT_CROSS_MAKEFLAGS gives
# LuaJIT's make its HOST_CC, CROSS and TARGET_SYS (configure.ac).
# The distribution's build: Debian runs "make amalg PREFIX=/usr
# MULTILIB=lib/<multiarch>" in the default mixed mode, which compiles
# every object twice, the *_dyn.o ones position-independent
# (--disable-amalg: "make all", object by object). No "make clean" first:
# LuaJIT's Makefile.dep and our src/Makefile.ljmprof rebuild what a
# change touches. Only a change of the options below (the .options file)
# starts from clean, as objects do not depend on the flags.
LJ_MAKE_OPTIONS = $(LUAJIT_MAKE_TARGET) PREFIX=/usr \
	MULTILIB=$(LUAJIT_MULTILIB) LJMPROF_VERSION=$(PACKAGE_VERSION) \
	$(LJ_SAN_XCFLAGS) $(LJ_SAN_MAKEFLAGS)$(if $(LUAJIT_CROSS_MAKEFLAGS), $(LUAJIT_CROSS_MAKEFLAGS))
$(LJ_TREE)/.built $(LJ2_TREE)/.built: $(srcdir)/src/local.mk Makefile
	$(AM_V_at)echo "$(LJ_MAKE_OPTIONS)" >$(@D)/.options.new
	$(AM_V_at)if ! cmp -s $(@D)/.options.new $(@D)/.options; then \
	  $(MAKE) -C $(@D) clean $(LJ_MAKE_Q) >/dev/null; \
	fi
	$(AM_V_at)$(MAKE) -C $(@D) $(LUAJIT_MAKE_TARGET) \
	  PREFIX=/usr MULTILIB=$(LUAJIT_MULTILIB) \
	  XCFLAGS='-DLJMPROF_VERSION=\"$(PACKAGE_VERSION)\" $(LJ_SAN_XCFLAGS)' \
	  $(LJ_SAN_MAKEFLAGS) $(LUAJIT_CROSS_MAKEFLAGS) $(LJ_MAKE_Q)
	$(AM_V_at)mv $(@D)/.options.new $(@D)/.options
	$(AM_V_at)ls $(@D)/src/*_dyn.o >$(@D)/.dynobjs
	$(AM_V_at)touch $@
$(LJ_TREE)/.built: $(LJ_TREE)/.prepared
$(LJ2_TREE)/.built: $(LJ2_TREE)/.prepared

# configure --enable-sanitizers: the VM with ASan and UBSan too, with
# debug information and unstripped, so that reports and the suppressions
# (by function) see LuaJIT's function names. LUAJIT_USE_SYSMALLOC: VM
# memory comes from malloc, where ASan checks every block's bounds and
# lifetime; LuaJIT's own allocator carves blocks out of mmap'ed chunks
# that ASan knows nothing of. -O1: the amalgamation with ASan at -O2
# takes minutes to compile, twice. The build's own helpers (minilua,
# buildvm) are left unsanitized: they are not part of the VM.
if SANITIZERS
LJ_SAN_XCFLAGS = -DLUAJIT_USE_SYSMALLOC $(SAN_FLAGS)
LJ_SAN_MAKEFLAGS = CCDEBUG=-g CCOPT='-O1 -fno-omit-frame-pointer' \
	TARGET_STRIP=: LDFLAGS='$(SAN_FLAGS)' \
	HOST_XCFLAGS='-I. -fno-sanitize=all' HOST_XLDFLAGS=-fno-sanitize=all
endif

# Made by LuaJIT's make above; the empty recipe keeps make's own
# implicit rules away from them.
$(LJ_OBJS) $(LJ_TREE)/src/luajit.o $(LJ_TREE)/src/libluajit.so: $(LJ_TREE)/.built
	@:
$(LJ2_TREE)/src/luajit.o $(LJ2_TREE)/src/libluajit.so: $(LJ2_TREE)/.built
	@:

# The standalone patched library, for LD_LIBRARY_PATH users and the tests.
src/libluajit-5.1.so.2: $(LJ_TREE)/src/libluajit.so
	$(AM_V_GEN)$(MKDIR_P) src && cp $(LJ_TREE)/src/libluajit.so $@

# A dynamically linked frontend: Debian's /usr/bin/luajit links the VM
# statically, so no preloaded library can reach it. $ORIGIN finds the
# patched library beside it, installed or in the build tree.
src/luajit: $(LJ_TREE)/src/luajit.o src/libluajit-5.1.so.2
	$(AM_V_CCLD)$(CC) $(CFLAGS) $(LDFLAGS) -Wl,-E -Wl,-rpath,'$$ORIGIN' \
	  -o $@ $(LJ_TREE)/src/luajit.o src/libluajit-5.1.so.2 $(LJ_LIBS)

LJ_PRODUCTS = src/libluajit-5.1.so.2 src/luajit
if HAVE_LUAJIT2
luajit2/src/libluajit-5.1.so.2: $(LJ2_TREE)/src/libluajit.so
	$(AM_V_GEN)$(MKDIR_P) luajit2/src && cp $(LJ2_TREE)/src/libluajit.so $@
luajit2/src/luajit: $(LJ2_TREE)/src/luajit.o luajit2/src/libluajit-5.1.so.2
	$(AM_V_CCLD)$(CC) $(CFLAGS) $(LDFLAGS) -Wl,-E -Wl,-rpath,'$$ORIGIN' \
	  -o $@ $(LJ2_TREE)/src/luajit.o luajit2/src/libluajit-5.1.so.2 $(LJ_LIBS)
LJ_PRODUCTS += luajit2/src/libluajit-5.1.so.2 luajit2/src/luajit
endif
all-local: $(LJ_PRODUCTS)

clean-local: clean-luajit
clean-luajit:
	-rm -rf $(LJ_TREE) $(LJ_TREE).new $(LJ_PRODUCTS) luajit2
.PHONY: clean-luajit

EXTRA_DIST += src/ljmprof.h src/lj_memprof_format.h src/patches \
	buildtools/prepare-luajit-tree buildtools/get-luajit-source \
	buildtools/get-nginx-lua buildtools/hostcc32-qemu \
	buildtools/get-target-libs buildtools/cross-package
