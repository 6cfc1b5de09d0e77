-- string.dump and load of bytecode, stripped and not.
local function mk(k)
  return function(x) local t = {} for i = 1, x do t[i] = k .. i end return #table.concat(t) end
end
local f = mk("key")
local bc = string.dump(f)
local g = assert(load(bc, "dumped"))
print(pcall(g, 10))
local src = "local a, b = ... return a * b, ('x'):rep(a)"
local h = assert(loadstring(src, "=src"))
local bc2 = string.dump(h, true)
local h2 = assert(load(bc2))
print(h2(3, 4))
for i = 1, 50 do
  local c = assert(load("return " .. i .. " * 2", "chunk" .. i))
  assert(c() == i * 2)
end
print("ok")
