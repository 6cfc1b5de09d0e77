-- Allocates 3000 strings at line 7, says "ready", then sleeps in 50 ms
-- steps, allocating one small table per step (a safe point), until it is
-- killed.
jit.off()
local ffi = require("ffi")
ffi.cdef[[int poll(void *fds, unsigned long nfds, int timeout);]]
local t = {} for i = 1, 3000 do t[i] = ("k"):rep(i % 40) .. i end
io.stdout:write("ready\n"); io.stdout:flush()
local n = 0
while true do
  ffi.C.poll(nil, 0, 50)
  n = n + 1
  t[n % 100 + 1] = {}
end
