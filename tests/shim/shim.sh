# Helpers for the shim's end-to-end tests (sourced after tests/lib.sh).

hosts_dir=${top_builddir:-.}/tests/hosts

# No setting of the shim's from the caller's environment leaks in.
for v in $(sed -n 's/^  { "\(LJMPROF_[A-Z]*\)".*/\1/p' "$top_srcdir/common/config.c"); do
	unset "$v"
done
lhost=$hosts_dir/lhost

# A shim built from the other flavour than the system library's warns at
# its first VM, by design (flavour.test checks that); the other tests
# look past that one line.
flavour_warning='^ljmprof: the system library .* flavour of LuaJIT but this libljmprof\.so was built from'
flavour_mismatch=no
if [ -n "${SYSTEM_LUAJIT_LIB:-}" ] && [ -f "$SYSTEM_LUAJIT_LIB" ] &&
	[ "$(lib_flavour "$SYSTEM_LUAJIT_LIB")" != "${LUAJIT_FLAVOUR:-luajit}" ]; then
	flavour_mismatch=yes
fi

# under ENV... CMD...: run CMD with the shim preloaded (output to
# $scratch/out and $scratch/err, status in $status).
# LJMPROF_TEST_WRAPPER (e.g. "valgrind -q --error-exitcode=99") goes
# before CMD: make check LJMPROF_TEST_WRAPPER=... runs the hosts under it.
under() {
	set +e
	if [ -n "${LJMPROF_TEST_WRAPPER:-}" ]; then
		# The NAME=VALUE words first, then the wrapper, then CMD.
		n=0
		for a in "$@"; do
			case $a in *=*) n=$((n + 1)) ;; *) break ;; esac
		done
		(
			i=0
			for a in "$@"; do
				[ $i -lt $n ] || break
				export "$a"
				i=$((i + 1))
			done
			shift $n
			exec env LD_PRELOAD="$shim_preload" $LJMPROF_TEST_WRAPPER "$@"
		) >"$scratch/out" 2>"$scratch/err"
	else
		env LD_PRELOAD="$shim_preload" "$@" >"$scratch/out" 2>"$scratch/err"
	fi
	status=$?
	if [ "$flavour_mismatch" = yes ]; then
		grep -Ev "$flavour_warning" "$scratch/err" >"$scratch/err.kept" || true
		mv "$scratch/err.kept" "$scratch/err"
	fi
	set -e
}

# plain CMD...: the same without the shim (to $scratch/out0, err0, status0).
plain() {
	set +e
	"$@" >"$scratch/out0" 2>"$scratch/err0"
	status0=$?
	set -e
}

have_cli() { [ -x "${LJMPROF_CLI:-}" ]; }

# stream_ok FILE: a complete, valid stream.
stream_ok() {
	[ -s "$1" ] || fail "$1: missing or empty"
	[ "$(head -c 3 "$1")" = ljs ] || fail "$1: no symbol table magic"
	[ "$(tail -c 1 "$1" | od -An -tx1 | tr -d ' ')" = 80 ] || fail "$1: no epilogue"
	# The space the shim allocates ahead of a stream is given back when
	# it ends (a step is 16 MiB; allow a file system's rounding).
	set -- "$1" $(stat -c '%b %B %s' "$1")
	[ $(($2 * $3)) -le $(($4 + 1048576)) ] ||
		fail "$1: $(($2 * $3)) bytes allocated for $4 bytes of stream"
	if have_cli; then
		"$LJMPROF_CLI" stat "$1" >"$scratch/stat" 2>&1 ||
			{ cat "$scratch/stat" >&2; fail "$1: ljmprof stat failed"; }
		grep -q '^stream: *complete' "$scratch/stat" ||
			{ cat "$scratch/stat" >&2; fail "$1: not complete"; }
		n=$(sed -n 's/^events: *//p' "$scratch/stat")
		[ "${n:-0}" -gt 0 ] || fail "$1: no events"
	fi
}

# report FILE: the text report (to stdout).
report() {
	"$LJMPROF_CLI" report "$1"
}

# no_stray DIR FILES...: DIR holds exactly FILES (names).
only_files() {
	d=$1; shift
	want=$(for f in "$@"; do echo "$f"; done | LC_ALL=C sort)
	got=$(ls -A "$d" | LC_ALL=C sort)
	[ "$want" = "$got" ] || { echo "want: $want" >&2; echo "got: $got" >&2; fail "files in $d differ"; }
}

