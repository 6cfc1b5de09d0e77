-- For dhat.test: N tables made on line 7 and kept to the end (stored
-- on line 8), and N strings made on line 12 and dropped.
local N = tonumber(arg[1])
local keep = {}
local function make(n)
  for i = 1, n do
    local t = {}
    keep[i] = t
  end
end
local function drop(n)
  for i = 1, n do local s = ("x"):rep(40) .. i end
end
make(N)
drop(N)
collectgarbage()
