-- Allocates, prints a checksum; exits with arg[1] (0 by default).
-- With arg[2] = "noexit", returns normally instead of calling os.exit.
local t = {}
for i = 1, 3000 do t[i] = ("x"):rep(i % 50) .. i end
local n = 0
for _, s in ipairs(t) do n = n + #s end
print("sum", n)
io.stderr:write("stderr line\n")
if arg and arg[2] == "noexit" then return end
os.exit(tonumber(arg and arg[1]) or 0)
