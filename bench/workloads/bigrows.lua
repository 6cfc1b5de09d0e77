-- The large heap of bench/workloads/bigheap.lua and graphheap.lua: n rows
-- of two strings, a table with a hash part, one with its array part, a
-- closure and its upvalue, all kept (about 1.1 GB for 2.4 million rows),
-- built with the collector stopped, then one full collection that frees
-- nothing. Returns the rows.
return function(n)
  collectgarbage("stop")  -- Build without collections: all of it is live.
  local keep = {}
  for i = 1, n do
    local s = string.format("key-%d-%x", i, i * 7919)
    local v = i
    keep[i] = {
      name = s,
      tag = s .. "/v",
      list = { i, i + 1, i + 2 },
      get = function() return v end,
    }
  end
  collectgarbage("restart")
  collectgarbage("collect")  -- Nothing to free: the objects are all held.
  return keep
end
