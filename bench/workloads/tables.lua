-- Workload (b): many small tables, created and dropped (some survive for
-- a while in a ring, as in real programs).
local C = dofile((arg[0]:match("^(.*)/") or ".") .. "/common.lua")
local mix, sample = C.mix, C.sample
local N = math.floor(10000000 * C.scale)
local h = 0
local ring, ring2 = {}, {}
for i = 1, N do
  local t = { x = i, y = i + 1, z = { i } }
  local a = { i, i + 1, i + 2, i + 3 }
  ring[i % 1024] = t
  ring2[i % 512] = a
  local o = ring[(i + 1) % 1024]
  h = mix(h, t.x + a[4] + t.z[1] + (o and o.y or 0))
  if i % 4096 == 0 then sample() end
end
C.finish("tables", h)
