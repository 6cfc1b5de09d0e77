# End-to-end tests of libljmprof.so with real host programs.
