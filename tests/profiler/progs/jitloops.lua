-- JIT-heavy loops that allocate: strings, tables, closures.
local acc = 0
local t = {}
for i = 1, 200000 do
  local s = "n" .. (i % 1000)
  acc = acc + #s
  if i % 100 == 0 then t[#t + 1] = { i, s } end
end
print(acc, #t, t[#t][2])
local function mkadd(n) return function(x) return x + n end end
local sum = 0
for i = 1, 100000 do sum = mkadd(i)(sum) % 1000003 end
print(sum)
local parts = {}
for i = 1, 50000 do parts[i] = tostring(i * 3) end
print(#table.concat(parts))
local x = 0
for i = 1, 1e6 do x = (x + i * 3) % 65536 end
print(x)
