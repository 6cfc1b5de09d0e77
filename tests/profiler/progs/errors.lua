-- Errors: pcall, xpcall with traceback, error objects, deep recursion.
local function thrower(n)
  local t = {}
  for i = 1, n do t[i] = { i } end
  error({ code = n })
end
for i = 1, 50 do
  local ok, e = pcall(thrower, i)
  assert(not ok and e.code == i)
end
print(pcall(error, "plain"))
print(select(2, pcall(function() local x = nil; return x.y end)))
print(xpcall(function() error("deep") end, function(m) return "handled: " .. m end))
local function rec(n) if n == 0 then error("bottom") end return rec(n - 1) + 1 end
print(pcall(rec, 10000))
local ok, e = pcall(function() local s = string.rep("x", 100) .. nil end)
print(ok, e)
print(pcall(string.rep))
