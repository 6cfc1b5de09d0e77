/*
** mpcheck FILE: read a memprof stream with the tests' reader; print one
** line per (event, location): "ALLOC<TAB>count<TAB>location", then the
** trace symbols as "TRACE<TAB>name"; for a stream with stacks,
** "INFO<TAB>key<TAB>value" and "NODES<TAB>count". Exit 0 if the stream is complete and
** every event names a known symbol, 1 otherwise.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdio.h>
#include <stdlib.h>

#include "mpread.h"

int main(int argc, char **argv)
{
  static const char *kinds[] = { "?", "ALLOC", "FREE", "REALLOC", "SNAP" };
  mpr_stats st;
  char err[256];
  size_t i;
  int rc = 0;
  if (argc != 2) {
    fprintf(stderr, "usage: mpcheck FILE\n");
    return 2;
  }
  if (mpr_parse_file(argv[1], &st, err, sizeof(err)) != 0) {
    fprintf(stderr, "mpcheck: %s: %s\n", argv[1], err);
    return 1;
  }
  for (i = 0; i < st.nrows; i++)
    printf("%s\t%lu\t%s\n", kinds[st.rows[i].ev], st.rows[i].count,
	   st.rows[i].loc);
  for (i = 0; i < st.ntraces; i++)
    printf("TRACE\t%s\n", st.traces[i]);
  if (st.ext) {  /* The profile extension: its records and nodes. */
    for (i = 1; i < 8; i++)
      if (st.ninfo[i])
	printf("INFO\t%zu\t%llu\n", i, (unsigned long long)st.info[i]);
    printf("NODES\t%lu\n", st.nodes);
  }
  if (!st.complete) {
    fprintf(stderr, "mpcheck: %s: no epilogue\n", argv[1]);
    rc = 1;
  }
  if (st.unresolved) {
    fprintf(stderr, "mpcheck: %s: %lu events name unknown symbols\n",
	    argv[1], st.unresolved);
    rc = 1;
  }
  mpr_free(&st);
  return rc;
}
