/*
** ljmprof shim: the process: its settings, its start-up and its first VM.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include "config.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ljmprof.h"

#include "elfinfo.h"
#include "ljm_config.h"
#include "msg.h"
#include "outpath.h"
#include "registry.h"
#include "vm.h"

#ifndef LJM_FLAVOUR
#define LJM_FLAVOUR "luajit"
#endif

/* -- Process state -------------------------------------------------------- */

struct ljm_config ljm_cfg;		/* Settings in effect. */
static char cfg_msgs[LJM_NVARS_MAX][LJM_MSG_MAX];	/* Bad values. */
int ljm_cfg_bad;			/* Number of bad values. */
static int cfg_told;			/* Bad values reported. */
int ljm_first_done;			/* First-VM work done. */
int ljm_exiting;			/* Exit processing ran. */
int ljm_exit_req;			/* Exit processing began. */
uint64_t ljm_t0_ms;			/* Start of the program. */
pid_t ljm_self_pid;			/* getpid(), kept up to date at fork. */
int ljm_forked_child;			/* Forked from a profiling process. */
unsigned ljm_vm_count;			/* VMs numbered in this process. */
volatile sig_atomic_t ljm_epoch;	/* Every safe point watches it. */

static const char *getenv_secure(const char *name, void *ud)
{
  (void)ud;
#ifdef HAVE_SECURE_GETENV
  return secure_getenv(name);
#else
  return getenv(name);
#endif
}

/* -- Start-up and the first VM ------------------------------------------- */

int ljm_reg_init(void)
{
  char cwd[LJM_PATH_MAX], tmpl[LJM_PATH_MAX];
  const char *out = getenv_secure("LJMPROF_OUT", NULL);
  if (out == NULL || *out == '\0')
    return 0;
  ljm_t0_ms = ljm_now_ms();
  ljm_self_pid = getpid();
  ljm_cfg_bad = ljm_config_load(&ljm_cfg, getenv_secure, NULL, cfg_msgs,
				LJM_NVARS_MAX);
  if (!ljm_cfg_bad && ljm_cfg.out[0] != '/' &&
      getcwd(cwd, sizeof(cwd)) != NULL &&
      ljm_template_absolute(tmpl, sizeof(tmpl), ljm_cfg.out, cwd) == 0)
    memcpy(ljm_cfg.out, tmpl, sizeof(ljm_cfg.out));
  if (!ljm_cfg_bad && ljm_cfg.manifest[0] && ljm_cfg.manifest[0] != '/' &&
      getcwd(cwd, sizeof(cwd)) != NULL &&
      ljm_template_absolute(tmpl, sizeof(tmpl), ljm_cfg.manifest, cwd) == 0)
    memcpy(ljm_cfg.manifest, tmpl, sizeof(ljm_cfg.manifest));
  if (!ljm_cfg_bad)
    ljmprof_debug_dirs(ljm_cfg.debugdir);
  return 1;
}

void ljm_tell_config(void)
{
  int i;
  if (cfg_told)
    return;
  cfg_told = 1;
  for (i = 0; i < ljm_cfg_bad && i < LJM_NVARS_MAX; i++)
    ljm_msg("%s", cfg_msgs[i]);
}

/* Once per process tree, with the lock held: report, check, set up. */
void ljm_first_vm(void)
{
  char buf[LJM_PATH_MAX];
  size_t i;
  if (ljm_first_done)
    return;
  ljm_first_done = 1;
  if (ljm_cfg.verbose) {
    ljm_msg("[%ld] libljmprof.so for %s, settings in effect:",
	    (long)ljm_self_pid, LJM_FLAVOUR);
    for (i = 0; i < ljm_nvars; i++)
      ljm_msg("  %s=%s", ljm_vars[i].name,
	      ljm_config_show(&ljm_vars[i], &ljm_cfg, buf, sizeof(buf)));
  }
  if (ljm_system_luajit(buf, sizeof(buf)) == 0) {
    const char *fl = ljm_elf_flavour(buf);
    if (fl && strcmp(fl, LJM_FLAVOUR) != 0)
      ljm_msg("the system library %s is the %s flavour of LuaJIT but this "
	      "libljmprof.so was built from %s: a program built for %s may "
	      "fail; use a libljmprof.so built from the %s source",
	      buf, fl, LJM_FLAVOUR, fl, fl);
  }
  ljm_stop_install();
  ljm_tgl_install();
}
