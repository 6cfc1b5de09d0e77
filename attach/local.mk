# attach/: the recorder that `ljmprof attach` loads into a running process
# (libljmprof-attach.so), and the table of the LuaJIT builds it knows.
# Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
#
# The recorder reads a VM the system's LuaJIT made, so it is compiled
# against the headers of the unpatched source tree ($(LUAJIT_SRC)), never
# the patched one (whose global_State has the profiler's fields). It
# needs no LuaJIT symbol, only the C library and the core's file writer.

#
# It is built without the sanitizers, whatever the build's CFLAGS: it
# runs inside other people's processes, which have no sanitizer runtime
# (and where one would take locks a stopped thread may hold). So it has
# rules of its own, and its own copy of the core's file writer.
LJM_REC_FILES = attach/recorder.c attach/recorder.h attach/pool.c
LJM_REC_CORE = common/outpath.c common/writer.c common/msg.c \
	common/config.c
LJM_REC_DEPS = $(LJM_REC_FILES:%=$(srcdir)/%) \
	$(LJM_REC_CORE:%=$(srcdir)/%) $(srcdir)/src/lj_memprof_format.h \
	$(srcdir)/src/lj_memprof_siteinfer.h
EXTRA_DIST += $(LJM_REC_FILES)
LJM_REC_BUILD = $(CC) $(DEFS) -I$(top_builddir) $(LJM_DEFS) \
	$(LJM_CORE_CPPFLAGS) -I$(top_srcdir)/src -I$(top_srcdir)/attach \
	$(CPPFLAGS) $(WARN_CFLAGS) $(filter-out -fsanitize=%,$(CFLAGS)) -O2 \
	-fPIC -fvisibility=hidden -shared \
	$(filter-out -fsanitize=%,$(LDFLAGS)) -Wl,-z,defs -o $@ \
	$(srcdir)/attach/recorder.c $(srcdir)/attach/pool.c \
	$(LJM_REC_CORE:%=$(srcdir)/%) -lm -lpthread

LJM_RECORDERS = attach/libljmprof-attach.so
attach/libljmprof-attach.so: $(LJM_REC_DEPS)
	@$(MKDIR_P) $(@D)
	$(AM_V_CCLD)$(LJM_REC_BUILD) -I$(LUAJIT_SRC)/src

# The same for OpenResty's flavour, against its tree, for nginx's Lua
# module and the other hosts of luajit2.
if HAVE_LUAJIT2
LJM_RECORDERS += luajit2/attach/libljmprof-attach.so
luajit2/attach/libljmprof-attach.so: $(LJM_REC_DEPS)
	@$(MKDIR_P) $(@D)
	$(AM_V_CCLD)$(LJM_REC_BUILD) -I$(LUAJIT2_SRC)/src
endif

noinst_DATA = $(LJM_RECORDERS)
CLEANFILES += $(LJM_RECORDERS)

# The builds the recorders' layouts are those of: a LuaJIT library of
# the version of the source tree a recorder was compiled against (its
# build-id then names exactly that build), with the recorder's folder
# under $(libdir)/ljmprof. For the main tree, the system library when
# its package is of that version; for luajit2, the system library the
# same way, or the one setup.sh unpacked beside nginx's Lua module from
# the package of that version. Another build gets no entry: attach
# refuses it rather than guess.
BUILT_SOURCES += attach/attach_builds.h
CLEANFILES += attach/attach_builds.h
LJM_NGX_LIB = $(LJMPROF_NGINX_LUA)/root/usr/lib/$(MULTIARCH)/libluajit-5.1.so.2
attach/attach_builds.h: Makefile
	@$(MKDIR_P) attach
	$(AM_V_GEN)sys=/usr/lib/$(MULTIARCH)/libluajit-5.1.so.2; \
	pkg=`dpkg-query -S "$$sys" 2>/dev/null | sed -n '1s/: .*//p'`; \
	sysver=`dpkg-query -W -f='$${Version}' "$$pkg" 2>/dev/null`; \
	entry() { test "$(cross_compiling)" != yes && test -f "$$1" || return 0; \
	  id=`readelf -n "$$1" | sed -n 's/.*Build ID: *//p'`; \
	  test -z "$$id" || echo "  {\"$$id\", \"$$2\", \"$$3\", \"$$4\"},"; }; \
	{ echo '/* Made by attach/local.mk: the LuaJIT builds attach knows. */'; \
	  echo 'struct ljm_attach_build {'; \
	  echo '  const char *build_id, *flavour, *version;'; \
	  echo '  const char *dir;	/* The recorder'"'"'s, under LIBDIR/ljmprof. */'; \
	  echo '};'; \
	  echo 'static const struct ljm_attach_build ljm_attach_builds[] = {'; \
	  test "$$sysver" != "$(LUAJIT_VERSION)" || \
	    entry "$$sys" "$(LUAJIT_FLAVOUR)" "$$sysver" ""; \
	  if test -n "$(LUAJIT2_VERSION)"; then \
	    if test "$$sysver" = "$(LUAJIT2_VERSION)"; then \
	      entry "$$sys" luajit2 "$$sysver" luajit2/; \
	    elif ls "$(LJMPROF_NGINX_LUA)/libluajit2-5.1-2_$(LUAJIT2_VERSION)_"*.deb >/dev/null 2>&1; then \
	      entry "$(LJM_NGX_LIB)" luajit2 "$(LUAJIT2_VERSION)" luajit2/; fi; fi; \
	  echo '  {NULL, NULL, NULL, NULL}'; echo '};'; \
	} >$@.tmp && \
	n=`grep -c '^  {"' $@.tmp`; \
	echo "static const size_t ljm_attach_nbuilds = $$n;" >>$@.tmp && mv $@.tmp $@
