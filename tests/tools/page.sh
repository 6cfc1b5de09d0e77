# The HTML page in a real browser, for the shell tests: sourced by
# tests/tools/html.test and the host tests that check a host's page
# (nvim.test). The caller sets $scratch (a scratch folder), $cli (ljmprof)
# and defines fail(). Where there is no Chromium, $browser is empty and
# page_check says so and checks only what needs no browser.
#
# Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.

browser=
for b in chromium chromium-browser; do
	command -v $b >/dev/null 2>&1 && { browser=$b; break; }
done
# Why there is no browser, for the notes.
no_browser="no chromium (Debian: chromium)"
# A sanitizer build opens no page: the browser runs the page's script,
# which no sanitizer sees, and the plain build's make check opens the
# same pages (.ci/run runs both). The CLI that writes them still runs.
if [ "${LJMPROF_SANITIZED:-no}" = yes ]; then
	browser=
	no_browser="a sanitizer build: the browser sees nothing sanitized, the plain build opens the pages"
fi

# dom PAGE FRAGMENT: the page as headless Chromium leaves it after its
# script ran, into $scratch/dom; its #check attributes into $scratch/check.
dom() {
	case $1 in /*) url=file://$1$2 ;; *) url=file://$PWD/$1$2 ;; esac
	rm -rf "$scratch/profile"
	timeout 120 "$browser" --headless --disable-gpu --no-sandbox \
		--disable-background-networking --disable-component-update \
		--disable-sync --no-first-run \
		--user-data-dir="$scratch/profile" --window-size=1200,900 \
		--virtual-time-budget=5000 --dump-dom "$url" \
		>"$scratch/dom" 2>"$scratch/browser.err" ||
		{ fail "chromium on $1$2: exit $?"; tail -5 "$scratch/browser.err" >&2; return 1; }
	python3 - "$scratch/dom" >"$scratch/check" <<'PY'
import html.parser, sys
class P(html.parser.HTMLParser):
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get('id') == 'check':
            for k, v in attrs:
                if k.startswith('data-'):
                    print(k[5:] + '=' + v)
P().feed(open(sys.argv[1], encoding='utf-8').read())
PY
	grep -qx 'done=1' "$scratch/check" || { fail "$1$2: the script did not finish"; return 1; }
}
# got KEY: a value the page wrote.
got() { sed -n "s/^$1=//p" "$scratch/check"; }

# expect KEY VALUE WHAT
expect() {
	v=$(got "$1")
	[ "$v" = "$2" ] || fail "$3: page says $1=$v, expected $2"
}

# page_want BIN: what the page must show, from `report --format=json`
# (and --at=peak) of the same stream, into $scratch/want.
page_want() {
	"$cli" report --format=json "$1" >"$scratch/r.json"
	"$cli" report --format=json --at=peak "$1" >"$scratch/peak.json"
	python3 - "$scratch/r.json" "$scratch/peak.json" >"$scratch/want" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2]))
L = r['locations']
def top(ls, f):
    best = max(ls, key=f)
    return best['name'], f(best)
s = r['summary']
print('bytes_allocated=%d' % s['bytes_allocated'])
print('allocations=%d' % (s['events']['alloc'] + s['events']['realloc']))
print('held=%d' % sum(l['held']['bytes'] for l in L))
n, v = top(L, lambda l: l['alloc']['bytes'] + l['realloc']['new_bytes'])
print('top-name=%s' % n); print('top-value=%d' % v)
n, v = top(L, lambda l: l['held']['bytes'])
print('leaks-name=%s' % n); print('leaks-value=%d' % v)
n, v = top(L, lambda l: l['temporary']['count'])
print('temp-name=%s' % n); print('temp-value=%d' % v)
print('peak_event=%d' % p['summary']['peak_event'])
print('peak_bytes=%d' % p['summary']['peak_live_bytes'])
n, v = top(p['locations'], lambda l: l['held']['bytes'])
print('live-name=%s' % n); print('live-value=%d' % v)
paths = [q['held']['bytes'] for l in p['locations'] for q in l.get('paths', [])]
print('path-value=%d' % (max(paths) if paths else 0))
PY
}
want() { sed -n "s/^$1=//p" "$scratch/want"; }

# page_check BIN PAGE WHAT: PAGE, written from BIN, is under 5 MB, has no
# URL in it, and (with a browser) opened at the peak draws the numbers of
# `report --format=json`: the flame graph's root in each of its four
# views, the first rows of the top, leak and temporary tables, the peak's
# moment and the largest location (and, with stacks, call path) live then,
# the chart's peak. 1 where the browser part could not run.
page_check() {
	size=$(wc -c <"$2")
	[ "$size" -lt 5000000 ] || fail "$3: the page is $size bytes"
	if grep -Eio '[a-z]+://|//[a-z0-9.-]+\.[a-z]{2,}|\b(javascript|data|blob):|\b(src|href|action|srcset)=|url\(|@import' "$2" >"$scratch/urls"; then
		fail "$3: URLs in the page: $(sort -u "$scratch/urls" | head -5 | tr '\n' ' ')"
	fi
	page_want "$1"
	[ -n "$browser" ] || { echo "note: $no_browser: $3's page is not opened" >&2; return 1; }
	dom "$2" '#at=peak' || return 1
	expect flame-view 0 "$3"
	expect flame-root "$(want bytes_allocated)" "$3, flame graph"
	expect top-name "$(want top-name)" "$3, top table"
	expect top-value "$(want top-value)" "$3, top table"
	expect leaks-name "$(want leaks-name)" "$3, leaks"
	expect leaks-value "$(want leaks-value)" "$3, leaks"
	if [ "$(want temp-value)" != 0 ]; then
		expect temp-name "$(want temp-name)" "$3, temporary"
		expect temp-value "$(want temp-value)" "$3, temporary"
	else
		expect temp-rows 0 "$3, no temporary allocations"
	fi
	expect moment-peak 1 "$3, #at=peak"
	expect moment-event "$(want peak_event)" "$3, #at=peak"
	expect moment-bytes "$(want peak_bytes)" "$3, #at=peak"
	expect live-name "$(want live-name)" "$3, live at the peak"
	expect live-value "$(want live-value)" "$3, live at the peak"
	expect chart-peak "$(want peak_bytes)" "$3, chart"
	if [ "$(want path-value)" != 0 ]; then
		expect path-value "$(want path-value)" "$3, path live at the peak"
	fi
	[ "$(got flame-drawn)" -gt 1 ] || fail "$3: flame graph of $(got flame-drawn) frames"
	cp "$scratch/check" "$scratch/check.peak"
	dom "$2" '#view=1' || return 1
	expect flame-root "$(want allocations)" "$3, flame graph of allocations"
	dom "$2" '#view=2' || return 1
	expect flame-root "$(want held)" "$3, flame graph of held bytes"
	dom "$2" '#view=3' || return 1
	expect flame-root "$(want peak_bytes)" "$3, flame graph at the peak"
	cp "$scratch/check.peak" "$scratch/check"
}
