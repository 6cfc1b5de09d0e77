-- A synthetic server for the sampling test: requests that allocate and
-- drop a lot (churn), and one line that keeps about LEAK bytes a second
-- (arg[2], default 1 MB) for arg[1] seconds. The interpreter only, but
-- with arg[3] "jit": then the leak's line is found inside its trace.
if arg[3] ~= "jit" then jit.off() end
local secs = tonumber(arg[1]) or 5
local leak_rate = tonumber(arg[2]) or 1000000
local kept = {}
local clock = os.clock
local t0 = clock()
local leaked = 0
local function request(i)
  local parts = {}
  for j = 1, 40 do parts[j] = ("req %d part %d"):format(i, j) end
  return table.concat(parts, ",")
end
local function leak(n)
  kept[#kept + 1] = string.rep("L", n) .. #kept  -- Unique: not interned.
end
local i = 0
while true do
  local t = clock() - t0
  if t >= secs then break end
  for _ = 1, 50 do i = i + 1; request(i) end
  while leaked < leak_rate * t do leak(2000); leaked = leaked + 2000 end
end
-- A quiet moment, as an operator compares two: the garbage of the last
-- requests collected, so that what is held is what is kept.
collectgarbage()
