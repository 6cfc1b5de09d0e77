-- Workload (d): module loading: thousands of generated chunks, each with
-- its own chunk name, loaded with load() while running and called.
local C = dofile((arg[0]:match("^(.*)/") or ".") .. "/common.lua")
local mix, sample = C.mix, C.sample
local N = math.floor(250000 * C.scale)
local fmt = string.format
local h = 0
local loaded = {}
for i = 1, N do
  local src = fmt([[
local M = {}
local base = %d
function M.f(x) return x * base + %d end
function M.g(t)
  local r = {}
  for k = 1, #t do r[k] = t[k] + base end
  return r
end
M.name = "mod%d"
return M
]], i, i % 7, i)
  local fn = assert(load(src, fmt("@gen/mod%d.lua", i)))
  local m = fn()
  h = mix(h, m.f(2) + #m.g({ 1, 2, 3 }) + #m.name)
  if i % 4 == 0 then loaded[i % 512] = m end
  if i % 256 == 0 then sample() end
end
C.finish("modules", h)
