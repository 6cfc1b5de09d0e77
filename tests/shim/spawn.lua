-- Starts other programs the ways Lua code does: io.popen and os.execute
-- of programs that create no VM, and os.execute of a luajit that does
-- (arg[1], running arg[2]).
local t = {}
for i = 1, 1000 do t[i] = "p" .. i end
local p = io.popen("echo popen")
print(p:read("*l"))
p:close()
print(os.execute("true"))
print(os.execute("'" .. arg[1] .. "' '" .. arg[2] .. "'"))
