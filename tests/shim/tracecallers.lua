-- Lines inside traces under two callers (tracelines.test): the loop of
-- work is compiled once and runs for each caller in turn, with nothing
-- allocated between the two. arg[1]: "off" runs it interpreted.
if arg[1] == "off" then jit.off() else jit.opt.start("hotloop=5") end
local sink = {}
local function work(n)
  for i = 1, n do
    sink[i % 8] = {i}
  end
end
local function first() work(50) end
local function second() work(50) end
-- Only work's loop is compiled: its callers run in the interpreter.
jit.off(first)
jit.off(second)
for _ = 1, 400 do
  first()
  second()
end
