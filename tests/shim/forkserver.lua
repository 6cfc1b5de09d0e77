-- A forking server, for fork.test: listens on 127.0.0.1 (a free port,
-- written to the file arg[1]), accepts arg[2] connections one by one and
-- forks a child for each, which answers from handle() and ends with
-- _exit, as such servers do; the parent waits for its children and
-- prints what they made of their requests.
local ffi = require "ffi"
ffi.cdef [[
struct ljm_sockaddr_in { uint16_t family, port; uint32_t addr; uint8_t zero[8]; };
int socket(int domain, int type, int protocol);
int setsockopt(int fd, int level, int name, const void *val, unsigned len);
int bind(int fd, const struct ljm_sockaddr_in *sa, unsigned len);
int getsockname(int fd, struct ljm_sockaddr_in *sa, unsigned *len);
int listen(int fd, int backlog);
int accept(int fd, void *sa, void *len);
long read(int fd, void *buf, size_t n);
long write(int fd, const void *buf, size_t n);
int close(int fd);
int fork(void);
int waitpid(int pid, int *status, int options);
void _exit(int status);
uint16_t htons(uint16_t v);
uint16_t ntohs(uint16_t v);
uint32_t htonl(uint32_t v);
]]
local C = ffi.C

local function answer(req, n)
  local parts = {}
  for i = 1, 50 do parts[i] = ("h"):rep(i % 16) .. n end
  return "reply " .. n .. " " .. #table.concat(parts) .. " to " .. req
end

local function handle(fd, n)
  local buf = ffi.new("char[256]")
  local got = tonumber(C.read(fd, buf, 255))
  local req = got > 0 and ffi.string(buf, got):match("^[^\r\n]*") or "?"
  local out = answer(req, n) .. "\n"
  C.write(fd, out, #out)
  C.close(fd)
end

local function listen_on(portfile)
  local fd = C.socket(2, 1, 0) -- AF_INET, SOCK_STREAM
  assert(fd >= 0, "socket")
  local sa = ffi.new("struct ljm_sockaddr_in")
  sa.family, sa.port, sa.addr = 2, C.htons(0), C.htonl(0x7f000001)
  assert(C.bind(fd, sa, ffi.sizeof(sa)) == 0, "bind")
  assert(C.listen(fd, 8) == 0, "listen")
  local len = ffi.new("unsigned[1]", ffi.sizeof(sa))
  assert(C.getsockname(fd, sa, len) == 0, "getsockname")
  local f = assert(io.open(portfile .. ".tmp", "w"))
  f:write(C.ntohs(sa.port), "\n")
  f:close()
  assert(os.rename(portfile .. ".tmp", portfile))
  return fd
end

local function serve(lfd, count)
  local pids = {}
  for n = 1, count do
    local fd = C.accept(lfd, nil, nil)
    assert(fd >= 0, "accept")
    local pid = C.fork()
    if pid == 0 then
      C.close(lfd)
      handle(fd, n)
      C._exit(0)
    end
    assert(pid > 0, "fork")
    C.close(fd)
    pids[#pids + 1] = pid
  end
  local ok, st = 0, ffi.new("int[1]")
  for _, pid in ipairs(pids) do
    if C.waitpid(pid, st, 0) == pid and st[0] == 0 then ok = ok + 1 end
  end
  return ok
end

local lfd = listen_on(arg[1])
print("served " .. serve(lfd, tonumber(arg[2])))
C.close(lfd)
