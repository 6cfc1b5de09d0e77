-- The peak, the heap over time and temporary allocations end to end, for
-- tests/tools/analyses.test (run with the JIT off: line numbers matter).
-- The heap peaks in the middle: a lot allocated (line 9), freed, then a
-- little (line 14); line 15 makes temporary allocations (a buffer's
-- memory freed by the next event); line 16 makes garbage that the GC
-- frees later, which is no temporary.
local buffer = require("string.buffer")
local big = {}
for i = 1, 200 do big[i] = string.rep("x", 10000 + i) end -- line 9
big = nil
collectgarbage()
collectgarbage()
local small = {}
for i = 1, 20 do small[i] = string.rep("y", 100 + i) end -- line 14
for i = 1, 1000 do local b = buffer.new(64) b:free() end -- line 15
for i = 1, 1000 do local s = "s" .. i end -- line 16
