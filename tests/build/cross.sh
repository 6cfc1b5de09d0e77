# The cross builds' shared body (issue #41), sourced by one test per
# target: tests/build/cross-arm64.test, cross-i386.test and
# cross-armhf.test, each a few lines that source this file and call
# cross_arch with its name. Everything is here: the checks, the known
# failures, the knobs and the skip messages; it was cross.test, which ran
# the three one after another (about 560 s, the other make -j2 slot idle
# once the rest had finished). Three tests run side by side, and
# Makefile.am puts them first in TESTS so that they start first. Each
# does the cheap native reference run (native= below) for itself.
#
# For arm64, i386 and armhf (one a test), configure
# --host= in a scratch folder builds the patched VM, the frontend and the
# shim with Debian's cross toolchain; qemu-user runs the frontend, which
# profiles a small program with misc.memprof, JIT off and on, and the
# shim, preloaded; the native CLI reads every stream and finds the right
# lines with the JIT off, and the JIT-off report's ALLOCATIONS are the
# native frontend's ($LJMPROF_LUAJIT) for the same program: sites and
# counts, and on arm64 bytes too.
#
# For each it also cross-builds the CLI, with the target's libraries
# from buildtools/get-target-libs, and runs it under qemu on the golden
# streams, the reference fixtures and the target's own two streams: its
# reports must be the native CLI's, byte for byte (cli_check below;
# skipped, saying so, when the fetch fails).
#
# For the three it then runs the profiler's unit tests under qemu:
# tests/profiler/check_memprof.c, all of it (the core, stacks and
# snapshot cases, 118 runs of 87 tests), built for the target against
# tests/build/minicheck/check.h, a stand-in for Check's header (the cross
# toolchains have no libcheck for the target, and a foreign libcheck-dev
# would need a dpkg architecture added to the machine). The tests that
# fail there are named below, per architecture, with why: a failure not
# named fails this test; a named one that passes is said in the log.
#
# For arm64 and i386 it then runs LuaJIT's own test suite under qemu, a
# named subset (suite_subset below: the whole suite but bc/,
# lang/stackov.lua and the two C++ tests; 801 tests JIT on, 618 with
# -joff), with the cross-built frontend, unprofiled and under the
# cross-built shim (LD_PRELOAD through qemu -E), JIT on and -joff: the
# same tests must pass and fail profiled, the frontend exit the same
# way, and every stream read as complete to the native `ljmprof stat`.
# The suite's libctest is built with the target's gcc. arm64's four runs
# took 28 s (16 s user, 5 s system) at a load average of 3 on two cores,
# 32 s in a whole run of this test at 3.5; the whole suite under qemu,
# JIT on, unprofiled, once: 27 s for arm64 (7 s user: the machine was
# busy). i386's died of qemu's mremap (below) at its 5th test (qemu
# -strace: mremap(1054720000, 2228224, 131072, 0), then SIGSEGV,
# SEGV_ACCERR): its runs preload a test-only library whose mremap fails
# that shrink in place, and LuaJIT's allocator falls back to munmap (see
# the comment above suite_i386: i386's suite also found a bug of the
# 32-bit writer, fixed, which doubles.lua checks). i386's four
# runs: 41 s at a load average of 3 (the whole cross-i386.test: 299 s
# with them, 10 s of it fetching the CLI's libraries; 210 s with
# LJMPROF_CROSS_SUITE=no, its libraries kept; the unit tests alone took
# 72 s in the one and 106 s in the other: the load's noise).
#
#   LJMPROF_CROSS=no    skip all three (the builds and runs for the three:
#                       about 3 minutes on two cores shared with another
#                       build; the unit tests add about 1 minute of CPU
#                       for i386, 1 for armhf (67 s by hand: 51 s user,
#                       10 s system) and 2.5 for arm64, whose sys time
#                       goes on qemu's mappings of the sampled range;
#                       arm64's took 479 s at a load average of 6.5)
#   LJMPROF_CROSS_UNITS=no   the builds and profiles, not the unit tests
#   LJMPROF_CROSS_SUITE=no   not LuaJIT's suite (arm64's, about 30 s;
#                       i386's, about 40 s)
#
# Each architecture's test skips (exit 77) with a message when its
# toolchain or qemu is missing (Debian: gcc-aarch64-linux-gnu
# libc6-dev-arm64-cross; gcc-i686-linux-gnu libc6-dev-i386-cross
# libc6-dev-i386 lib32gcc-12-dev; gcc-arm-linux-gnueabihf
# libc6-dev-armhf-cross, whose LuaJIT tools are built with i386's gcc
# -m32; qemu-user-static).
# The guest's libraries come from the cross sysroot alone
# (LD_LIBRARY_PATH=SYSROOT/lib): qemu -L gives the guest the sysroot's
# ld.so, but that ld.so reads the build machine's /etc/ld.so.cache, which
# on amd64 with libc6-i386 (libc6-dev-i386 above pulls it in) names
# /lib32/libc.so.6. That libc (2.36-9+deb12u14 here) is not the cross
# ld.so's build (2.36-8): _rtld_global's layout differs (the stack
# cache's list head is at +0x928 in the one, +0x924 in the other), and
# the first pthread_create walks a list that is not one, forever, with
# every signal blocked. Plain C does it (pthread_create and join: hangs
# under qemu-i386-static -L /usr/i686-linux-gnu, runs with
# -E LD_LIBRARY_PATH=/usr/i686-linux-gnu/lib); the shim met it as its
# flush timer started. Not a bug of the shim, nor of qemu.
# Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.

set -eu
. "$top_srcdir/tests/lib.sh"

