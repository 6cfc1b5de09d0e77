-- tests/tools/snapcount.test, snappeak.test: under the shim with stacks
-- and the JIT off, 1000 tables, one misc.memprof.snapshot() while they
-- are live (their census: 1000 blocks that are not events), then 2000
-- larger tables after it, the peak, and both dropped.
local keep = {}
for i = 1, 1000 do keep[i] = {i, i, i} end
assert(misc.memprof.snapshot())
local more = {}
for i = 1, 2000 do more[i] = {i, i, i, i} end
more, keep = nil, nil
collectgarbage()
print("done")
