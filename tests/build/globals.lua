-- Prints the names of the globals and of the loaded modules, sorted.
local names = {}
for k in pairs(_G) do names[#names + 1] = "_G." .. tostring(k) end
for k in pairs(package.loaded) do names[#names + 1] = "loaded." .. tostring(k) end
table.sort(names)
print(table.concat(names, "\n"))
