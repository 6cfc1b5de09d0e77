# bench/: `make bench`, the profiler's cost and the parser's speed
# (issue 6). Not part of `make all` or `make check`; see bench/README.md.
# Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.

# Built only by `make bench`.
EXTRA_PROGRAMS = bench/runbench
bench_runbench_SOURCES = bench/runbench.c
# It counts the events of streams with the stream library.
bench_runbench_CPPFLAGS = $(AM_CPPFLAGS) $(MP_STREAM_CPPFLAGS)
bench_runbench_LDADD = tools/libmpstream.a -lm
CLEANFILES += bench/runbench bench/results.txt bench/results.status

BENCH_WORKLOADS = bench/workloads/common.lua bench/workloads/strings.lua \
	bench/workloads/tables.lua bench/workloads/closures.lua \
	bench/workloads/modules.lua bench/workloads/bigheap.lua \
	bench/workloads/graphheap.lua bench/workloads/bigrows.lua
EXTRA_DIST += bench/README.md bench/run bench/lines.awk bench/instr-compare \
	bench/fixseed.c \
	$(BENCH_WORKLOADS)

# Options through the environment: BENCH_RUNS, BENCH_ONLY, BENCH_SCALE,
# BENCH_VARIANTS, BENCH_PARSER, BENCH_PARSER_MB, BENCH_TMP, BENCH_WRITER,
# BENCH_LINES, BENCH_TRACECOST, BENCH_NGINX (see the README). The nginx case runs after the
# others (BENCH_NGINX=auto: when nginx, wrk, the unpacked module and the
# luajit2 shim are there, else it says what is missing; yes: they must be;
# no; BENCH_WRITER=only or BENCH_LINES=only leave it out unless yes).
bench: bench/runbench $(LJM_SHIMS) src/luajit tools/ljmprof
	RUNBENCH='$(abs_top_builddir)/bench/runbench' \
	LJMPROF_SHIM='$(abs_top_builddir)/preload/libljmprof.so' \
	LJMPROF_LUAJIT='$(abs_top_builddir)/src/luajit' \
	LJMPROF_CLI='$(abs_top_builddir)/tools/ljmprof' \
	SYSTEM_LUAJIT_LIB='$(SYSTEM_LUAJIT_LIB)' \
	BENCH_WORKLOADS_DIR='$(abs_top_srcdir)/bench/workloads' \
	BENCH_GEN='$(abs_top_builddir)/tests/tools/gen_stream' \
	  $(SHELL) -c '$(SHELL) "$$0" 2>&1; echo $$? >bench/results.status' \
	  $(srcdir)/bench/run | tee bench/results.txt
	@st=`cat bench/results.status`; [ "$$st" = 0 ] || exit $$st; \
	case "$${BENCH_NGINX:-auto}" in no) exit 0 ;; esac; \
	case "$${BENCH_NGINX:-auto}/$${BENCH_WRITER:-}/$${BENCH_LINES:-}/$${BENCH_TRACECOST:-}" in \
	  yes/*) ;; */only/*|*/only) exit 0 ;; esac; \
	echo; echo "== nginx with the Lua module (bench/nginx)"; \
	LJMPROF_SHIM_LUAJIT2='$(LJMPROF_SHIM_LUAJIT2)' \
	LJMPROF_NGINX_LUA='$(LJMPROF_NGINX_LUA)' \
	LJMPROF_CLI='$(abs_top_builddir)/tools/ljmprof' \
	  $(SHELL) -c '$(SHELL) "$$0" 2>&1; echo $$? >bench/nginx-results.status' \
	  $(srcdir)/bench/nginx | tee bench/nginx-results.txt; \
	st=`cat bench/nginx-results.status`; \
	if [ "$$st" = 77 ] && [ "$${BENCH_NGINX:-auto}" = auto ]; then \
	  echo "(the nginx case is left out: BENCH_NGINX=yes makes that an error)"; st=0; \
	fi; exit $$st
.PHONY: bench

# The reference VM that bench/run builds once for its writer count.
clean-local: clean-bench-reference
clean-bench-reference:
	-rm -rf bench/reference
.PHONY: clean-bench-reference

# nginx with the Lua module under wrk: the luajit2 shim inert and
# profiling, against OpenResty's own library (bench/README.md, "nginx").
# Options: BENCH_NGINX_RUNS, BENCH_NGINX_SECONDS, BENCH_NGINX_CONNS,
# BENCH_NGINX_STACKS_SECONDS.
EXTRA_DIST += bench/nginx
bench-nginx: $(LJM_SHIMS) tools/ljmprof
	LJMPROF_SHIM_LUAJIT2='$(LJMPROF_SHIM_LUAJIT2)' \
	LJMPROF_NGINX_LUA='$(LJMPROF_NGINX_LUA)' \
	LJMPROF_CLI='$(abs_top_builddir)/tools/ljmprof' \
	  $(SHELL) $(srcdir)/bench/nginx 2>&1 | tee bench/nginx-results.txt