# Exactly one line on stderr, matching the extended regex.
one_message() {
	n=$(grep -c '^ljmprof: ' "$scratch/err" || true)
	[ "$n" = 1 ] || { cat "$scratch/err" >&2; fail "$n ljmprof: lines on stderr, wanted 1"; }
	grep -Eq "$1" "$scratch/err" || { cat "$scratch/err" >&2; fail "message does not match '$1'"; }
}

no_message() {
	if grep -q '^ljmprof: ' "$scratch/err"; then
		cat "$scratch/err" >&2
		fail "unexpected ljmprof: message"
	fi
}

need_lhost() { [ -x "$lhost" ] || skip "no tests/hosts/lhost (no system libluajit-5.1-dev)"; }

# allocs REPORT SUFFIX: number of allocation events at the location whose
# name ends with SUFFIX (e.g. toggle.lua:11), from a text report; 0 if none.
allocs() {
	awk -v loc="$2" '
		/^ALLOCATIONS/ { on = 1; next }
		/^[A-Z]+$/ { on = 0 }
		on && index($0, loc ": ") { sub(/.*: /, ""); n += $1 }
		END { print n + 0 }' "$1"
}

# byte_rows FILE: "BYTES NAME" per location, allocated bytes (allocations and
# reallocations' new sizes), largest first, from the JSON report.
byte_rows() {
	"$LJMPROF_CLI" report --format=json "$1" >"$1.json" ||
		fail "report --format=json $1 failed"
	awk '
		/^    \{"name": / { n = $0; sub(/^    \{"name": "/, "", n); sub(/".*/, "", n) }
		/^     "alloc": \{"count"/ { a = $0; sub(/.*"bytes": /, "", a); sub(/\}.*/, "", a); b[n] += a }
		/^     "realloc": \{"count"/ { r = $0; sub(/.*"new_bytes": /, "", r); sub(/,.*/, "", r); b[n] += r }
		END { for (k in b) print b[k], k }' "$1.json" | sort -rn >"$1.rows"
}

# need_host PROGRAM PACKAGE: skip unless PROGRAM exists and loads the
# system's libluajit-5.1.so.2 dynamically (so the shim can serve it).
need_host() {
	p=$(command -v "$1" 2>/dev/null) || skip "$1 not installed (Debian package $2)"
	ldd "$p" 2>/dev/null | grep -q 'libluajit-5\.1\.so\.2' ||
		skip "$p does not link libluajit-5.1.so.2 dynamically"
}

# Call stacks (LJMPROF_STACKS) on the hosts.

# stream_ext FILE: stream_ok, and the stream is the profile extension
# (version byte 0x80), as LJMPROF_STACKS asks.
stream_ext() {
	stream_ok "$1"
	v=$(od -An -tx1 -j3 -N1 "$1" | tr -d ' ')
	[ "$v" = 80 ] || fail "$1: version byte 0x$v, not 0x80: no call stacks"
}

# has_stack ERE FILES...: a line of the folded output of FILES (root
# first, frames separated by ';', then the bytes allocated) matches ERE.
has_stack() {
	re=$1; shift
	"$LJMPROF_CLI" report --format=folded "$@" >"$scratch/folded" ||
		fail "report --format=folded $* failed"
	grep -Eq "$re" "$scratch/folded" ||
		{ head -n 40 "$scratch/folded" >&2; fail "no stack matching '$re' in the folded output of $*"; }
}

# has_caller LOC ERE FILES...: the merged text report lists, under the
# allocating location whose name ends with LOC (e.g. work.lua:2), a call
# path (leaf first, frames separated by ' <- ') matching ERE, among its
# first 50 paths (with the JIT on, a line reached through traces has
# more paths than the report's default 3).
has_caller() {
	loc=$1 re=$2; shift 2
	"$LJMPROF_CLI" report --merge --callers=50 "$@" >"$scratch/callers" ||
		fail "report --merge $* failed"
	awk -v loc="$loc" '
		/^ALLOCATIONS/ { on = 1; next }
		/^[A-Z]+$/ { on = 0 }
		on && /^[^\t]/ { at = index($0, loc ": ") > 0 }
		on && at && /^\t\t/' "$scratch/callers" >"$scratch/paths"
	grep -Eq "$re" "$scratch/paths" ||
		{ cat "$scratch/paths" >&2; fail "no call path under $loc matching '$re' in the report of $*"; }
}
