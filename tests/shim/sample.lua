-- A deterministic workload for the sampling test: twelve lines that
-- allocate strings, each about 1.3 times the bytes of the next, among
-- short-lived tables, the interpreter only (no traces, so that two runs
-- make the same calls). Every string is new: a pad of the line's own
-- letter and the round's number, written by one concatenation into the
-- VM's buffer, so that no call finds its string already interned and
-- each makes exactly one allocation.
jit.off()
local sink = {}
local function pads(c, base, m)
  local p = {}
  for k = 0, m - 1 do p[k] = string.rep(c, base + k) end
  return p
end
local p1, p2, p3 = pads("a", 1200, 97), pads("b", 900, 89), pads("c", 700, 83)
local p4, p5, p6 = pads("d", 540, 79), pads("e", 410, 73), pads("f", 310, 71)
local p7, p8, p9 = pads("g", 240, 67), pads("h", 180, 61), pads("i", 140, 59)
local p10, p11, p12 = pads("j", 105, 53), pads("k", 80, 47), pads("l", 60, 43)
local function s1(i) sink[i % 64] = p1[i % 97] .. i end
local function s2(i) sink[i % 64] = p2[i % 89] .. i end
local function s3(i) sink[i % 64] = p3[i % 83] .. i end
local function s4(i) sink[i % 64] = p4[i % 79] .. i end
local function s5(i) sink[i % 64] = p5[i % 73] .. i end
local function s6(i) sink[i % 64] = p6[i % 71] .. i end
local function s7(i) sink[i % 64] = p7[i % 67] .. i end
local function s8(i) sink[i % 64] = p8[i % 61] .. i end
local function s9(i) sink[i % 64] = p9[i % 59] .. i end
local function s10(i) sink[i % 64] = p10[i % 53] .. i end
local function s11(i) sink[i % 64] = p11[i % 47] .. i end
local function s12(i) sink[i % 64] = p12[i % 43] .. i end
local n = tonumber(arg and arg[1]) or 20000
for i = 1, n do
  s1(i) s2(i) s3(i) s4(i) s5(i) s6(i) s7(i) s8(i) s9(i) s10(i) s11(i) s12(i)
  local t = { i, i + 1 }
end
