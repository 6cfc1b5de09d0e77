-- A workload that keeps what it makes: 3000 new strings at line 5 each run.
jit.off()
runs = (runs or 0) + 1
local t = {}
for i = 1, 3000 do t[i] = ("w"):rep(i % 50) .. (runs * 10000 + i) end
kept = t
