-- Strings interned and dropped all along, for snapshot.test: a late
-- start lands anywhere in the collector's cycle, its string sweep too.
local keep = {}
for i = 1, 200000 do
  local s = "k" .. (i % 5000) .. "x"
  keep[i % 3000] = { s, tostring(i) }
end
print("done")
