-- The workload of hostalloc.test: strings and tables made and dropped,
-- some kept, with the JIT on or off and as many rounds as the environment
-- says (the host passes no arguments).
if os.getenv("LIMIT_JIT") == "off" then jit.off() end
local keep = {}
for i = 1, tonumber(os.getenv("LIMIT_N") or 60000) do
  local s = string.rep("x", 40 + i % 300) .. i
  local t = { s, i, { i } }
  if i % 100 == 0 then keep[#keep + 1] = t end
end
return #keep
