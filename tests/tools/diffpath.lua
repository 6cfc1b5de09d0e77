-- Two runs of one program for tests/tools/diffpath.test, recorded with
-- call stacks: `luajit diffpath.lua 1` and `luajit diffpath.lua 2`. One
-- allocating line (line 12) is reached along two paths; the second run
-- makes 1000 more tables along one of them (through grow, line 18) and
-- compiles a loop of its own first, so that its traces are numbered
-- differently. JIT on.
local mode = tonumber(arg[1]) or 1
local table_new = require("table.new")
keep = table_new(4000, 0) -- Preallocated: filling it allocates nothing.

local function make(n)
  for i = 1, n do keep[#keep + 1] = {} end -- line 12: the allocating line
end
local function steady()
  make(500) -- line 15
end
local function grow()
  make(mode == 2 and 1500 or 500) -- line 18: the grown path
end

if mode == 2 then
  local x = 0
  for i = 1, 1000 do x = x + i end -- line 23: one more trace, first
end
steady()
grow()
