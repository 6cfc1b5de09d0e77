-- The bundled demo: a request handler with a cache that is never trimmed.
-- ljmprof finds the leak at the line that fills the cache.

local cache = {}

local function render(id)
  local parts = {}
  for i = 1, 8 do
    parts[i] = ("<td>%d:%d</td>"):format(id, i)   -- garbage, collected
  end
  return table.concat(parts)
end

local function handle(id)
  local page = render(id)
  cache[#cache + 1] = ("request %d"):rep(4):format(id, id, id, id) -- the leak
  return #page
end

local bytes = 0
for id = 1, 20000 do
  bytes = bytes + handle(id)
end
collectgarbage()
print(("demo: served %d requests, %d bytes, %d cached entries"):format(20000, bytes, #cache))