[ "${LJMPROF_CROSS:-yes}" != no ] || skip "the cross builds are turned off: LJMPROF_CROSS=no"
# The cross builds are made and run without sanitizers whatever the
# build: in a sanitizer build's make check they would repeat, minutes
# long, what the plain build's make check ran (as .ci/run does both).
[ "${LJMPROF_SANITIZED:-no}" != yes ] ||
	skip "a sanitizer build: the cross builds are not sanitized; the plain build's make check runs them"
[ -x "${LJMPROF_CLI:-}" ] || skip "no native ljmprof CLI to read the streams"
# Against an installed package (tests/run-installed) there is no LuaJIT
# source tree to build from.
[ -n "${LUAJIT_SRC:-}" ] || skip "no LuaJIT source tree (LUAJIT_SRC): the cross builds need one"
srcdir=$(cd "$top_srcdir" && pwd)

cat >"$scratch/prog.lua" <<'LUA'
assert(misc.memprof.start(arg[1]))
local keep = {}
for j = 1, 2000 do
  keep[j] = { j } -- line 4
end
local s = {}
for j = 1, 300 do
  s[j] = string.rep("y", 100) .. j -- line 8
end
assert(misc.memprof.stop())
LUA
cat >"$scratch/shim.lua" <<'LUA'
local t = {}
for i = 1, 1000 do t[i] = { i } end -- line 2
LUA
# Doubles in the slots below a built-in's frame: without LJ_FR2 (i386,
# armhf) their low word is no pointer (0.7's is 0x66666666), and the
# writer once followed it there, looking for the built-in's Lua caller
# (see the comment above suite_i386).
cat >"$scratch/doubles.lua" <<'LUA'
local function g(n)
  local a, b, c = 0.7, 0.7, 0.7
  local s = string.rep("x", n) -- line 3
  return s, a, b, c
end
for i = 1, 200 do g(100 + i) end
LUA

# count FILE LOC: the ALLOC events at LOC in FILE's report.
count() {
	"$LJMPROF_CLI" report "$1" >"$1.report" || fail "$1: ljmprof report failed"
	awk -v loc="$2:" '/^ALLOCATIONS/ { a = 1; next } /^[A-Z]+$/ { a = 0 }
		a && $1 == loc { n = $2 } END { print n + 0 }' "$1.report"
}

# allocs REPORT [sizes]: REPORT's ALLOCATIONS lines, addresses stripped,
# sorted: each site and its count, and with 'sizes' its bytes too.
allocs() {
	awk -v sizes="${2:-}" '/^ALLOCATIONS/ { a = 1; next } /^[A-Z]+$/ { a = 0 }
		a && NF { print $1, $2, (sizes != "" ? $4 " " $5 : "") }' "$1" |
		sed 's/0x[0-9a-fA-F]*/ADDR/g' | sort
}

# The native frontend's report of prog.lua, JIT off, to compare each
# target's with.
native=
# Run from $scratch, as the targets': the chunk's name is @prog.lua.
if (cd "$scratch" && "$LJMPROF_LUAJIT" -joff prog.lua native-off.bin) >/dev/null 2>&1; then
	"$LJMPROF_CLI" report "$scratch/native-off.bin" >"$scratch/native-off.bin.report" ||
		fail "native: ljmprof report failed"
	native=$scratch/native-off.bin.report
else
	echo "the native frontend ($LJMPROF_LUAJIT) does not run prog.lua: the reports are not compared"
fi

# units NAME TRIPLET BUILD KNOWN: build check_memprof for TRIPLET in
# BUILD and run it under qemu (run, from cross); the failures must be
# those in KNOWN ("case:test" words).
units() {
	# shellcheck disable=SC2086,SC2116
	set -- "$1" "$2" "$3" "$(echo $4)"  # One line: the lists span several.
	u=$3/tests/profiler
	mkdir -p "$u"
	# As tests/profiler/local.mk builds it, check.h aside.
	"$2-gcc" -DHAVE_CONFIG_H -I"$3" -I"$3/luajit/src" -I"$srcdir/src" \
		-I"$srcdir/tests/profiler" -I"$srcdir/tools/stream" \
		-I"$srcdir/tests/build/minicheck" -pthread -g -O2 -w \
		-Wl,-E -Wl,--wrap=syscall -o "$u/check_memprof" \
		"$srcdir/tests/profiler/check_memprof.c" "$srcdir/tests/profiler/mpread.c" \
		"$srcdir/tools/stream/mp_reader.c" "$3/luajit/src/libluajit.a" -lm -ldl \
		>"$u.log" 2>&1 || { cat "$u.log" >&2; fail "$1: cannot build check_memprof"; }
	"$2-gcc" -DHAVE_CONFIG_H -I"$3" -I"$3/luajit/src" -I"$srcdir/src" -O2 -fPIC \
		-shared -s -Wl,--hash-style=gnu -o "$u/cmod.so" "$srcdir/tests/profiler/cmod.c" ||
		fail "$1: cannot build cmod.so"
	t0=$(date +%s)
	set +e
	timeout -s KILL 900 "$qemu" -L "$sysroot" -E LD_LIBRARY_PATH="$sysroot/lib" \
		-E top_builddir="$3" -E TMPDIR="$scratch" -E CK_TIMEOUT_MULTIPLIER=5 \
		"$u/check_memprof" >"$scratch/$1-units.log" 2>&1
	rc=$?
	set -e
	summary=$(grep -a '^[0-9]*%: Checks: ' "$scratch/$1-units.log") ||
		{ tail -n 30 "$scratch/$1-units.log" >&2; fail "$1: check_memprof did not finish under qemu (exit $rc)"; }
	got=$(sed -n 's/^.*:[0-9]*:[FE]:\([a-z]*\):\([a-z0-9_]*\):0: .*$/\1:\2/p' \
		"$scratch/$1-units.log" | sort -u)
	bad=0
	for f in $got; do
		case " $4 " in
		*" $f "*) ;;
		*) grep -a ":[FE]:$f:0: " "$scratch/$1-units.log" >&2
		   echo "$1: check_memprof: $f failed, and is not a known failure" >&2
		   bad=1 ;;
		esac
	done
	for k in $4; do
		# shellcheck disable=SC2086,SC2116
		case " $(echo $got) " in
		*" $k "*) ;;
		*) echo "$1: check_memprof: $k, a known failure, passed: take it off the list" ;;
		esac
	done
	echo "$1: check_memprof under qemu: $summary, $([ "$bad" = 0 ] && echo all known || echo NOT all known), $(($(date +%s) - t0)) s"
	[ "$bad" = 0 ] || fail "$1: check_memprof: unexpected failures (log: $scratch/$1-units.log)"
}

