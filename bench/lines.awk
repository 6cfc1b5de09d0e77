# bench/lines.awk: of `ljmprof report --group=line --format=json` on one
# stream, the allocation and reallocation events charged to a Lua line
# (issue 36), for bench/run and bench/nginx (see bench/README.md).
#
# The JSON as the report lays it out (doc/json-schema.md): a location
# begins with its name, kind and line on one line, its "alloc" and
# "realloc" on lines of their own. Counts the alloc and realloc of the
# locations of kind lua with a line above 0, and of all locations, which
# must add up to the summary's events.alloc plus events.realloc on a
# complete stream. Prints "LINE ALL", or nothing when they do not.
#
# Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.

/^  "summary": \{/ { insum = 1 }
insum && /^    "complete": true/ { complete = 1 }
insum && /^    "events": \{/ {
  s = $0; sub(/.*"alloc": /, "", s); salloc = s + 0
  s = $0; sub(/.*"realloc": /, "", s); srealloc = s + 0
  total = salloc + srealloc; insum = 0
}
/^  "locations": \[/ { inloc = 1; next }
inloc && /^  \]/ { inloc = 0 }
inloc && /^    \{"name": / {
  isline = /"kind": "lua"/ && match($0, /"line": [0-9]+/) &&
    substr($0, RSTART + 8, RLENGTH - 8) + 0 > 0
}
inloc && /^     "(alloc|realloc)": \{"count": / {
  s = $0; sub(/^[^:]*: \{"count": /, "", s)
  all += s; if (isline) line += s
}
END { if (complete && total != "" && all == total && all > 0) print line, all }
