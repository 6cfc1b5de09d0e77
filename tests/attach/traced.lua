-- A script of tests/attach/attach.test: a loop the JIT compiles, one
-- call below the function that runs the work, for the call stacks of
-- compiled code (line 7's tables, from line 11).
local keep = {}
local function fill(n)
  for i = 1, n do
    keep[#keep + 1] = { i, i }   -- line 7
  end
end
function work(n)
  fill(n)                        -- line 11
  return #keep
end
