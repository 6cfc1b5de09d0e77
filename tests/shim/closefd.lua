-- Closes the fd that writes arg[1] behind the shim's back and opens
-- arg[2] in its place (so the number now means another file), then
-- allocates enough to make the profiler flush.
local ffi = require("ffi")
ffi.cdef[[
int close(int fd);
long readlink(const char *path, char *buf, size_t n);
int open(const char *path, int flags, int mode);
]]
local buf = ffi.new("char[4096]")
local found = 0
for fd = 3, 1023 do
  local n = tonumber(ffi.C.readlink("/proc/self/fd/" .. fd, buf, 4096))
  if n > 0 and ffi.string(buf, n) == arg[1] then
    ffi.C.close(fd)
    assert(ffi.C.open(arg[2], 65, 420) == fd)	-- O_WRONLY|O_CREAT, 0644
    found = found + 1
  end
end
local t = {}
for i = 1, 200000 do t[i % 1000 + 1] = ("z"):rep(i % 100) .. i end
print("closed", found)
