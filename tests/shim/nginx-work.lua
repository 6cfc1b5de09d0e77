-- Work that nginx's Lua module runs in coroutines of its own, for
-- tests/shim/nginx*.test: a timer's callback and a cosocket request to
-- a second server. Each keeps what it makes, so that its line shows up.
local M = {}
local kept, ticks = {}, {}
function M.tick(premature, n)
  ticks[#ticks + 1] = ("t"):rep(64) .. n
end
function M.fetch(port, n)
  local sock = ngx.socket.tcp()
  sock:settimeout(2000)
  assert(sock:connect("127.0.0.1", port))
  assert(sock:send("GET /pong HTTP/1.0\r\nHost: t\r\n\r\n"))
  local body = assert(sock:receive("*a"))
  sock:close()
  kept[#kept + 1] = body .. n
  return #body
end
return M
