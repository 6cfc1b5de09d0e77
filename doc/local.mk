# Man pages: both ENVIRONMENT sections are printed by preload/envdoc from
# the table the shim parses, so the documentation cannot disagree with it.

man_MANS = doc/ljmprof.1 doc/libljmprof.7
doc/ljmprof.1: $(srcdir)/doc/ljmprof.1.in preload/envdoc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) doc && \
	  preload/envdoc $(srcdir)/doc/ljmprof.1.in >$@.tmp && mv $@.tmp $@
doc/libljmprof.7: $(srcdir)/doc/libljmprof.7.in preload/envdoc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) doc && \
	  preload/envdoc $(srcdir)/doc/libljmprof.7.in >$@.tmp && mv $@.tmp $@
CLEANFILES += $(man_MANS)
EXTRA_DIST += doc/ljmprof.1.in doc/libljmprof.7.in doc/json-schema.md \
	doc/format.md
