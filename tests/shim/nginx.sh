# Helpers for the nginx tests (sourced after shim.sh): Debian's nginx
# with the Lua module, its NDK, lua-resty-core and lua-resty-lrucache that
# setup.sh unpacked into $LJMPROF_NGINX_LUA/root (dpkg -x, never
# installed: they need OpenResty's LuaJIT, which would replace Debian's),
# served by the shim of OpenResty's flavour. A test runs in a network
# namespace of its own when it can (unshare -n: loopback only, fixed
# ports), else on ports of 127.0.0.1 taken from its pid. Bounded: nginx
# runs under timeout, every wait polls for at most ngx_secs seconds.

ngx_howto="run setup.sh, which installs nginx and unpacks the Lua module into build/nginx-lua (or set LJMPROF_NGINX_LUA to a folder whose root/ holds libnginx-mod-http-lua, libnginx-mod-http-ndk, lua-resty-core and lua-resty-lrucache, each unpacked with dpkg -x)"
PATH=$PATH:/usr/sbin
[ -n "${LJMPROF_SHIM_LUAJIT2:-}" ] && [ -f "$LJMPROF_SHIM_LUAJIT2" ] ||
	skip "no shim of OpenResty's flavour (luajit2): fetch its source with buildtools/get-luajit-source --flavour=luajit2 --dest=luajit2-src, then configure again (a sanitizer build leaves it out unless given --with-luajit2-src)"
command -v nginx >/dev/null || skip "nginx is not installed; $ngx_howto"
command -v curl >/dev/null || skip "no curl for the test client (apt-get install curl)"
ngx_root=${LJMPROF_NGINX_LUA:-/nonexistent}/root
ngx_mod=$ngx_root/usr/lib/nginx/modules/ngx_http_lua_module.so
ngx_ndk=$ngx_root/usr/lib/nginx/modules/ndk_http_module.so
[ -f "$ngx_mod" ] && [ -f "$ngx_ndk" ] && [ -f "$ngx_root/usr/share/lua/5.1/resty/core.lua" ] ||
	skip "no Lua module in $ngx_root; $ngx_howto"
ngx_preload=${LJMPROF_SAN_PRELOAD:+$LJMPROF_SAN_PRELOAD }$LJMPROF_SHIM_LUAJIT2

# The whole test again inside a network namespace with only loopback up.
if [ -z "${LJM_NGX_NETNS:-}" ] && unshare -n sh -c 'ip link set lo up' 2>/dev/null; then
	rm -rf "$scratch"
	LJM_NGX_NETNS=1 exec unshare -n sh "$0" "$@"
fi
if [ -n "${LJM_NGX_NETNS:-}" ]; then
	ip link set lo up
	ngx_port=8080
else
	ngx_port=$((20000 + $$ % 20000))
fi
ngx_port2=$((ngx_port + 1))
ngx_secs=20
[ -z "${LJMPROF_SAN_PRELOAD:-}" ] || ngx_secs=60

cd "$scratch"
mkdir -p logs tmp out
# The workers may run as nobody: they must reach the folder and write out/.
chmod 755 "$scratch"
chmod 1777 out tmp

# ngx_conf [USER]: nginx.conf around the http{} lines on stdin (@PORT@ and
# @PORT2@ are the two ports, @DIR@ this folder, where require finds
# modules too): a master with two workers, running as USER when root.
ngx_conf() {
	{
		echo "load_module $ngx_ndk;"
		echo "load_module $ngx_mod;"
		[ -z "${1:-}" ] || [ "$(id -u)" != 0 ] || echo "user $1 $(id -gn "$1");"
		cat <<EOF
daemon off;
master_process on;
worker_processes 2;
error_log $scratch/logs/error.log notice;
pid $scratch/nginx.pid;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $scratch/tmp;
  proxy_temp_path $scratch/tmp;
  fastcgi_temp_path $scratch/tmp;
  uwsgi_temp_path $scratch/tmp;
  scgi_temp_path $scratch/tmp;
  lua_package_path "$scratch/?.lua;$ngx_root/usr/share/lua/5.1/?.lua;;";
EOF
		sed -e "s|@PORT@|$ngx_port|g" -e "s|@PORT2@|$ngx_port2|g" -e "s|@DIR@|$scratch|g"
		echo "}"
	} >nginx.conf
}

