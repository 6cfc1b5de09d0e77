-- A module of nginx-retainers.test: request data kept in a module-level
-- table (the leak a handler makes), and a snapshot with the heap graph
-- after each request. The lines matter: the test names line 5.
local M = { requests = {} }
function M.add(n) M.requests[#M.requests + 1] = { n = n, body = ("x"):rep(200) .. n }
  assert(misc.memprof.snapshot{ graph = true })
end
return M
