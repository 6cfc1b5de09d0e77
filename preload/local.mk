# libljmprof.so: the patched VM plus the shim, under the system library's
# soname, exporting exactly the C API that LuaJIT itself exports.

# The shim's own logic that needs no VM: the lifecycle decisions, a pure
# function. An archive of its own, position-independent and hidden like
# the core (common/), so that the unit tests link it without the VM.
noinst_LIBRARIES += preload/libshimcore.a
preload_libshimcore_a_SOURCES = preload/lifecycle.c preload/lifecycle.h
preload_libshimcore_a_CFLAGS = $(AM_CFLAGS) -fPIC -fvisibility=hidden

# The entry points (shim.c) and the rest of the shim, one job a file
# (preload/vm.h lists them), linked into the VM.
LJM_SHIM_SOURCES = preload/shim.c preload/registry.c \
	preload/registry.h preload/vm.h preload/process.c \
	preload/actions.c preload/idle.c preload/ticker.c preload/toggle.c \
	preload/stopsig.c preload/ending.c preload/fork.c
noinst_LIBRARIES += preload/libshim.a
preload_libshim_a_SOURCES = $(LJM_SHIM_SOURCES)
preload_libshim_a_CPPFLAGS = $(AM_CPPFLAGS) $(LJM_DEFS) \
	$(LJM_CORE_CPPFLAGS) -I$(top_builddir)/$(LJ_TREE)/src
preload_libshim_a_CFLAGS = $(AM_CFLAGS) -fPIC -fvisibility=hidden
$(preload_libshim_a_OBJECTS): $(LJ_TREE)/.prepared

# The same for OpenResty's flavour, against its tree's headers, naming
# its flavour and its installed folder.
if HAVE_LUAJIT2
noinst_LIBRARIES += luajit2/preload/libshim.a
luajit2_preload_libshim_a_SOURCES = $(LJM_SHIM_SOURCES)
luajit2_preload_libshim_a_CPPFLAGS = $(AM_CPPFLAGS) \
	-DLJM_FLAVOUR='"luajit2"' -DLJM_MULTIARCH='"$(MULTIARCH)"' \
	-DLJM_LIBDIR='"$(libdir)/ljmprof/luajit2"' \
	$(LJM_CORE_CPPFLAGS) -I$(top_builddir)/$(LJ2_TREE)/src
luajit2_preload_libshim_a_CFLAGS = $(AM_CFLAGS) -fPIC -fvisibility=hidden
$(luajit2_preload_libshim_a_OBJECTS): $(LJ2_TREE)/.prepared
endif

# The export list: every default-visibility global of the VM's objects,
# which is what the system library exports, minus our own API (and the
# ODR indicators ASan adds for global variables such as luajit2's
# hash_sparse, in a sanitizer build), plus the deliberate extras of the
# shim (preload/shim.c), _exit, _Exit and the exec family, so that a
# program that ends or replaces its image with them still finishes its
# streams (tests/build/exports.test allows exactly these).
LJM_EXTRA_EXPORTS = _Exit _exit execl execle execlp execv execve execveat \
	execvp execvpe fexecve
# (Both flavours: the tree is that of the target's folder, luajit for
# preload/, luajit2/luajit for luajit2/preload/.)
ljm_tree_of = $(patsubst %preload,%luajit,$(@D))
preload/exports.ver luajit2/preload/exports.ver: $(srcdir)/preload/local.mk
	$(AM_V_GEN){ echo '{ global:'; \
	  { $(READELF) -sW `cat $(ljm_tree_of)/.dynobjs` | $(AWK) '$$5 == "GLOBAL" && \
	    $$6 == "DEFAULT" && $$7 != "UND" && $$8 !~ /^(ljmprof_|__odr_asan)/ \
	    { print $$8 }'; \
	    for s in $(LJM_EXTRA_EXPORTS); do echo $$s; done; } | \
	    LC_ALL=C sort -u | sed 's/.*/  &;/'; \
	  echo 'local: *; };'; } >$@.tmp && mv $@.tmp $@
preload/exports.ver: $(LJ_TREE)/.built
luajit2/preload/exports.ver: $(LJ2_TREE)/.built

preload/libljmprof.so luajit2/preload/libljmprof.so: preload/libshimcore.a \
	  common/libljmcore.a
	$(AM_V_CCLD)$(CC) $(CFLAGS) $(LDFLAGS) -shared -fPIC -o $@ \
	  -Wl,-soname,libluajit-5.1.so.2 -Wl,-Bsymbolic \
	  -Wl,--version-script=$(@D)/exports.ver -Wl,-z,defs \
	  -Wl,--whole-archive $(@D)/libshim.a -Wl,--no-whole-archive \
	  preload/libshimcore.a common/libljmcore.a \
	  `cat $(ljm_tree_of)/.dynobjs` $(LJ_LIBS) $(LIBS)
preload/libljmprof.so: preload/libshim.a preload/exports.ver $(LJ_TREE)/.built
luajit2/preload/libljmprof.so: luajit2/preload/libshim.a \
	  luajit2/preload/exports.ver $(LJ2_TREE)/.built

LJM_SHIMS = preload/libljmprof.so
if HAVE_LUAJIT2
LJM_SHIMS += luajit2/preload/libljmprof.so
endif
all-local: $(LJM_SHIMS)
CLEANFILES += $(LJM_SHIMS) $(LJM_SHIMS:libljmprof.so=exports.ver)
