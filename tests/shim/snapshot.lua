-- Builds a heap, then profiling starts: by LJMPROF_SIGNAL (USR2) sent to
-- itself (arg[1] = "signal"), or by LJMPROF_DELAY while it makes garbage
-- for up to arg[2] seconds (arg[1] = "wait"). Then it drops the tables.
-- Known objects: 2000 tables (line 11), 2000 closures (line 13).
jit.off()
local ffi = require("ffi")
ffi.cdef[[int kill(int pid, int sig); int getpid(void);
struct timespec { long s, ns; }; int clock_gettime(int, struct timespec *);]]
local N = 2000
T, F = {}, {}
for i = 1, N do T[i] = {i, i, i, i} end
for i = 1, N do
  local u = i F[i] = function() return u end
end
if arg[1] == "signal" then
  ffi.C.kill(ffi.C.getpid(), 12)
else
  local ts = ffi.new("struct timespec")
  local function now() ffi.C.clock_gettime(1, ts) return ts.s + ts.ns / 1e9 end
  local t0 = now()
  while now() - t0 < tonumber(arg[2]) do local g = {} end
end
for i = 1, N do T[i] = nil end
collectgarbage()
collectgarbage()
print("done")
