-- Names no page may run, for tests/tools/html.test: a chunk whose name
-- would end the page's data and add an element that runs script, if the
-- HTML report wrote it as it is.
local f = assert(load("local t = {} for i = 1, 300 do t[i] = {i} end return t",
  "=</script><img src=x onerror=alert(1)><b>&amp;\"'"))
keep = f()
-- A name of 100 KB (a chunk loaded from a string is named by its
-- source): the page cuts it.
local g = assert(load("local t = {} for i = 1, 50 do t[i] = {i} end return t",
  "=" .. string.rep("n", 100000)))
keep2 = g()
