# bench/lines.awk: of `ljmprof report --group=line --format=json` on one
# stream, the allocation and reallocation events charged to a Lua line
# (issue 36) and their bytes (issue 37), for bench/run and bench/nginx
# (see bench/README.md).
#
# The JSON as the report lays it out (doc/json-schema.md): a location
# begins with its name, kind and line on one line, its "alloc" and
# "realloc" on lines of their own. Counts the alloc and realloc (their
# count; their bytes: alloc.bytes plus realloc.new_bytes) of the
# locations of kind lua with a line above 0, and of all locations, which
# must add up to the summary's events.alloc plus events.realloc, and its
# bytes_allocated, on a complete stream. Prints "LINE ALL LINEBYTES
# ALLBYTES" (the first two fields: events), or nothing when they do not.
# With -v locs=FILE, also writes to FILE each Lua line's events, a tab
# and its name ("@chunk:line"), one line each (nothing when it prints
# nothing).
#
# Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.

/^  "summary": \{/ { insum = 1 }
insum && /^    "complete": true/ { complete = 1 }
insum && /^    "events": \{/ {
  s = $0; sub(/.*"alloc": /, "", s); salloc = s + 0
  s = $0; sub(/.*"realloc": /, "", s); srealloc = s + 0
  total = salloc + srealloc
}
insum && /^    "bytes_allocated": [0-9]+/ {
  s = $0; sub(/^[^:]*: /, "", s); tbytes = s + 0
}
insum && /^  \}/ { insum = 0 }
/^  "locations": \[/ { inloc = 1; next }
inloc && /^  \]/ { inloc = 0 }
inloc && /^    \{"name": / {
  isline = /"kind": "lua"/ && match($0, /"line": [0-9]+/) &&
    substr($0, RSTART + 8, RLENGTH - 8) + 0 > 0
  if (isline) {
    name = $0; sub(/^    \{"name": "/, "", name); sub(/", "kind": .*/, "", name)
    n++; names[n] = name; ev[n] = 0
  }
}
inloc && /^     "(alloc|realloc)": \{"count": / {
  s = $0; sub(/^[^:]*: \{"count": /, "", s); c = s + 0
  # The bytes: alloc's "bytes", realloc's "new_bytes" (what it made).
  s = $0; sub(/^[^:]*: \{"count": [0-9]+, "(bytes|new_bytes)": /, "", s)
  b = s + 0
  all += c; allb += b
  if (isline) { line += c; lineb += b; ev[n] += c }
}
END {
  if (complete && total != "" && all == total && all > 0 &&
      tbytes != "" && allb == tbytes) {
    print line, all, lineb + 0, allb
    if (locs != "") for (i = 1; i <= n; i++) print ev[i] "\t" names[i] > locs
  }
}
