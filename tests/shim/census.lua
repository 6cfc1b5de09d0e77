-- A sysbench script for census.test: each worker thread builds a known
-- heap (warm-up: 1000 * (tid + 1) tables, closures and strings), says
-- so by a file ready.TID, waits for the file "go" (the test creates it
-- after it has toggled profiling on) and then reads its VM's
-- collectgarbage("count") at the moment its stream begins.
-- CENSUS_JIT=off: the JIT off in every VM.
if os.getenv("CENSUS_JIT") == "off" then jit.off() end
local ffi = require("ffi")
ffi.cdef[[int usleep(unsigned int usec); int access(const char *path, int mode);]]
local C = ffi.C

local function build(tid)
  local n = (tid + 1) * 1000
  keep = {tabs = {}, funcs = {}, strs = {}}
  for i = 1, n do keep.tabs[i] = {i, i + 1, x = i} end
  for i = 1, n do
    local u = i
    keep.funcs[i] = function() return u end
  end
  for i = 1, n do keep.strs[i] = ("s%d-%d"):format(tid, i) end
end

-- The VM acts on the toggle at its next allocation, and this loop makes
-- none (access() through the FFI, interpreted): the stream begins, with
-- its snapshot, at the table of line 30, just before it is allocated;
-- the count is read right after it. At most 30 s.
local function await(tid)
  for _ = 1, 3000 do
    if C.access("go", 0) == 0 then
      local t = {}
      local bytes = collectgarbage("count") * 1024
      -- One write a line: print's two writes interleave across threads.
      io.write(("census %d %d\n"):format(tid, bytes))
      return t
    end
    C.usleep(10000)
  end
  io.write(("census %d timeout\n"):format(tid))
end
jit.off(await)

local done = false
function event()
  if done then return end
  done = true
  local tid = sysbench.tid
  build(tid)
  -- No collection step until the count is read: the threshold is then
  -- twice the heap, far from the few allocations after it.
  collectgarbage()
  collectgarbage()
  local f = assert(io.open("ready." .. tid, "w"))
  f:close()
  await(tid)
end
