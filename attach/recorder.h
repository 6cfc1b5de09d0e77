/*
** ljmprof attach: the recorder's entry points, which `ljmprof attach`
** calls inside the process (tools/cli/cmd_attach.c finds them by name).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJM_ATTACH_RECORDER_H
#define LJM_ATTACH_RECORDER_H

/* Look for the process's VMs in its memory, while its other threads run
** on (it may take a while on a large heap): how many, or -1. */
int ljmprof_attach_find(void);

/* Attach to every VM ljmprof_attach_find found that is still one and is
** not attached yet, one stream each,
** named from the absolute template tmpl as LJMPROF_OUT names them (the
** pid tagged), each name added to the file manifest unless it is "".
** Run with the process's other threads stopped. Returns how many VMs it
** attached, or -1; ljmprof_attach_why says what happened. */
int ljmprof_attach_start(const char *tmpl, const char *manifest);

/* Set an option of the next start: "snapshot", 1 (the default) or 0:
** each stream has the profile extension and begins with every block its
** VM holds (taken at the VM's first allocator call after the start), or
** is a plain version 3 one; "sample", the mean bytes between sampled
** allocations (0, the default: every one), a sampled stream having no
** start snapshot. 0, or -1 for an unknown option. */
int ljmprof_attach_option(const char *name, uintptr_t value);

/* Detach from every VM: its allocator back, its stream finished now or,
** when its thread is inside the wrapper, as that thread leaves it. Run
** with the other threads stopped. Returns how many VMs it detached. */
int ljmprof_attach_stop(void);

/* The streams the last start opened, one path a line. */
const char *ljmprof_attach_names(void);

/* What the last call did, in words. */
const char *ljmprof_attach_why(void);

#endif
