/*
** ljmprof record: run a program under libljmprof.so.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJMPROF_RECORD_H
#define LJMPROF_RECORD_H

/* argv[0] is "record". Returns the program's exit status (128 + N when
** it was killed by signal N), or 2 for a usage error, 127 when it could
** not be run. */
int ljmprof_cmd_record(int argc, char **argv);

#endif
