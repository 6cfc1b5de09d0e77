-- An ordinary program: its output and exit status must not change when
-- the shim is preloaded.
local t = {}
for i = 1, 2000 do t[i] = string.format("item %d", i) end
local s = table.concat(t, ",")
print(#s, s:sub(1, 20), s:sub(-10))
local co = coroutine.wrap(function(a) local b = coroutine.yield(a * 2); return b + 1 end)
print(co(21), co(41))
print(pcall(error, "boom"))
local ok, ffi = pcall(require, "ffi")
print(ok and ffi.sizeof("int") or "no ffi")
io.stderr:write("to stderr\n")
os.exit(tonumber(arg and arg[1]) or 0)
