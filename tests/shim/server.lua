-- A long-running "server": allocates until the file arg[1] exists.
local t, i = {}, 0
local f
repeat
  for _ = 1, 1000 do
    i = i + 1
    t[i % 500 + 1] = ("s"):rep(i % 60) .. i
  end
  f = io.open(arg[1])
until f
f:close()
print("served")
