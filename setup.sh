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
binutils libluajit-5.1-dev luajit protobuf-c-compiler libprotobuf-c-dev
zlib1g-dev libncurses-dev"
# What make check runs besides: real hosts that embed the system LuaJIT
# (neovim, sysbench, wrk, python3-lupa, and lua-cjson and lua-lpeg for
# Lua code that loads a C module: lpeg allocates its compiled patterns
# through the pair lua_getallocf gives), clang with libFuzzer's runtime for the fuzzer,
# valgrind, g++ for the C++ module of LuaJIT's own test suite. Installed
# after LuaJIT, so that the hosts' "libluajit-5.1-2 | libluajit2-5.1-2"
# is already met by the flavour in place: nothing here may replace it.
# pdns-recursor and dnsdist are servers the tests stop the way a service
# manager does (bind9-dnsutils: dig, to query them on loopback). nginx
# (which needs no LuaJIT itself) and curl for the nginx tests; its Lua
# module is unpacked below, not installed. golang-go for go tool pprof,
# which reads what `report --format=pprof` writes; libxml2-utils for
# xmllint, which parses what `report --format=svg` writes; chromium, the
# browser that loads what `report --format=html` writes, headless, and in
# which dhat.test opens what `report --format=dhat` writes in valgrind's
# dh_view.html. tmux, the terminal in which top.test drives
# `ljmprof top`'s screen. The arm64, i386 and armhf cross toolchains and
# qemu-user for the cross tests (tests/build/cross-*.test), which build
# the VM and the shim for them and run them under emulation
# (libc6-dev-i386 and lib32gcc-12-dev: the "gcc -m32" that builds
# LuaJIT's tools for i386; gcc-multilib would give it too, but conflicts
# with gcc-i686-linux-gnu).
testdeps="neovim sysbench wrk python3-lupa lua-cjson lua-lpeg clang libclang-rt-14-dev
valgrind g++ pdns-recursor dnsdist bind9-dnsutils nginx curl golang-go
libxml2-utils chromium tmux gcc-aarch64-linux-gnu libc6-dev-arm64-cross
gcc-i686-linux-gnu libc6-dev-i386-cross libc6-dev-i386 lib32gcc-12-dev
gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user-static"

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
# nginx's Lua module and what it loads, unpacked into build/nginx-lua for
# the nginx tests, never installed (that would replace Debian's LuaJIT).
../buildtools/get-nginx-lua nginx-lua ||
	echo "setup: could not fetch nginx's Lua module; the nginx tests will skip"
# memlab's heap snapshot parser, which retainers.test loads what `report
# --format=heapsnapshot` writes with, from the npm registry into
# build/memlab (never installed system-wide; no browser download).
if [ ! -d memlab/node_modules/@memlab/heap-analysis ]; then
	if command -v npm >/dev/null; then
		PUPPETEER_SKIP_DOWNLOAD=1 npm install --prefix memlab --no-audit \
			--no-fund --loglevel=error @memlab/heap-analysis@2.0.5 >/dev/null ||
			echo "setup: could not install memlab; retainers.test will skip its memlab part"
	else
		echo "setup: no npm: retainers.test will skip its memlab part"
	fi
fi
make -j2
make demo
cd "$top"
echo
echo "setup: done. Run the tests with: make -C build -j2 check"
