-- N objects of each kind on known lines (tests/tools/kinds.test).
local ffi = require("ffi")
local N = tonumber(arg[1]) or 400
local K = require("table.new")(6 * N, 0)
local _ = ffi.new("int[4]"), newproxy(false), "k" .. 0
local n = 0
for i = 1, N do
  K[n + 1] = {}
  K[n + 2] = "k" .. i
  K[n + 3] = ffi.new("int[4]")
  n = n + 3
end
for i = 1, N do
  local u = i
  K[n + 1] = function() return u end
  K[n + 2] = coroutine.create(K[n + 1])
  K[n + 3] = newproxy(false)
  n = n + 3
end
KEEP = K
