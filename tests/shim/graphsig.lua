-- tests/shim/graphsig.test: snapshots with the heap graph taken at the
-- VM's allocations while it makes every kind of object (coroutines mid
-- creation, closures with upvalues, tables with hash parts and weak
-- modes, strings), by LJMPROF_SNAPSHOT_SIGNAL (USR2) with LJMPROF_GRAPH:
-- the script sends itself the signal every 25 rows. arg[1] = "off": the
-- JIT off.
if arg[1] == "off" then jit.off() end
local ffi = require("ffi")
ffi.cdef[[int kill(int pid, int sig); int getpid(void);]]
local pid = ffi.C.getpid()
local keep = {}
for i = 1, 2000 do
  local co = coroutine.create(function(a)
    local t = { a, tostring(a), { a } }
    coroutine.yield(t)
    return t
  end)
  keep[i % 300 + 1] = {
    co = co,
    f = function() return i, co end,
    t = setmetatable({ x = i, [i] = tostring(i) },
                     { __mode = i % 2 == 0 and "k" or "v" }),
  }
  coroutine.resume(co, i)
  if i % 25 == 0 then ffi.C.kill(pid, 12) end
end
print("done")
