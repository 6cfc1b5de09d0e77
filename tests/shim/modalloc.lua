-- modalloc.lua DIR ROUNDS: a C module's allocations through the pair
-- lua_getallocf gives it (DIR/amod.so), and lpeg's compiled patterns
-- when lua-lpeg is installed, among the VM's own. Prints "lpeg" or
-- "no lpeg".
package.cpath = arg[1] .. "/?.so;" .. package.cpath
local amod = require("amod")
local ok, lpeg = pcall(require, "lpeg")
local rounds = tonumber(arg[2])
local kept, strs = {}, {}
for i = 1, rounds do
  amod.churn(200 + i % 400, 4)
  strs[i % 100 + 1] = ("x"):rep(i % 300) .. i
  if i % 10 == 0 then kept[#kept + 1] = amod.keep(3000) end
  if i % 1000 == 0 then kept = {} collectgarbage() end  -- Their __gc frees.
  if ok and i % 4 == 0 then
    -- A new pattern: lpeg compiles it on its first match, through the pair.
    local p = (lpeg.P(tostring(i)) * lpeg.R("az") ^ 1 + lpeg.C(lpeg.R("09") ^ 1)) ^ 1
    p:match("abc" .. i)
  end
end
print(ok and "lpeg" or "no lpeg")