# The failures of check_memprof under qemu, "case:test".
# arm64: the trace call sites are read on x86-64 only (LJ_TARGET_X64 &&
# LJ_GC64): compiled code's allocations are charged to their trace, not
# to the lines and kinds these tests expect. Not every run, as i386's
# below: seal_from_another_thread seals the stream 20 ms after its busy
# thread starts, and under qemu on a loaded machine (load average 6.5 on
# two cores) that thread had not run its first line yet (core's, once,
# in a whole run: "@busy.lua:1" == 0); armhf's likewise.
# The trace sites' tests, which fail on the three targets alike:
trace_sites="core:jit_trace core:trace_alive_at_start
stacks:jit_trace stacks:trace_alive_at_start stacks:stack_coroutine_trace
stacks:stack_interpreted_then_compiled
stacks:stack_trace_returned_below stacks:stack_site_lines
stacks:stack_site_inlined stacks:stack_site_side_stitch
stacks:stack_site_compiled_before stacks:stack_site_flush"
arm64_known="$trace_sites core:every_event_as_called stacks:kinds_jit_on
core:seal_from_another_thread stacks:seal_from_another_thread"
# i386: the same trace sites (jit_trace's 'traced == 0' is the test's
# x86-64 assumption the other way round). Besides, qemu's, not ours
# (issue #41): core:sampled_under_host_allocator and
# stacks:leaf_stream_has_no_time die of SIGSEGV in lj_alloc's
# release_unused_segments at lua_close. qemu-user 7.2 (Debian's
# 1:7.2+dfsg-7+deb12u18) reserves the whole 4 GiB of a 32-bit guest on a
# 64-bit host (reserved_va; no option turns it off: -R 0 is the default,
# -B keeps it) and, when a mapping shrinks in place (mremap without
# MREMAP_MAYMOVE), hands the freed tail back to that reservation at the
# wrong place: mmap_reserve(old_addr + old_size, old_size - new_size),
# not old_addr + new_size, so the pages just ABOVE the old mapping become
# PROT_NONE. LuaJIT's allocator does that in alloc_trim, on a segment
# merged from adjacent mmaps: mremap(0x3ef4a000, 2883584, 131072, 0)
# (qemu -strace), then reads the segment record at 0x3f44f014, in the
# next mapping up: SIGSEGV si_code=SEGV_ACCERR. A write there instead
# spins qemu at 100% CPU (the C program named below, made to write: killed
# after 10 minutes; the page is writable in qemu's own page flags, not
# in the host's), most likely the i386 'luajit -joff' that span for
# minutes. Debian's LuaJIT without our patches does the same under qemu
# (luajit -joff of 40000 strings then 100000 tables: exit 139), and runs
# natively as i386 (/usr/i686-linux-gnu/lib/ld-linux.so.2 --library-path
# /usr/i686-linux-gnu/lib luajit ...: exit 0); so does a 20-line C
# program (mmap two adjacent 2-page mappings, shrink the lower to 1 page
# with mremap, read the upper: SIGSEGV under qemu-i386-static, fine
# natively). Fixed upstream by "linux-user: fix mremap unmapping
# adjacent region" (Matthew Lugg, October 2025, Cc qemu-stable).
# Not explained yet, and not every run: snapshot:snapshot_inside_allocator
# found no start deferred out of a string sweep in two whole runs after
# 8c2f9f9 (the 32-bit resume fix), passed in a third and alone
# (CK_RUN_TEST); stacks:seal_from_another_thread, which seals the stream
# 20 ms after its busy thread starts, missed that thread's events once
# on a loaded machine, and passes alone.
i386_known="$trace_sites core:stripped_bytecode_jit_on
core:sampled_under_host_allocator stacks:stripped_bytecode_jit_on
stacks:leaf_stream_has_no_time snapshot:snapshot_inside_allocator
stacks:seal_from_another_thread"
# armhf: the trace sites, as arm64's (the same tests: armhf's traces
# record the same kinds as arm64's). Besides, qemu's mremap, as i386's
# above (qemu-arm reserves the 4 GiB of its 32-bit guest too):
# core:sampled_names_lazily and core:sampled_under_host_allocator die of
# SIGSEGV, si_code=SEGV_ACCERR, after alloc_trim's
# mremap(0x3f03f000, 2621440, 131072, 0) (qemu -strace, CK_RUN_TEST,
# CK_FORK=no) at 0x3f405fe8, inside the 2490368 bytes that qemu hands
# back at old_addr + old_size (0x3f2bf000), not at old_addr + new_size;
# likewise the other at 0x3f53ffe8 after mremap(0x3f1df000, 2228224,
# 131072, 0). Which tests meet it follows the guest's mappings: i386's
# sampled_names_lazily passes, armhf's leaf_stream_has_no_time does.
# And LuaJIT's, not ours: error_across_lua_call_on_thread (core and
# stacks) raises an error in a thread that a C function ran with
# lua_call, to a pcall in another: only external unwinding crosses that
# C frame. LuaJIT's Makefile turns it on when the target's compiler puts
# an eh_frame in an object; arm-linux-gnueabihf-gcc puts .ARM.exidx
# there, so armhf's VM unwinds internally and panics ('unprotected
# error in call to Lua API', exit 1: minicheck's early exit).
# Not explained yet, and not every run, as i386's: snapshot:
# snapshot_inside_allocator ('t->deferred >= 1' failed) in a whole run
# of cross.test at a load average over 5 (212 s for the unit tests),
# passed in a run by hand (67 s); and stacks:stack_time_marks, whose
# bounds are the wall clock's (at most a mark per 4 ms, CPU time within
# wall time), once in a whole make check at a load average over 5.
armhf_known="$trace_sites core:error_across_lua_call_on_thread
stacks:error_across_lua_call_on_thread
snapshot:snapshot_inside_allocator stacks:stack_time_marks
core:every_event_as_called core:sampled_names_lazily
core:sampled_under_host_allocator stacks:kinds_jit_on
core:seal_from_another_thread stacks:seal_from_another_thread"
[ "${LJMPROF_CROSS_UNITS:-yes}" != no ] || { arm64_known=no i386_known=no armhf_known=no; }

