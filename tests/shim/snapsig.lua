-- tests/shim/snapsig.test: a heap, then two snapshots on demand by
-- LJMPROF_SNAPSHOT_SIGNAL, which the script sends itself (a child shell's
-- kill; the signal is pending when os.execute returns, and the next
-- allocation is the VM's safe point). Between the two, 1000 tables. It
-- prints collectgarbage("count") in bytes just before each signal: with
-- the collector stopped and the JIT off, nothing is allocated between the
-- count and the snapshot.
local sig = assert(os.getenv("SNAPSIG"))
local keep, pad = {}, {}
for i = 1, 1000 do keep[i] = false end
for i = 1, 200 do pad[i] = ("padding %d"):format(i) end
collectgarbage() collectgarbage("stop")
local cmd = "kill -" .. sig .. " $PPID"
local function snap()
  local c = collectgarbage("count")
  os.execute(cmd)
  local t = c .. ""  -- The safe point: a string, not a table.
  return c
end
local c1 = snap()
for i = 1, 1000 do keep[i] = {} end
local c2 = snap()
collectgarbage("restart")
io.write(string.format("%d %d\n", c1 * 1024, c2 * 1024))
