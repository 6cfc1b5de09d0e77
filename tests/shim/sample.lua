-- A deterministic workload for the sampling test: twelve lines that
-- allocate strings, each about 1.3 times the bytes of the next, among
-- short-lived tables, the interpreter only (no traces, so that two runs
-- make the same calls).
jit.off()
local sink = {}
local function s1(i) sink[i % 64] = string.rep("a", 1200 + i % 97) end
local function s2(i) sink[i % 64] = string.rep("b", 900 + i % 89) end
local function s3(i) sink[i % 64] = string.rep("c", 700 + i % 83) end
local function s4(i) sink[i % 64] = string.rep("d", 540 + i % 79) end
local function s5(i) sink[i % 64] = string.rep("e", 410 + i % 73) end
local function s6(i) sink[i % 64] = string.rep("f", 310 + i % 71) end
local function s7(i) sink[i % 64] = string.rep("g", 240 + i % 67) end
local function s8(i) sink[i % 64] = string.rep("h", 180 + i % 61) end
local function s9(i) sink[i % 64] = string.rep("i", 140 + i % 59) end
local function s10(i) sink[i % 64] = string.rep("j", 105 + i % 53) end
local function s11(i) sink[i % 64] = string.rep("k", 80 + i % 47) end
local function s12(i) sink[i % 64] = string.rep("l", 60 + i % 43) end
local n = tonumber(arg and arg[1]) or 20000
for i = 1, n do
  s1(i) s2(i) s3(i) s4(i) s5(i) s6(i) s7(i) s8(i) s9(i) s10(i) s11(i) s12(i)
  local t = { i, i + 1 }
end
