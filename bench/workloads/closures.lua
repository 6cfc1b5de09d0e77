-- Workload (c): closures and growing tables (reallocation heavy: array
-- and hash parts grow step by step).
local C = dofile((arg[0]:match("^(.*)/") or ".") .. "/common.lua")
local mix, sample = C.mix, C.sample
local N = math.floor(700000 * C.scale)
local keys = {}
for j = 1, 24 do keys[j] = "k" .. j end
local h = 0
local ring = {}
for i = 1, N do
  local t = {}
  for j = 1, 64 + i % 192 do t[j] = j end
  local m = {}
  for j = 1, 8 + i % 16 do m[keys[j]] = j end
  local n = #t
  local f = function(x) return x + i + n + m.k1 end
  local g = function(x) return f(x) * 2 end
  h = mix(h, g(1))
  ring[i % 64] = g
  if i % 256 == 0 then sample() end
end
C.finish("closures", h)
