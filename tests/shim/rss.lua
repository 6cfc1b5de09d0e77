-- A host whose growth is outside the Lua heap: MiB mebibytes of C
-- memory (malloc, then filled so that it is resident) in 8 steps over
-- about 2 s, while the Lua heap stays flat (small strings made and let
-- go between the steps, so that the VM reaches its safe points).
-- Usage: rss.lua MIB [MISC_OUT]: with MISC_OUT, misc.memprof profiles
-- (with stacks, so time marks) into that file instead of the shim.
-- rss.lua lua MIB: the growth is Lua's instead, a table of strings of
-- 1 KiB kept (MIB mebibytes of them), in the same 8 steps.
local ffi = require("ffi")
ffi.cdef[[void *malloc(size_t); void free(void *);]]
local lua = arg[1] == "lua"
if lua then table.remove(arg, 1) end
local mib, misc_out = tonumber(arg[1]) or 64, arg[2]
if misc_out then assert(misc.memprof.start(misc_out, {stacks = true})) end
local steps, keep = 8, {}
local function idle(s)
  local t = os.clock() + s
  local n = 0
  while os.clock() < t do
    for j = 1, 20000 do n = n + j end
    local x = tostring(n) .. "x"  -- Garbage: the heap stays flat.
    n = n + #x
  end
end
idle(0.3)
for i = 1, steps do
  local sz = mib * 1048576 / steps
  if lua then
    local t, pad = {}, string.rep("s", 1000)
    for j = 1, sz / 1024 do t[j] = pad .. i .. ":" .. j end
    keep[i] = t
  else
    local p = ffi.C.malloc(sz)
    assert(p ~= nil, "malloc")
    ffi.fill(p, sz, i)
    keep[i] = p
  end
  idle(0.25)
end
idle(0.3)
if misc_out then assert(misc.memprof.stop()) end
print("done")  -- The buffers stay until the process ends.