# LuaJIT's own test suite under qemu (issue #41), a named subset: the
# shared corpora's LuaJIT-tests (as tests/suite/luajit-tests.test finds
# it), copied, whose top-level index is replaced by suite_subset's lines
# (the tests keep their names, "lib/string/rep.lua --- ..."), and whose
# lang/index loses the lines in suite_left_out. That is the whole suite
# but bc/ (3 s of the 27 of arm64's whole suite under qemu, JIT on, no
# allocation of note: bytecode dumps), lang/stackov.lua (5 s, and its two
# tests fail under qemu: the error message of a stack overflow) and the
# two tests that need libcpptest (no C++ cross compiler is asked for):
# strings, tables, closures, coroutines, metatables, the GC's own tests,
# ffi and its callbacks, traces and their optimisations.
suite_subset="lang
lib
computations.lua
trace +jit
opt +jit"
suite_left_out="stackov.lua catch_cpp.lua catch_wrap.lua"
suite_corpus=${LJMPROF_SHARED:-$srcdir/../shared}/corpora/LuaJIT-tests
if [ "${LJMPROF_CROSS_SUITE:-yes}" = no ]; then
	suite_corpus=
	echo "LuaJIT's test suite under qemu is turned off: LJMPROF_CROSS_SUITE=no"
elif [ ! -f "$suite_corpus/test.lua" ] || [ ! -f "$suite_corpus/src/libctest.c" ]; then
	echo "LuaJIT's test suite is not in $suite_corpus: not run under qemu (set LJMPROF_SHARED)"
	suite_corpus=
fi

# suite_run W TAG JITFLAG [QEMU-OPTION...]: the subset in W under qemu
# (the cross build $b's frontend), to W/TAG.out and .err; its exit status
# to W/TAG.rc, its per-test results to W/TAG.results: "number name
# pass|fail", and for a run that did not reach the suite's summary line,
# the last test started as "died" (what killed it: TAG.rc).
suite_run() {
	sw=$1 tag=$2 jf=$3
	shift 3
	set +e
	# shellcheck disable=SC2086
	(cd "$sw" && exec timeout -s KILL 300 "$qemu" -L "$sysroot" \
		-E LD_LIBRARY_PATH="$sysroot/lib:$sw/.lib" -E "LUA_CPATH=$sw/.lib/?.so;;" "$@" \
		"$b/src/luajit" $jf -e "io.stdout:setvbuf'line'" test.lua +slow) \
		>"$sw/$tag.out" 2>"$sw/$tag.err"
	echo $? >"$sw/$tag.rc"
	set -e
	awk '/^\[ *[0-9]+\/[0-9]+\] / {
			n = $0; sub(/^\[ */, "", n); sub(/\/.*/, "", n)
			t = $0; sub(/^[^]]*\] /, "", t); gsub(/ /, "_", t)
			num[++k] = n; name[k] = t; next
		}
		/^[0-9]+ passed(, [0-9]+ failed)?$/ { done = 1; p = $1; f = $3 + 0 }
		/^to run just failing tests, pass command line arguments: / {
			sub(/^[^:]*: /, ""); m = split($0, l, " ")
			for (i = 1; i <= m; i++) bad[l[i]] = 1
		}
		END {
			for (i = 1; i <= k; i++)
				print num[i], name[i], (!done && i == k ? "died" : \
					num[i] in bad || (done && p == 0) ? "fail" : "pass")
			if (done) print "summary", p, "passed,", f, "failed"
		}' "$sw/$tag.out" >"$sw/$tag.results"
}

