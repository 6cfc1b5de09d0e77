-- Workload (a): string building: concatenation, string.format,
-- table.concat and gsub.
local C = dofile((arg[0]:match("^(.*)/") or ".") .. "/common.lua")
local mix, sample = C.mix, C.sample
local N = math.floor(1000000 * C.scale)
local h, parts, np = 0, {}, 0
local keep = {}
for i = 1, N do
  local s = "item" .. i .. ":" .. (i * 7 % 13)
  local f = string.format("%d|%s|%.2f", i, s, i / 3)
  np = np + 1
  parts[np] = f
  if np == 64 then
    local joined = table.concat(parts, ",")
    local g, n = joined:gsub("(%d+)|", "%1;")
    h = mix(h, #g + n)
    keep[i % 97] = g:sub(1, 40) .. s
    parts, np = {}, 0
    sample()
  end
end
C.finish("strings", h)
