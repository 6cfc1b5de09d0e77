-- FFI: cdata, structs, arrays, strings, callbacks.
local ffi = require("ffi")
ffi.cdef[[
typedef struct { int x, y; double w; } point;
int strlen(const char *s);
void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
]]
local pts = ffi.new("point[?]", 1000)
for i = 0, 999 do pts[i].x = i pts[i].y = -i pts[i].w = i / 2 end
local s = 0
for i = 0, 999 do s = s + pts[i].x * pts[i].w end
print(s, ffi.sizeof("point"), ffi.C.strlen("hello"))
local arr = ffi.new("int[10]", { 5, 3, 9, 1, 7, 2, 8, 6, 4, 0 })
local cmp = ffi.cast("int (*)(const void *, const void *)", function(a, b)
  return ffi.cast("const int *", a)[0] - ffi.cast("const int *", b)[0]
end)
ffi.C.qsort(arr, 10, 4, cmp)
cmp:free()
local out = {}
for i = 0, 9 do out[#out + 1] = arr[i] end
print(table.concat(out, " "), ffi.string(ffi.new("char[6]", "abcde")))
for i = 1, 300 do local b = ffi.new("uint8_t[?]", i) b[0] = i % 256 end
print(tonumber(ffi.new("int64_t", 2^40)), ffi.istype("point", pts[0]))
