-- Ends the process in the middle of a workload, with the JIT on and live
-- allocations, as the global `how` (set by exithost) says:
--   os.exit  os.exit(7) from Lua, in a coroutine, under pcall, in a loop;
--   gc       os.exit(7) from a __gc metamethod that a collection step runs;
--   quit     quit(7), a C function of the host that calls exit(7);
--   alloc    the host's allocator calls exit(8) in the middle of an
--            allocation (the loop runs until it does).
-- 3000 allocations at line 11 first, then "working" on stdout.
local keep = {}
local function work(n)
  for i = 1, n do keep[#keep + 1] = ("m"):rep(i % 40) .. i end
end
work(3000)
io.stdout:write("working\n"); io.stdout:flush()
if how == "gc" then
  local p = newproxy(true)
  getmetatable(p).__gc = function() os.exit(7) end
  p = nil
end
local co = coroutine.wrap(function()
  pcall(function()
    for i = 1, 1e9 do
      keep[i % 5000 + 1] = ("x"):rep(i % 30) .. i
      if i == 20000 then
        if how == "os.exit" then os.exit(7) elseif how == "quit" then quit(7) end
      end
    end
  end)
end)
co()
io.stdout:write("returned\n")
