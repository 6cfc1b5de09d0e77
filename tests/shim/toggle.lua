-- Toggles profiling by sending itself LJMPROF_SIGNAL (USR2) between
-- three phases whose allocations are at lines 11 (a), 12 (b), 13 (c):
-- on, off, on. The JIT is off so that every event has its line.
jit.off()
local ffi = require("ffi")
ffi.cdef[[int kill(int pid, int sig); int getpid(void);]]
local USR2 = 12
local function toggle() ffi.C.kill(ffi.C.getpid(), USR2) end
local t = {}
local function phase(f) for i = 1, 3000 do t[i % 300 + 1] = f(i) end end
local function a(i) return ("a"):rep(i % 40) .. i end
local function b(i) return ("b"):rep(i % 40) .. i end
local function c(i) return ("c"):rep(i % 40) .. i end
phase(a)
toggle()
phase(b)
toggle()
phase(c)
print("done")
