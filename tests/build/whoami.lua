-- Which VM serves this program? Prints the patched VM's marker (shown
-- while profiling and by the standalone library, hidden by the inert
-- shim) and the LuaJIT libraries mapped (libluajit-5.1.so*, and the shim,
-- libljmprof.so).
print("marker", tostring(jit.ljmprof))
local mapped = {}
for line in io.lines("/proc/self/maps") do
  local path = line:match("%s(/%S*libluajit%-5%.1%.so[.%d]*)$") or
	       line:match("%s(/%S*libljmprof%.so)$")
  if path then mapped[path] = true end
end
for path in pairs(mapped) do print("mapped", path) end
