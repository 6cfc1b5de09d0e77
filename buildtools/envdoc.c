/*
** envdoc: copy a man page template to stdout, replacing the line
** "@ENVIRONMENT@" with the environment table that the shim parses, so
** that the documentation can never disagree with the code.
**
**   envdoc TEMPLATE > page
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdio.h>
#include <string.h>

#include "ljm_config.h"

static const char *type_name(enum ljm_type t)
{
  switch (t) {
  case LJM_T_TEMPLATE: return "file name template";
  case LJM_T_PATH: return "file name";
  case LJM_T_SIZE: return "size in bytes";
  case LJM_T_BOOL: return "yes/no";
  case LJM_T_SIGNAL: return "signal name";
  case LJM_T_DURATION: return "duration";
  case LJM_T_DEPTH: return "stack depth";
  case LJM_T_SAMPLE: return "size in bytes, or yes/no";
  case LJM_T_NUMBER: return "number";
  }
  return "?";
}

/* Text as roff: escape backslashes, keep lines from starting with a dot. */
static void roff(const char *s)
{
  for (; *s; s++) {
    if (*s == '\\')
      fputs("\\e", stdout);
    else if (*s == '-')
      fputs("\\-", stdout);
    else
      putchar(*s);
  }
}

static void environment(void)
{
  size_t i;
  for (i = 0; i < ljm_nvars; i++) {
    const struct ljm_var *v = &ljm_vars[i];
    printf(".TP\n.B %s\n", v->name);
    roff(v->meaning);
    printf("\n.br\nType: %s; accepted: ", type_name(v->type));
    roff(v->range);
    fputs("; default: ", stdout);
    roff(v->def[0] ? v->def : "unset");
    fputs("; example: \\fB", stdout);
    roff(v->name);
    putchar('=');
    roff(v->example);
    fputs("\\fR.\n", stdout);
  }
}

int main(int argc, char **argv)
{
  char line[1024];
  FILE *f;
  if (argc != 2) {
    fprintf(stderr, "usage: envdoc TEMPLATE\n");
    return 2;
  }
  f = fopen(argv[1], "r");
  if (f == NULL) {
    perror(argv[1]);
    return 1;
  }
  while (fgets(line, sizeof(line), f)) {
    if (strcmp(line, "@ENVIRONMENT@\n") == 0)
      environment();
    else
      fputs(line, stdout);
  }
  fclose(f);
  return ferror(stdout) ? 1 : 0;
}
