-- Coroutines: generators, wrap, errors inside, status.
local function gen(n)
  return coroutine.wrap(function()
    for i = 1, n do coroutine.yield(i, { i }) end
  end)
end
local sum = 0
for i, t in gen(1000) do sum = sum + i + t[1] end
print(sum)
local co = coroutine.create(function(a)
  local b = coroutine.yield(a + 1)
  error("inside " .. b)
end)
print(coroutine.resume(co, 1))
print(coroutine.resume(co, "co"))
print(coroutine.status(co))
local cos = {}
for i = 1, 200 do cos[i] = coroutine.create(function() return string.rep("c", i) end) end
local total = 0
for i = 1, 200 do local _, s = coroutine.resume(cos[i]) total = total + #s end
print(total)
