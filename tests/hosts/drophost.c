/*
** drophost: a server that starts as root and runs its workers as another
** user (rspamd, trafficserver, uwsgi --uid), linked against the system's
** libluajit-5.1.so.2.
**
**   drophost USER SCRIPT
**
** The master runs SCRIPT in a VM of its own, forks one worker that
** switches to USER (its group too) and runs SCRIPT in a new VM; both close
** their VM. Exit status 0 when both succeeded.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>

static int run(const char *script)
{
  lua_State *L = luaL_newstate();
  int ok;
  luaL_openlibs(L);
  ok = luaL_dofile(L, script) == 0;
  if (!ok)
    fprintf(stderr, "drophost: %s\n", lua_tostring(L, -1));
  lua_close(L);
  return ok;
}

int main(int argc, char **argv)
{
  struct passwd *pw;
  pid_t pid;
  int status, ok;
  if (argc != 3) {
    fprintf(stderr, "usage: drophost USER SCRIPT\n");
    return 2;
  }
  pw = getpwnam(argv[1]);
  if (pw == NULL) {
    fprintf(stderr, "drophost: no user %s\n", argv[1]);
    return 2;
  }
  ok = run(argv[2]);
  fflush(NULL);
  pid = fork();
  if (pid < 0)
    return 1;
  if (pid == 0) {
    if (setgroups(0, NULL) != 0 || setgid(pw->pw_gid) != 0 ||
	setuid(pw->pw_uid) != 0) {
      perror("drophost: cannot switch user");
      _exit(1);
    }
    _exit(run(argv[2]) ? 0 : 1);
  }
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0)
    ok = 0;
  return ok ? 0 : 1;
}
