#!/bin/sh
# setup.sh: from a fresh clone to a profiled demo, in one command.
#
# Installs the build dependencies and the programs the tests run (Debian;
# as root, or through sudo), fetches the distribution's LuaJIT source,
# configures and builds in ./build, then profiles the bundled demo and
# prints its report.
# Run it again at any time: each step does nothing when already done.
#
# Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.

set -eu
cd "$(dirname "$0")"
top=$(pwd)

deps="build-essential autoconf automake pkg-config check dpkg-dev patch
binutils libluajit-5.1-dev luajit"
# What make check runs besides: real hosts that embed the system LuaJIT
# (neovim, sysbench, wrk, python3-lupa, and lua-cjson for Lua code that
# loads a C module), clang with libFuzzer's runtime for the fuzzer,
# valgrind, g++ for the C++ module of LuaJIT's own test suite. Installed
# after LuaJIT, so that the hosts' "libluajit-5.1-2 | libluajit2-5.1-2"
# is already met by the flavour in place: nothing here may replace it.
# pdns-recursor and dnsdist are servers the tests stop the way a service
# manager does (bind9-dnsutils: dig, to query them on loopback). nginx
# (which needs no LuaJIT itself) and curl for the nginx tests; its Lua
# module is unpacked below, not installed.
testdeps="neovim sysbench wrk python3-lupa lua-cjson clang libclang-rt-14-dev
valgrind g++ pdns-recursor dnsdist bind9-dnsutils nginx curl"

# missing PACKAGES: those not installed.
missing() {
	command -v dpkg-query >/dev/null || return 0
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			printf ' %s' "$p"
	done
}
# install PACKAGES: apt-get install, as root or through sudo.
install() {
	echo "setup: installing $*"
	if [ "$(id -u)" = 0 ]; then
		sudo=
	elif command -v sudo >/dev/null; then
		sudo=sudo
	else
		echo "setup: please install as root: $*" >&2
		exit 1
	fi
	[ -n "${updated:-}" ] || { $sudo apt-get update -q; updated=yes; }
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "$@"
}

# The LuaJIT flavour already installed stays: libluajit-5.1-dev is only
# asked for when no LuaJIT development files are there.
# shellcheck disable=SC2086
m=$(missing $deps)
[ -z "$m" ] || install $m
# shellcheck disable=SC2086
m=$(missing $testdeps)
[ -z "$m" ] || install $m

buildtools/get-luajit-source
# OpenResty's flavour, which nginx's Lua module needs: configure builds a
# second shim from it, into build/luajit2/.
[ -f luajit2-src/src/lj_api.c ] ||
	buildtools/get-luajit-source --flavour=luajit2 --dest=luajit2-src ||
	echo "setup: could not fetch Debian's luajit2 source; only one flavour is built, and the nginx tests skip"
[ -x configure ] || autoreconf -fi
mkdir -p build
cd build
[ -f Makefile ] || ../configure
# nginx's Lua module and what it loads, with OpenResty's library for
# tests/build/exports.test: downloaded and unpacked into build/nginx-lua
# for the tests, never installed, since installing them would replace
# Debian's LuaJIT by OpenResty's.
ngxlua="libnginx-mod-http-lua libnginx-mod-http-ndk lua-resty-core
lua-resty-lrucache libluajit2-5.1-2"
if [ ! -f nginx-lua/.unpacked ]; then
	rm -rf nginx-lua
	mkdir nginx-lua
	# As root, apt's sandbox user could not write here.
	sandbox=
	[ "$(id -u)" != 0 ] || sandbox="-o APT::Sandbox::User=root"
	# shellcheck disable=SC2086
	if (cd nginx-lua && apt-get download -q $sandbox $ngxlua &&
		for d in *.deb; do dpkg -x "$d" root || exit 1; done &&
		touch .unpacked); then
		echo "setup: nginx's Lua module unpacked into build/nginx-lua"
	else
		echo "setup: could not fetch$(printf ' %s' $ngxlua); the nginx tests will skip"
	fi
fi
make -j2
make demo
cd "$top"
echo
echo "setup: done. Run the tests with: make -C build -j2 check"
