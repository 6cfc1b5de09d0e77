-- A script of tests/attach/attach.test, for call stacks: a table made
-- two calls down (line 3, called from line 6, called from line 11) and
-- strings made by a built-in (line 12).
local keep = {}
local function leaf(i)
  return { i, i }                      -- line 6
end
local function mid(i)
  local t = leaf(i)                    -- line 9
  return t
end
function work(n)
  for i = 1, n do
    keep[#keep + 1] = mid(i)           -- line 14
    keep[#keep + 1] = ("x"):rep(i % 1000 + 1)  -- line 15
  end
  return #keep
end