# suite NAME TRIPLET BUILD: the subset under qemu with BUILD's frontend,
# JIT on and -joff, unprofiled and under BUILD's shim (preloaded with
# qemu -E): profiling must change no test's result nor the exit status,
# and every stream must read as complete to the native CLI. The suite's
# C module libctest is built with TRIPLET's gcc; the two tests that need
# libcpptest (lang/catch_cpp.lua, lang/catch_wrap.lua) are not run: no
# C++ cross compiler is asked for.
suite() {
	w=$scratch/suite-$1
	cp -R "$suite_corpus" "$w"
	chmod -R u+w "$w"
	mkdir "$w/.lib"
	"$2-gcc" -O1 -g -fPIC -shared -I"$3/luajit/src" -o "$w/.lib/libctest.so" \
		"$w/src/libctest.c" >"$w.cc.log" 2>&1 ||
		{ cat "$w.cc.log" >&2; fail "$1: cannot build the suite's libctest.so with $2-gcc"; }
	printf '%s\n' "$suite_subset" >"$w/index"
	awk -v out="$suite_left_out" 'BEGIN { n = split(out, o, " "); for (i = 1; i <= n; i++) skip[o[i]] = 1 }
		!($1 in skip)' "$w/lang/index" >"$w/lang/index.new"
	mv "$w/lang/index.new" "$w/lang/index"
	# i386: every run, unprofiled and profiled, preloads noshrink.so
	# (above suite_i386: qemu's mremap bug, not the writer's).
	pre=
	if [ "$1" = i386 ]; then
		printf '%s\n' "$suite_noshrink" >"$w/noshrink.c"
		"$2-gcc" -O1 -fPIC -shared -o "$w/.lib/noshrink.so" "$w/noshrink.c" -ldl >"$w.noshrink.log" 2>&1 ||
			{ cat "$w.noshrink.log" >&2; fail "$1: cannot build the suite's noshrink.so with $2-gcc"; }
		pre=$w/.lib/noshrink.so:
	fi
	t0=$(date +%s)
	for jit in on off; do
		jf=
		[ "$jit" = on ] || jf=-joff
		suite_run "$w" "plain-$jit" "$jf" ${pre:+-E LD_PRELOAD="${pre%:}"}
		[ -n "$(sed -n '/^summary /p; /died$/p' "$w/plain-$jit.results")" ] ||
			{ tail -n 20 "$w/plain-$jit.out" "$w/plain-$jit.err" >&2; fail "$1, JIT $jit: the suite ran no test under qemu"; }
		grep -q ' pass$' "$w/plain-$jit.results" ||
			{ tail -n 20 "$w/plain-$jit.out" >&2; fail "$1, JIT $jit: no test of the suite passed under qemu"; }
		mkdir "$w/prof-$jit.streams"
		suite_run "$w" "prof-$jit" "$jf" -E LD_PRELOAD="$pre$3/preload/libljmprof.so" \
			-E LJMPROF_OUT="$w/prof-$jit.streams/x.bin"
		rc0=$(cat "$w/plain-$jit.rc") rc=$(cat "$w/prof-$jit.rc")
		[ "$rc" = "$rc0" ] ||
			{ tail -n 20 "$w/prof-$jit.out" "$w/prof-$jit.err" >&2; fail "$1, JIT $jit, the suite profiled: exit status $rc, $rc0 unprofiled"; }
		diff "$w/plain-$jit.results" "$w/prof-$jit.results" >&2 ||
			fail "$1, JIT $jit: the suite's results differ profiled (< unprofiled, > profiled)"
		ns=0
		for s in "$w/prof-$jit.streams"/*; do
			[ -f "$s" ] || fail "$1, JIT $jit: the suite profiled wrote no stream"
			st=$w/prof-$jit.$(basename "$s").stat
			"$LJMPROF_CLI" stat "$s" >"$st" 2>&1 ||
				{ cat "$st" >&2; fail "$1, JIT $jit: ljmprof stat failed on the suite's stream $(basename "$s")"; }
			grep -q '^stream: *complete' "$st" ||
				{ cat "$st" >&2; fail "$1, JIT $jit: the suite's stream $(basename "$s") is not complete"; }
			ns=$((ns + 1))
		done
		echo "$1, JIT $jit: the suite's subset under qemu: $(sed -n 's/^summary //p' "$w/plain-$jit.results") (exit $rc0)," \
			"the same profiled, $ns complete stream(s), $(cat "$w/prof-$jit.streams"/* | wc -c) bytes"
		# The tests that fail both ways, by name: the suite's, or qemu's.
		sed -n 's/^[0-9]* \(.*\) fail$/  failed both ways: \1/p' "$w/plain-$jit.results"
	done
	echo "$1: the suite's subset under qemu, 4 runs: $(($(date +%s) - t0)) s"
}

# LuaJIT's build tools for a 32-bit target are built with gcc -m32 and
# run on the build machine, which a kernel without IA32 emulation cannot
# do. There the 32-bit builds get buildtools/hostcc32-qemu as
# LUAJIT_HOST_CC: its programs run under qemu-i386-static.
hostcc32=
printf 'int main(void) { return sizeof(void *) != 4; }\n' >"$scratch/m32.c"
if gcc -m32 -o "$scratch/m32" "$scratch/m32.c" 2>/dev/null &&
	! "$scratch/m32" 2>/dev/null && command -v qemu-i386-static >/dev/null &&
	qemu-i386-static "$scratch/m32"; then
	hostcc32=$srcdir/buildtools/hostcc32-qemu
	echo "gcc -m32's programs do not run here: LuaJIT's 32-bit build tools run under qemu-i386-static"
fi

# cross NAME TRIPLET QEMU SYSROOT LOADER JITARCH SHIM UNITS SUITE CLI:
# build for TRIPLET and check it under QEMU, and its unit tests unless
# UNITS is no (else: their known failures), and the suite's subset unless
# SUITE is no, and with CLI yes the CLI too (cli_check below); 1 if its
# toolchain or qemu is missing.
cross() {
	name=$1 triplet=$2 qemu=$3 sysroot=$4 loader=$5 jitarch=$6 shim=$7 units=$8 suite=$9
	cli=${10}
	command -v "$triplet-gcc" >/dev/null ||
		{ echo "$name: skipped: no $triplet-gcc"; return 1; }
	command -v "$qemu" >/dev/null ||
		{ echo "$name: skipped: no $qemu (Debian: qemu-user-static)"; return 1; }
	[ -f "$sysroot/lib/$loader" ] ||
		{ echo "$name: skipped: no $sysroot/lib/$loader"; return 1; }
	b=$scratch/build-$name
	bits32=
	[ "$name" = arm64 ] || bits32=yes
	mkdir "$b"
	# The CLI's libraries for the target (check, libprotobuf-c, zlib),
	# fetched by buildtools/get-target-libs into a tree of their own (no
	# foreign architecture added to the machine): without them, offline
	# say, the build is the VM's, the shim's and the frontend's alone.
	libs=
	if [ "$cli" = yes ]; then
		libs=${LJMPROF_CROSS_LIBS:+$LJMPROF_CROSS_LIBS/$name}
		libs=${libs:-$scratch/libs-$name}
		t0=$(date +%s)
		if sh "$srcdir/buildtools/get-target-libs" "$name" "$libs" >"$scratch/libs-$name.log" 2>&1; then
			echo "$name: the CLI's libraries for $name in $libs ($(($(date +%s) - t0)) s)"
		else
			sed 's/^/  /' "$scratch/libs-$name.log" | tail -n 5
			echo "$name: the CLI is not cross-built: buildtools/get-target-libs $name failed (above)"
			libs=
		fi
	fi
	# The compilers named: a CC from the caller's environment (make
	# check's) would be taken for the host's. With the CLI, pkg-config
	# reads the target's .pc files only (PKG_CONFIG_LIBDIR): else it
	# answers for the build machine.
	# Debian's multiarch folder: the triplet's, but for i386's.
	ma=$triplet
	[ "$name" != i386 ] || ma=i386-linux-gnu
	tl=${libs:+$libs/usr/lib/$ma}
	(cd "$b" && env -u CFLAGS -u CPPFLAGS -u LDFLAGS \
		${libs:+PKG_CONFIG_LIBDIR="$tl/pkgconfig:$libs/usr/share/pkgconfig"} \
		${libs:+PKG_CONFIG_SYSROOT_DIR="$libs"} \
		"$srcdir/configure" \
		--build="$(gcc -dumpmachine)" --host="$triplet" CC="$triplet-gcc" \
		--with-luajit-src="$LUAJIT_SRC" --without-luajit2-src \
		${libs:+--enable-cli CPPFLAGS="-I$libs/usr/include"} \
		${libs:+LDFLAGS="-L$tl -Wl,-rpath-link,$tl"} \
		${hostcc32:+${bits32:+LUAJIT_HOST_CC="$hostcc32"}}) >"$b.configure.log" 2>&1 ||
		{ tail -n 30 "$b.configure.log" >&2; fail "$name: cross configure failed"; }
	# A make of its own: not the variables of the make check that runs this.
	timeout 900 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$b" -j2 >"$b.make.log" 2>&1 ||
		{ tail -n 30 "$b.make.log" >&2; fail "$name: cross build failed"; }
	run() { timeout -s KILL 300 "$qemu" -L "$sysroot" -E LD_LIBRARY_PATH="$sysroot/lib" "$@"; }
	arch=$(run "$b/src/luajit" -e 'io.write(jit.arch)') ||
		{ file "$b/src/luajit" >&2 || :; fail "$name: luajit does not run under qemu"; }
	[ "$arch" = "$jitarch" ] || fail "$name: jit.arch is '$arch', expected $jitarch"
	cd "$scratch"
	run "$b/src/luajit" -joff prog.lua "$name-off.bin" || fail "$name: misc.memprof under qemu, JIT off"
	# JIT off: the interpreter's lines, exactly.
	n=$(count "$name-off.bin" @prog.lua:4)
	[ "$n" -ge 2000 ] || { cat "$name-off.bin.report" >&2; fail "$name, JIT off: $n allocations at line 4, expected 2000 or more"; }
	n=$(count "$name-off.bin" @prog.lua:8)
	[ "$n" -ge 300 ] || { cat "$name-off.bin.report" >&2; fail "$name, JIT off: $n allocations at line 8, expected 300 or more"; }
	# JIT off, the report is the native one's: the same sites with the
	# same counts, addresses aside. arm64 is GC64, as amd64: the same
	# object sizes, so the same bytes too (the whole report was the same,
	# reallocations and frees included). i386 and armhf are not: 4-byte
	# pointers make smaller objects (an empty table, line 2: 32 bytes on
	# armhf, 64 natively; line 4, 112024 bytes against 176024), so the
	# same allocations make other byte totals; only sites and counts.
	if [ -n "$native" ]; then
		sz=
		[ "$name" != arm64 ] || sz=sizes
		allocs "$native" $sz >native.$name.allocs
		allocs "$name-off.bin.report" $sz >"$name-off.allocs"
		diff native.$name.allocs "$name-off.allocs" >&2 ||
			fail "$name, JIT off: ALLOCATIONS differ from the native run's (< native, > $name)"
		echo "$name: JIT off, ALLOCATIONS as the native run's ($(wc -l <"$name-off.allocs") sites${sz:+, with their bytes})"
	fi
	# JIT on: the stream reads as complete. Trace call sites are read on
	# x86-64 only: compiled code's allocations are charged to their
	# trace, not to the line inside it; the line is not checked.
	run "$b/src/luajit" prog.lua "$name-on.bin" || fail "$name: misc.memprof under qemu, JIT on"
	"$LJMPROF_CLI" stat "$name-on.bin" >"$name-on.stat" || fail "$name, JIT on: ljmprof stat failed"
	grep -q '^stream: *complete' "$name-on.stat" || { cat "$name-on.stat" >&2; fail "$name, JIT on: stream not complete"; }
	[ -z "$libs" ] || cli_check "$name" "$ma" "$b" "$libs"
	[ "$units" = no ] || units "$name" "$triplet" "$b" "$units"
	[ "$suite" = no ] || [ -z "$suite_corpus" ] || suite "$name" "$triplet" "$b"
	if [ "$shim" = yes ]; then
		run -E LD_PRELOAD="$b/preload/libljmprof.so" -E LJMPROF_OUT="$scratch/$name-shim.bin" \
			"$b/src/luajit" -joff shim.lua || fail "$name: the shim under qemu"
		[ -f "$name-shim.bin" ] || fail "$name: the shim wrote no $name-shim.bin"
		n=$(count "$name-shim.bin" @shim.lua:2)
		[ "$n" -ge 1000 ] || { cat "$name-shim.bin.report" >&2; fail "$name, shim: $n allocations at line 2, expected 1000 or more"; }
		run -E LD_PRELOAD="$b/preload/libljmprof.so" -E LJMPROF_OUT="$scratch/$name-doubles.bin" \
			"$b/src/luajit" -joff doubles.lua || fail "$name: the shim under qemu, doubles below a built-in's frame"
		n=$(count "$name-doubles.bin" @doubles.lua:3)
		[ "$n" = 200 ] || { cat "$name-doubles.bin.report" >&2; fail "$name, shim: $n string.rep allocations charged to its line, expected 200"; }
	else
		echo "$name: the shim is not run under qemu (see the header)"
	fi
	echo "$name: built, ran under qemu, streams read natively"
}

# i386's suite runs by default (LJMPROF_CROSS_SUITE=no turns it off with
# arm64's), each of its runs, unprofiled and profiled, with noshrink.so
# preloaded (qemu -E LD_PRELOAD, before the shim in the profiled runs):
# a test-only library, built with i686-linux-gnu-gcc from the C below,
# whose mremap fails (ENOMEM) where qemu's is wrong, a shrink in place
# (no MREMAP_MAYMOVE), and passes any other call to libc's. It works
# around qemu's bug (the comment above i386_known), not the writer's:
# without it the suite, unprofiled, with no shim at all, died at its 5th
# test as a whole (qemu -strace: mremap(1054720000, 2228224, 131072, 0),
# a shrink in place, then SIGSEGV, SEGV_ACCERR), and in the subset at
# lib/ffi/ffi_new.lua's 'VLA initialization'. qemu has no option against
# it (-R 0 is the default; -B keeps the reservation). LuaJIT's allocator
# (lj_alloc.c, LJ_ALLOC_MREMAP on Linux) calls mremap through libc, so
# the preload takes its calls, and its two mremaps cope with failure:
# alloc_trim's shrink in place falls back to munmap of the segment's
# tail (qemu's munmap gives back the right pages), and direct_resize,
# which moves (MREMAP_MAYMOVE on 32-bit targets) and is passed through
# anyway, would return NULL to lj_alloc_realloc, which then allocates,
# copies and frees. Fixed in qemu by "linux-user: fix mremap unmapping
# adjacent region" (October 2025): Debian 12's 7.2 does not have it.
# Profiled, the suite used to die at its start, of SIGSEGV at
# si_addr=0x6666666b (gdb on qemu -g: lj_memprof_luacallerhint): the
# writer's, not qemu's. Looking for a built-in's Lua caller, it tried each
# slot below the built-in's frame, and without LJ_FR2 followed the
# pointer word of any slot whose upper word is not a type tag: a
# double's (0.7 is 0x3FE66666_66666666). Now, without LJ_FR2, it reads
# the call's A operand, which names the one slot, and probes what it
# points to before reading it (lj_memprof_guessfunc). doubles.lua, run
# under the shim on each target, is what the suite met: exit 139 before.
suite_i386=yes
[ "${LJMPROF_CROSS_SUITE:-yes}" != no ] || suite_i386=no
suite_noshrink='#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/mman.h>
void *mremap(void *p, size_t osz, size_t nsz, int flags, ...)
{
	static void *(*real)(void *, size_t, size_t, int, ...);
	void *np = 0;
	va_list ap;
	if (!(flags & MREMAP_MAYMOVE) && nsz < osz) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	if (!real)
		real = (void *(*)(void *, size_t, size_t, int, ...))dlsym(RTLD_NEXT, "mremap");
	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		np = va_arg(ap, void *);
		va_end(ap);
	}
	return real(p, osz, nsz, flags, np);
}'

# The CLI cross-built and run under qemu (issue #41), on the three
# targets (the last argument of cross, below): the 32-bit ones read the
# same streams to the same reports as the 64-bit ones. The target's check,
# libprotobuf-c and zlib come from buildtools/get-target-libs (from the
# network: about 10 s; LJMPROF_CROSS_LIBS=DIR keeps them in DIR/NAME
# from one run to the next); LJMPROF_CROSS_CLI=no leaves the CLI out.
cli_arm64=yes cli_armhf=yes cli_i386=yes
[ "${LJMPROF_CROSS_CLI:-yes}" != no ] || cli_arm64=no cli_armhf=no cli_i386=no

# cli_check NAME MULTIARCH BUILD LIBS: BUILD's CLI, run under qemu with
# the target's libraries from LIBS, must read every golden stream as
# tests/tools/golden.test expects (that test, run with it as
# LJMPROF_CLI, against the stored outputs), and give for each reference
# fixture (shared/fixtures/reference-vm) and each golden stream the
# native CLI's reports byte for byte: the default report, --leak-only,
# stat, and the pprof format's bytes (gzipped protobuf); the golden
# streams' pprof bytes alike (golden.test checks only that it is gzip).
cli_check() {
	cn=$1 ct=$2 cb=$3 cl=$4
	c=$cb/tools/ljmprof
	[ -f "$c" ] || fail "$cn: the CLI was to be cross-built, and there is no $c"
	m=$(readelf -h "$c" | sed -n 's/^ *Machine: *//p')
	case $cn:$m in
	arm64:AArch64|i386:*80386|armhf:ARM) ;;
	*) fail "$cn: $c is built for '$m'" ;;
	esac
	w=$scratch/cli-$cn
	mkdir "$w"
	cat >"$w/ljmprof" <<SH
