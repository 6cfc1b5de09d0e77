-- Strings: building, formatting, patterns, buffers.
local parts = {}
for i = 1, 2000 do
  parts[#parts + 1] = string.format("%05d:%s", i, string.rep("ab", i % 7))
end
local s = table.concat(parts, ",")
print(#s, s:sub(1, 40), s:sub(-30))
local n = 0
for w in s:gmatch("(%d+):abab") do n = n + tonumber(w) end
print(n, s:find("01000:", 1, true), (s:gsub("ab", "X")):len())
print(("hello"):upper(), ("%q"):format("a\nb"), tostring(1/3), 2^53)
local buf = require("string.buffer").new()
for i = 1, 100 do buf:put(i, " ") end
print(#buf:tostring(), buf:tostring():sub(1, 20))
