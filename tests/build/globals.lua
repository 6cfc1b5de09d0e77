-- Prints the names of the globals, of the loaded modules and of the
-- jit table's fields, sorted.
local names = {}
for k in pairs(_G) do names[#names + 1] = "_G." .. tostring(k) end
for k in pairs(package.loaded) do names[#names + 1] = "loaded." .. tostring(k) end
for k in pairs(jit) do names[#names + 1] = "jit." .. tostring(k) end
table.sort(names)
print(table.concat(names, "\n"))
