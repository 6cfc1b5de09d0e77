-- Tables: arrays, hashes, sort, weak tables, metatables.
local t = {}
for i = 1, 5000 do t[i] = (i * 7919) % 5003 end
table.sort(t)
print(t[1], t[2500], t[5000], #t)
local h = {}
for i = 1, 3000 do h["k" .. i] = i end
local sum = 0
for k, v in pairs(h) do sum = sum + v end
print(sum, h.k1234)
local mt = { __index = function(_, k) return k * 2 end }
local p = setmetatable({}, mt)
print(p[21], rawget(p, 21))
local weak = setmetatable({}, { __mode = "k" })
weak[{}] = 1
collectgarbage()
print(next(weak))
table.insert(t, 1, -1) table.remove(t)
print(t[1], #t, select("#", unpack(t, 1, 100)))