.PHONY: bench-nginx
CLEANFILES += bench/nginx-results.txt bench/nginx-results.status

# The start snapshot of a 1 GB heap (bench/README.md, "The snapshot"):
# bench/workloads/bigheap.lua toggled on under the shim. Options:
# BENCH_SNAPSHOT_RUNS, BENCH_SNAPSHOT_SCALE, BENCH_TMP.
EXTRA_DIST += bench/snapshot
bench-snapshot: bench/runbench preload/libljmprof.so src/luajit
	RUNBENCH='$(abs_top_builddir)/bench/runbench' \
	LJMPROF_SHIM='$(abs_top_builddir)/preload/libljmprof.so' \
	LJMPROF_LUAJIT='$(abs_top_builddir)/src/luajit' \
	BENCH_WORKLOADS_DIR='$(abs_top_srcdir)/bench/workloads' \
	  $(SHELL) $(srcdir)/bench/snapshot 2>&1 | tee bench/snapshot-results.txt
.PHONY: bench-snapshot
CLEANFILES += bench/snapshot-results.txt

# The heap graph of a 1 GB heap (bench/README.md, "The heap graph"):
# snapshot time with and without it, its bytes a reference, what report
# --retainers takes. Options: BENCH_GRAPH_SCALE, BENCH_GRAPH_RUNS,
# BENCH_TMP.
EXTRA_DIST += bench/graph
bench-graph: src/luajit tools/ljmprof
	LJMPROF_LUAJIT='$(abs_top_builddir)/src/luajit' \
	LJMPROF_CLI='$(abs_top_builddir)/tools/ljmprof' \
	BENCH_WORKLOADS_DIR='$(abs_top_srcdir)/bench/workloads' \
	  $(SHELL) $(srcdir)/bench/graph 2>&1 | tee bench/graph-results.txt
.PHONY: bench-graph
CLEANFILES += bench/graph-results.txt

# Three real servers for a minute each in the sampled production mode
# (issue 38; bench/README.md, "Real servers"): sysbench's Lua workload,
# pdns-recursor with a lua-dns-script, nginx with the Lua module; the
# shim inert, sampled and exact. Options: BENCH_SERVERS_SECONDS,
# BENCH_SERVERS_EXACT_SECONDS, BENCH_SERVERS_ONLY, BENCH_TMP.
EXTRA_DIST += bench/servers
bench-servers: $(LJM_SHIMS) tools/ljmprof
	LJMPROF_SHIM='$(abs_top_builddir)/preload/libljmprof.so' \
	LJMPROF_SHIM_LUAJIT2='$(LJMPROF_SHIM_LUAJIT2)' \
	LJMPROF_NGINX_LUA='$(LJMPROF_NGINX_LUA)' \
	LJMPROF_CLI='$(abs_top_builddir)/tools/ljmprof' \
	  $(SHELL) -c '$(SHELL) "$$0" 2>&1; echo $$? >bench/servers-results.status' \
	  $(srcdir)/bench/servers | tee bench/servers-results.txt
	@st=`cat bench/servers-results.status`; \
	if [ "$$st" = 77 ]; then st=0; fi; exit $$st
.PHONY: bench-servers
CLEANFILES += bench/servers-results.txt bench/servers-results.status

# ljmprof attach on nginx, started without the shim: the request rate
# attached over plain, in each mode, and the pauses (issue 44;
# bench/README.md, "Attach"). Options: BENCH_ATTACH_SECONDS,
# BENCH_ATTACH_ROUNDS, BENCH_TMP.
EXTRA_DIST += bench/attach
bench-attach: tools/ljmprof $(LJM_RECORDERS)
	LJMPROF_CLI='$(abs_top_builddir)/tools/ljmprof' \
	LJMPROF_NGINX_LUA='$(LJMPROF_NGINX_LUA)' \
	LJMPROF_ATTACH_LIB='$(abs_top_builddir)/attach/libljmprof-attach.so' \
	LJMPROF_ATTACH_LIB_LUAJIT2='$(abs_top_builddir)/luajit2/attach/libljmprof-attach.so' \
	  $(SHELL) $(srcdir)/bench/attach; st=$$?; \
	if [ "$$st" = 77 ]; then st=0; fi; exit $$st
.PHONY: bench-attach
