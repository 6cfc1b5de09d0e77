-- Run by mthost with the global id: allocations at lines named after id.
local code = [[
local t = {}
for i = 1, 20000 do t[i % 500 + 1] = ("v"):rep(i % 64) .. i end
return #t
]]
local f = assert(load(code, "=vm" .. id))
local n = 0
for _ = 1, 5 do n = n + f() end
return tostring(n)
