-- Names no page may run, for tests/tools/html.test: a chunk whose name
-- would end the page's data and add an element that runs script, if the
-- HTML report wrote it as it is.
local f = assert(load("local t = {} for i = 1, 300 do t[i] = {i} end return t",
  "=</script><img src=x onerror=alert(1)><b>&amp;\"'"))
keep = f()
