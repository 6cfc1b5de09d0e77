-- Lines inside a trace (tracelines.test): three lines of one loop
-- allocate, one in a small function the trace inlines. arg[1]: "off"
-- runs it interpreted.
if arg[1] == "off" then jit.off() else jit.opt.start("hotloop=5") end
local sink = {}
local function pair(i)
  sink.n = i
  return {i, i}
end
for i = 1, 30000 do
  sink[1] = {i}
  sink[2] = "k" .. i
  sink[3] = pair(i)
end
