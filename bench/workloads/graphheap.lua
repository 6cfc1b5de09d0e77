-- Workload of `make bench-graph` (bench/graph): the heap of bigheap.lua
-- (about 1.1 GB at scale 1: strings, tables with hash and array parts,
-- closures with upvalues, all live), then two streams of misc.memprof:
-- arg[2] with a snapshot of the census only, arg[3] with one that writes
-- the heap graph too; then the same two to /dev/null, where writing
-- costs nothing: what the writer itself takes. Prints the heap and each
-- snapshot's CPU time (os.clock around misc.memprof.snapshot): the
-- graph's cost is the difference.
local scale = tonumber(arg[1]) or 1
local N = math.floor(2400000 * scale)

local keep = dofile((arg[0]:match("^(.*)/") or ".") .. "/bigrows.lua")(N)
local kb = collectgarbage("count")

local function timed(file, graph)
  assert(misc.memprof.start(file, { stacks = 1 }))
  local c0 = os.clock()
  assert(misc.memprof.snapshot({ graph = graph }))
  local t = os.clock() - c0
  assert(misc.memprof.stop())
  return t
end
local census = timed(arg[2], false)
local graph = timed(arg[3], true)
local ncensus = timed("/dev/null", false)
local ngraph = timed("/dev/null", true)
io.write(string.format("graphheap: heap %.0f bytes in %d rows; census CPU "
  .. "%.3f s, census and graph CPU %.3f s; to /dev/null %.3f s, %.3f s\n",
  kb * 1024, N, census, graph, ncensus, ngraph))
