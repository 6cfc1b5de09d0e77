# Tests of the in-VM profiler (Check and end-to-end through the Lua API).