# ngx_wait COND: poll COND for up to ngx_secs seconds.
ngx_wait() {
	n=0
	until eval "$1"; do
		n=$((n + 1))
		[ $n -lt $((ngx_secs * 10)) ] || { ngx_kill; fail "timed out waiting for: $1"; }
		sleep 0.1
	done
}

# ngx_get PATH: one request, the body on stdout.
ngx_get() {
	curl -fsS --max-time 5 "http://127.0.0.1:$ngx_port$1"
}

# ngx_start ENV...: nginx with the shim and ENV in the background (its
# stdout and stderr in nginx.out and nginx.err), once it answers /ping.
ngx_start() {
	rm -f nginx.pid
	timeout $((ngx_secs * 3)) env LD_PRELOAD="$ngx_preload" "$@" \
		nginx -p "$scratch" -c "$scratch/nginx.conf" >nginx.out 2>nginx.err &
	ngx_job=$!
	n=0
	until [ -s nginx.pid ] && curl -fs --max-time 1 "http://127.0.0.1:$ngx_port/ping" >/dev/null 2>&1; do
		n=$((n + 1))
		if [ $n -ge $((ngx_secs * 10)) ] || ! kill -0 $ngx_job 2>/dev/null; then
			ngx_kill
			cat nginx.err logs/error.log >&2 || true
			fail "nginx did not start"
		fi
		sleep 0.1
	done
	ngx_master=$(cat nginx.pid)
}

# ngx_signal ARG: nginx -s ARG, as a user runs it (the module needs the
# shim to load there too; without LJMPROF_OUT it is inert).
ngx_signal() {
	timeout $ngx_secs env LD_PRELOAD="$ngx_preload" \
		nginx -p "$scratch" -c "$scratch/nginx.conf" -s "$1" 2>>nginx.err ||
		fail "nginx -s $1: status $?"
}

# ngx_end: wait for the master to end; its status in ngx_status.
ngx_end() {
	set +e
	wait $ngx_job
	ngx_status=$?
	set -e
}

# ngx_kill: after a failure, nginx and its workers, which outlive a
# killed master (only processes that are still nginx's workers).
ngx_kill() {
	[ -z "${ngx_job:-}" ] || kill -9 "$ngx_job" 2>/dev/null || true
	[ ! -s "$scratch/nginx.pid" ] || kill -9 "$(cat "$scratch/nginx.pid")" 2>/dev/null || true
	for p in $(ngx_workers 2>/dev/null); do
		case $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) in
		'nginx: worker'*) kill -9 "$p" 2>/dev/null || true ;;
		esac
	done
}
# A test that fails while nginx runs leaves none of it behind.
ngx_cleanup() {
	if [ -n "${ngx_job:-}" ] && kill -0 "$ngx_job" 2>/dev/null; then
		ngx_kill
	fi
}
if [ -n "${LJMPROF_SAN_PRELOAD:-}" ]; then
	trap 'ngx_cleanup; san_reports' EXIT
else
	trap 'ngx_cleanup; rm -rf "$scratch"' EXIT
fi

# ngx_workers: the pids of the workers the master started so far.
ngx_workers() {
	sed -n 's/.*start worker process \([0-9]*\)$/\1/p' "$scratch/logs/error.log"
}

# ngx_quiet: nothing from the shim on nginx's stderr or in its error log
# but the flavour warning (by design: the system library is Debian's, the
# module OpenResty's, unpacked beside it).
ngx_quiet() {
	if grep -h 'ljmprof: ' nginx.err logs/error.log | grep -Ev "$flavour_warning"; then
		fail "messages from the shim"
	fi
}

# ngx_streams_ok FILES...: each a complete stream.
ngx_streams_ok() {
	for f in "$@"; do
		"$LJMPROF_CLI" stat "$f" >stat 2>&1 || { cat stat >&2; fail "$f does not read"; }
		grep -q '^stream: *complete' stat || { cat stat >&2; fail "$f is not complete"; }
	done
}

# ngx_allocs LINE FILES...: allocations at content_by_lua's or
# timer's LINE (a suffix like "):2") in the merged report of FILES.
ngx_allocs() {
	l=$1; shift
	"$LJMPROF_CLI" report --merge "$@" >merged
	allocs merged "$l"
}
