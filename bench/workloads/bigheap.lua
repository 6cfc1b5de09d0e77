-- Workload of `make bench-snapshot` (bench/snapshot): a heap of about
-- 1 GB (at scale 1) of strings, tables and closures that all stay live,
-- then the profiler toggled on, so that the stream begins with a snapshot
-- of all of it. Run under the shim with LJMPROF_STACKS, LJMPROF_START=no
-- and LJMPROF_SIGNAL=USR2: the script sends itself the signal (through
-- os.execute, a child shell's kill) and the next allocation is the safe
-- point where the profiler starts and takes its snapshot.
--
-- It prints the heap (collectgarbage("count")) just before the toggle,
-- and the CPU time (os.clock) of the toggle less that of the same shell
-- command with kill -0 (which sends nothing): the cost of forking a shell
-- from a 1 GB process is in both, the snapshot only in the first.
local scale = tonumber(arg and arg[1]) or 1
local sig = os.getenv("BIGHEAP_SIGNAL") or "USR2"
local N = math.floor(2400000 * scale)

local keep = dofile((arg[0]:match("^(.*)/") or ".") .. "/bigrows.lua")(N)

local kb = collectgarbage("count")
local function cpu_of(cmd)
  local c0 = os.clock()
  os.execute(cmd)
  -- The signal is pending when the shell has exited; the safe point is
  -- the next allocation.
  local t = {}
  for j = 1, 64 do t[j] = { j } end
  return os.clock() - c0
end
local base = cpu_of("kill -0 $PPID")
local toggle = cpu_of("kill -" .. sig .. " $PPID")
io.write(string.format(
  "bigheap: heap %.0f bytes in %d rows; toggle CPU %.3f s, kill -0 %.3f s, "
  .. "snapshot CPU %.3f s\n", kb * 1024, N, toggle, base, toggle - base))
io.write(string.format("bigheap: heap after %.0f bytes\n",
                       collectgarbage("count") * 1024))
