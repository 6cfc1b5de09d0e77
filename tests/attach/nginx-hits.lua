-- A module of tests/attach/nginx-attach.test: each request keeps a table
-- and a string (line 5), the leak a handler makes.
local M = { kept = {} }
function M.add(n)
  M.kept[#M.kept + 1] = { n = n, body = ("x"):rep(100) .. n }
  return #M.kept
end
return M
