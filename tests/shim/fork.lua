-- Run by forkhost: returns f(who), which allocates at lines of a chunk
-- named after who, so that each stream shows whose events it holds.
local code = [[
local t = {}
for i = 1, 20000 do t[i % 700 + 1] = ("w"):rep(i % 80) .. i end
return #t
]]
return function(who)
  local f = assert(load(code, "=" .. who))
  local n = 0
  for _ = 1, 3 do n = n + f() end
  return tostring(n)
end
