-- Two runs of one program for tests/tools/diff.test: run as
-- `luajit diff.lua 1` and `luajit diff.lua 2`; the second runs one more
-- allocating loop, in the middle, so that the traces after it are
-- numbered differently. JIT on. Every loop is on one line, so that its
-- interpreted iterations and its trace are charged to that line.
local mode = tonumber(arg[1]) or 1
local table_new = require("table.new")
local N = 1000

-- Held to the end: preallocated, so filling them allocates nothing but
-- the tables put in them.
keep_a = table_new(N, 0) -- line 12
keep_b = table_new(N, 0) -- line 13
keep_c = table_new(N, 0) -- line 14

for i = 1, N do keep_a[i] = {} end -- line 16
-- Garbage: allocated, dropped.
for i = 1, N do local t = {i, i} end -- line 18
if mode == 2 then
  for i = 1, N do keep_b[i] = {} end -- line 20: the grown line
end
for i = 1, N do keep_c[i] = {} end -- line 22
