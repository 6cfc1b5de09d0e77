-- Objects kept alive in known ways, then a snapshot with its heap graph
-- (retainers.test reads it with report --retainers). arg[1]: "off" runs
-- with the JIT off. The lines matter: the test names them.
if arg[1] == "off" then jit.off() end
local reg = debug.getregistry()
local function make(n)
  local held = {}                                     -- line 7
  for i = 1, n do held[i] = ("held %d"):rep(3):format(i, i, i) end  -- line 8
  return function() return held end                  -- line 9
end
-- A table kept by a closure kept by a coroutine kept by the registry.
reg.keeper = coroutine.create(function()
  local keep = make(300)
  coroutine.yield()
  return keep
end)
assert(coroutine.resume(reg.keeper))
-- Strings only a weak table holds: garbage, whatever the table.
weakv = setmetatable({}, {__mode = "v"})
for i = 1, 200 do weakv[i] = ("weak %d"):rep(3):format(i, i, i) end  -- line 20
-- A cycle nothing holds (made in a coroutine that has finished).
coroutine.wrap(function()
  for i = 1, 50 do
    local a, b = {}, {}                               -- line 24
    a.other, b.other = b, a
  end
end)()
-- A module's table, as package.loaded has it.
package.loaded["app.cache"] = { entries = {} }
for i = 1, 100 do
  package.loaded["app.cache"].entries[i] = ("entry %d"):rep(3):format(i, i, i)  -- line 31
end
assert(misc.memprof.snapshot{graph = true})
print("done")
