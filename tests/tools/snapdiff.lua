-- tests/tools/snapdiff.test: under the shim (LJMPROF_STACKS), two
-- snapshots on demand, misc.memprof.snapshot(), with 1000 tables made in
-- between and the collector stopped; the counts it read just before each.
local keep = {}
for i = 1, 1000 do keep[i] = false end
collectgarbage() collectgarbage("stop")
local c1 = collectgarbage("count")
assert(misc.memprof.snapshot())
for i = 1, 1000 do keep[i] = {} end
local c2 = collectgarbage("count")
assert(misc.memprof.snapshot())
collectgarbage("restart")
io.write(string.format("%d %d\n", c1 * 1024, c2 * 1024))
