/*
** ljmprof attach: the names of the C functions in the streams of an
** attach, given after it (attach_names.c says why there).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJM_ATTACH_NAMES_H
#define LJM_ATTACH_NAMES_H

#include <stddef.h>
#include <sys/types.h>

/* The executable file mappings of a process, read while it runs. */
struct attach_maps;
struct attach_maps *attach_maps_read(pid_t pid);
void attach_maps_free(struct attach_maps *am);

/* Name the C functions of a finished attach stream in its leading symbol
** table, from the process's mappings: how many, or -1 with err set (the
** stream is left as it was). */
int attach_name_cfuncs(const char *stream, const struct attach_maps *am,
		       char *err, size_t errn);

#endif
