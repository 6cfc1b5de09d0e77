-- Round trip of the profiler and the parser (tests/tools/roundtrip.test).
-- Run with the JIT off so that every allocation has a Lua line.

-- FORMAT.md section 5: a string chunk loaded under a name while
-- profiling; its prototypes are announced by symbol events.
local code = [[
local M = {
  tmp = string.rep("tmpstr", 100) -- line 2
}
function M.payload()
  local _ = string.rep("payloadstr", 100) -- line 6
end
return M
]]
local M = assert(load(code, "strchunk"))()
M.payload()

-- A chunk with no name: its text is the chunk name (an alias).
assert(load("local t = {}\nfor i = 1, 100 do t[i] = {i} end\nreturn t"))()

-- A leak: kept until the end.
keep = {}
for i = 1, 2000 do
  keep[i] = string.rep("x", 64) .. i -- the leak line
end
