-- Lines inside traces in the leaf-only stream (traceleaf.test). A loop
-- makes a table, grows another and, every fourth time, in a side trace,
-- concatenates: run before profiling starts (its traces are older than
-- the stream), then while profiling, then after jit.flush() (compiled
-- again, under the same numbers). A loop makes a closure, which aborts its
-- trace; another makes two tables on two lines with nothing stored in
-- between, which the writer cannot tell apart: they stay the trace's.
-- arg[1]: the stream; arg[2]: "off" runs it all interpreted.
local out, mode = arg[1], arg[2]
if mode == "off" then jit.off() else jit.opt.start("hotloop=5", "hotexit=2") end
local sink, grow = {}, {}
local function work(n)
  for i = 1, n do
    sink[1] = {i}
    grow[#grow + 1] = i
    if i % 4 == 0 then
      sink[2] = "s" .. i
    end
  end
end
work(1000)
assert(misc.memprof.start(out))
work(20000)
jit.flush()
work(20000)
for i = 1, 2000 do
  sink[3] = {i}
  sink[4] = function() return i end
end
for i = 1, 2000 do local t = {}
  sink[5] = {t} end
assert(misc.memprof.stop())
