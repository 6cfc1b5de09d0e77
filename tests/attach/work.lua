local keep = {}
function work(n)
  for i = 1, n do
    keep[#keep + 1] = { i, i }            -- line 4
    keep[#keep + 1] = ("s%d"):format(i)   -- line 5
  end
  return #keep
end
