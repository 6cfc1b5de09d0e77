# attach/: the recorder that `ljmprof attach` loads into a running process
# (libljmprof-attach.so), and the table of the LuaJIT builds it knows.
# Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
#
# The recorder reads a VM the system's LuaJIT made, so it is compiled
# against the headers of the unpatched source tree ($(LUAJIT_SRC)), never
# the patched one (whose global_State has the profiler's fields). It
# needs no LuaJIT symbol, only the C library and the core's file writer.

noinst_LIBRARIES += attach/librecorder.a
attach_librecorder_a_SOURCES = attach/recorder.c attach/recorder.h \
	attach/pool.c
attach_librecorder_a_CPPFLAGS = $(AM_CPPFLAGS) $(LJM_CORE_CPPFLAGS) \
	-I$(top_srcdir)/src -I$(LUAJIT_SRC)/src
attach_librecorder_a_CFLAGS = $(AM_CFLAGS) -O2 -fPIC -fvisibility=hidden

LJM_RECORDERS = attach/libljmprof-attach.so
attach/libljmprof-attach.so: attach/librecorder.a

# The same for OpenResty's flavour, against its tree, for nginx's Lua
# module and the other hosts of luajit2.
if HAVE_LUAJIT2
noinst_LIBRARIES += luajit2/attach/librecorder.a
luajit2_attach_librecorder_a_SOURCES = $(attach_librecorder_a_SOURCES)
luajit2_attach_librecorder_a_CPPFLAGS = $(AM_CPPFLAGS) \
	$(LJM_CORE_CPPFLAGS) -I$(top_srcdir)/src -I$(LUAJIT2_SRC)/src
luajit2_attach_librecorder_a_CFLAGS = $(attach_librecorder_a_CFLAGS)
LJM_RECORDERS += luajit2/attach/libljmprof-attach.so
luajit2/attach/libljmprof-attach.so: luajit2/attach/librecorder.a
endif

$(LJM_RECORDERS): common/libljmcore.a
	$(AM_V_CCLD)$(CC) $(CFLAGS) $(LDFLAGS) -shared -fPIC -o $@ \
	  -Wl,-z,defs -Wl,--whole-archive $(@D)/librecorder.a \
	  -Wl,--no-whole-archive common/libljmcore.a
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
