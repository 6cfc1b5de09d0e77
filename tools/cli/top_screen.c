/*
** ljmprof top: the full-screen view, drawn with ncurses (the terminal
** library every Debian system has; it handles terminal types, resizing
** and putting the terminal back as it was). The lines are top_text.c's,
** as the batch output prints them.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _POSIX_C_SOURCE 200809L

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "top.h"

#ifdef HAVE_NCURSES
#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>

static volatile sig_atomic_t stop_asked;

static void on_stop(int sig)
{
  (void)sig;
  stop_asked = 1;
}

static const char *const help_lines[] = {
  "Keys:",
  "  h  sort by what each location holds now",
  "  g  sort by growth over the window",
  "  a  sort by allocation rate",
  "  l  group by line    f  by function    c  by chunk",
  "  s  by call path (streams with stacks)    k  by object kind",
  "     (a new grouping reads the files again from their start)",
  "  p  or space: pause (the files are read again when it goes on)",
  "  ?  this help (any key closes it)",
  "  q  quit",
  NULL
};

static void draw(struct top *t, int utf8, int paused, int help)
{
  const struct top_frame *f = top_frame(t);
  const struct top_opts *o = top_options(t);
  struct mp_buf b = {0};
  int rows, cols, y = 0, i;
  size_t r;

  getmaxyx(stdscr, rows, cols);
  erase();
  if (help) {
    for (i = 0; help_lines[i] && y < rows; i++)
      mvaddnstr(y++, 0, help_lines[i], cols);
    refresh();
    return;
  }
  for (i = 0; y < rows - 1; i++) {
    b.len = 0;
    if (!top_header_line(&b, f, o, i, utf8))
      break;
    if (i == 0 && paused)
      mp_buf_str(&b, "  [PAUSED]");
    mvaddnstr(y++, 0, b.data ? b.data : "", cols);
  }
  y++;
  if (y < rows - 1) {
    b.len = 0;
    top_titles(&b, f, o);
    attron(A_REVERSE);
    mvaddnstr(y, 0, b.data ? b.data : "", cols);
    for (i = (int)b.len; i < cols; i++)
      addch(' ');
    attroff(A_REVERSE);
    y++;
  }
  for (r = 0; r < f->nrows && y < rows - 1; r++) {
    b.len = 0;
    top_row_line(&b, f, o, r, cols);
    mvaddnstr(y++, 0, b.data ? b.data : "", cols);
  }
  attron(A_DIM);
  mvaddnstr(rows - 1, 0, "q quit  h/g/a sort  l/f/c/s/k group  p pause  ? keys",
	    cols);
  attroff(A_DIM);
  refresh();
  mp_buf_free(&b);
}

int top_screen(struct top *t)
{
  struct sigaction sa;
  SCREEN *scr;
  int utf8, paused = 0, help = 0, rc = 0;
  double next = 0;

  setlocale(LC_ALL, "");
  utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
  if (!(scr = newterm(NULL, stdout, stdin))) {
    ljmprof_error("top: cannot use the terminal (TERM=%s); use --batch",
		  getenv("TERM") ? getenv("TERM") : "");
    return -1;
  }
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_stop;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
  timeout(100);
  while (!stop_asked) {
    int ch;
    if (!paused && top_now() >= next) {
      if (top_refresh(t) < 0) {
	rc = -2;
	break;
      }
      next = top_now() + top_options(t)->interval;
      draw(t, utf8, paused, help);
    }
    ch = getch();
    if (ch == ERR)
      continue;
    if (help) {
      help = 0;
    } else {
      switch (ch) {
      case 'q': case 'Q':
	stop_asked = 1;
	break;
      case 'h': top_sort(t, TOP_SORT_HELD); break;
      case 'g': top_sort(t, TOP_SORT_GROWTH); break;
      case 'a': top_sort(t, TOP_SORT_RATE); break;
      case 'l': case 'f': case 'c': case 's': case 'k': {
	enum mp_group g = ch == 'f' ? MP_GROUP_FUNCTION :
			  ch == 'c' ? MP_GROUP_CHUNK : MP_GROUP_LINE;
	enum top_by by = ch == 's' ? TOP_BY_PATH :
			 ch == 'k' ? TOP_BY_KIND : TOP_BY_LOCATION;
	const struct top_opts *o = top_options(t);
	if ((g != o->group || by != o->by) && top_regroup(t, by, g) < 0)
	  rc = -2, stop_asked = 1;
	next = top_now() + top_options(t)->interval;
	break;
      }
      case 'p': case ' ':
	paused = !paused;
	next = 0;
	break;
      case '?':
	help = 1;
	break;
      default:
	break;
      }
    }
    draw(t, utf8, paused, help);
  }
  endwin();
  delscreen(scr);
  if (rc == -2)
    ljmprof_error("top: out of memory");
  return rc < 0 ? -1 : 0;
}

#else

int top_screen(struct top *t)
{
  (void)t;
  ljmprof_error("top: this ljmprof was built without a terminal library "
		"(ncurses): give --batch=N for plain text frames");
  return -1;
}

#endif
