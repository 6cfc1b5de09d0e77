-- Shared by the benchmark workloads: a scale factor from the command line,
-- a deterministic checksum, and the collector's behaviour (completed cycles,
-- peak of collectgarbage("count")) so that profiled and unprofiled runs can
-- be compared line for line.
local M = {}

M.scale = tonumber(arg and arg[1]) or 1

-- Count completed collection cycles: a garbage userdata whose finalizer
-- runs once per cycle and plants the next one.
local cycles = 0
local function sentinel()
  local p = newproxy(true)
  getmetatable(p).__gc = function() cycles = cycles + 1; sentinel() end
end
sentinel()

local peak = 0
function M.sample()
  local kb = collectgarbage("count")
  if kb > peak then peak = kb end
end

-- h*31 + x stays below 2^53 for x < 2^32: exact in a double.
function M.mix(h, x)
  return (h * 31 + x % 4294967296) % 4294967296
end

function M.finish(name, h)
  M.sample()
  io.write(string.format("%s checksum=%d gc_cycles=%d peak_kb=%d\n",
                         name, h, cycles, math.floor(peak)))
end

return M