#!/bin/sh
exec timeout -s KILL 120 "$qemu" -L "$sysroot" -E LD_LIBRARY_PATH="$sysroot/lib:$cl/usr/lib/$ct" "$c" "\$@"
SH
	chmod +x "$w/ljmprof"
	"$w/ljmprof" --version >"$w/version" 2>&1 ||
		{ cat "$w/version" >&2; fail "$cn: the cross-built CLI does not run under qemu"; }
	t0=$(date +%s)
	# (a) golden.test, with this CLI.
	top_srcdir=$srcdir top_builddir=$cb LJMPROF_CLI=$w/ljmprof \
		sh "$srcdir/tests/tools/golden.test" >"$w/golden.log" 2>&1 ||
		{ tail -n 40 "$w/golden.log" >&2; fail "$cn: golden.test fails with the CLI under qemu"; }
	ng=0
	for o in $(sed -n 's/^ok: //p' "$w/golden.log"); do
		[ ! -f "$srcdir/tests/tools/golden/$o.out" ] || ng=$((ng + 1))
	done
	# (b) the reference fixtures and the golden streams, both CLIs.
	ref=${LJMPROF_SHARED:-$srcdir/../shared}/fixtures/reference-vm
	mkdir "$w/s"
	nr=0 ns=0 no=0
	# And this target's own streams, JIT off and on: the format does not
	# depend on the architecture, so both CLIs must read them alike.
	for f in "$ref"/*.bin "$srcdir"/tests/tools/golden/*.ljm "$scratch/$cn-off.bin" "$scratch/$cn-on.bin"; do
		[ -f "$f" ] || continue
		cp "$f" "$w/s/"
		case $f in "$ref"/*) nr=$((nr + 1)) ;; "$scratch"/*) no=$((no + 1)) ;; *) ns=$((ns + 1)) ;; esac
	done
	[ "$no" = 2 ] || fail "$cn: $no of its own streams to read with both CLIs, expected 2"
	[ "$nr" -gt 0 ] || echo "$cn: no reference fixtures in $ref (set LJMPROF_SHARED)"
	for f in "$w"/s/*; do
		f=${f##*/}
		# golden.test compared the golden streams' text outputs with
		# the stored ones: here, their pprof bytes.
		hows="report leak stat pprof"
		[ "${f%.ljm}" = "$f" ] || hows=pprof
		for how in $hows; do
			case $how in
			report) set -- report ;;
			leak) set -- report --leak-only ;;
			stat) set -- stat ;;
			pprof) set -- report --format=pprof ;;
			esac
			set +e
			(cd "$w/s" && "$LJMPROF_CLI" "$@" "$f") >"$w/$f.$how.native" 2>&1
			echo "exit $?" >>"$w/$f.$how.native"
			(cd "$w/s" && "$w/ljmprof" "$@" "$f") >"$w/$f.$how.cross" 2>&1
			echo "exit $?" >>"$w/$f.$how.cross"
			set -e
			cmp -s "$w/$f.$how.native" "$w/$f.$how.cross" || {
				diff -a "$w/$f.$how.native" "$w/$f.$how.cross" | head -n 40 >&2
				fail "$cn: ljmprof $* $f: the CLI under qemu differs from the native one's (< native, > $cn)"
			}
		done
	done
	echo "$cn: the CLI under qemu: $ng golden reports as golden.test's stored ones, and $nr reference fixtures" \
		"and $no streams of its own as the native CLI's (report, --leak-only, stat, pprof)," \
		"and $ns golden streams' pprof bytes ($(($(date +%s) - t0)) s)"
}

# cross_arch NAME: build and check NAME (arm64, i386 or armhf) as above;
# the test skips when its toolchain or qemu is missing (cross's message).
cross_arch() {
	case $1 in
	arm64) set -- cross arm64 aarch64-linux-gnu qemu-aarch64-static /usr/aarch64-linux-gnu \
		ld-linux-aarch64.so.1 arm64 yes "$arm64_known" yes "$cli_arm64" ;;
	i386) set -- cross i386 i686-linux-gnu qemu-i386-static /usr/i686-linux-gnu \
		ld-linux.so.2 x86 yes "$i386_known" "$suite_i386" "$cli_i386" ;;
	armhf) set -- cross armhf arm-linux-gnueabihf qemu-arm-static /usr/arm-linux-gnueabihf \
		ld-linux-armhf.so.3 arm yes "$armhf_known" no "$cli_armhf" ;;
	*) echo "cross_arch: no target '$1'" >&2; exit 99 ;;
	esac
	# Outside set -e, as cross.test ran each (! cross ...): cross's
	# checks fail the test by fail.
	if "$@"; then :; else skip "$2: no cross toolchain with its qemu"; fi
}
