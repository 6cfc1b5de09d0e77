-- Lines inside traces in the leaf-only stream (traceleaf.test). A loop
-- makes a table, grows another and, every fourth time, in a side trace,
-- builds two strings on two lines (a concatenation, then string.format):
-- run before profiling starts (its traces are older than the stream),
-- then while profiling, then after jit.flush() (compiled again, under
-- the same numbers). A loop makes a closure, which aborts its trace.
-- Another makes two tables on two lines with nothing stored in between,
-- compiled before profiling starts: the writer has only the trace's
-- snapshots to go by, cannot tell the two lines apart, and leaves their
-- events to the trace. A loop compiled while profiling builds two
-- strings on two lines with nothing stored in between: each its own.
-- arg[1]: the stream; arg[2]: "off" runs it all interpreted.
local out, mode = arg[1], arg[2]
if mode == "off" then jit.off() else jit.opt.start("hotloop=5", "hotexit=2") end
local sink, grow = {}, {}
local function work(n)
  for i = 1, n do
    sink[1] = {i}
    grow[#grow + 1] = i
    if i % 4 == 0 then
      local s = "s" .. i
      sink[2] = ("<%s>"):format(s)
    end
  end
end
local function unsure(n)
  for i = 1, n do local t = {}
    sink[5] = {t} end
end
local function strings(n)
  for i = 1, n do
    local s = "t" .. i
    sink[6] = ("[%s]"):format(s)
  end
end
work(1000)
unsure(1000)
assert(misc.memprof.start(out))
work(20000)
unsure(2000)
strings(20000)
jit.flush()
work(20000)
for i = 1, 2000 do
  sink[3] = {i}
  sink[4] = function() return i end
end
assert(misc.memprof.stop())
