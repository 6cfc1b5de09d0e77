/*
** ljmprof attach: the names of the C functions in the streams of an
** attach, given after it.
**
** The recorder inside the process writes a C function's address only:
** naming it there would take the dynamic linker's lock and malloc, which
** a host thread may hold. So after the detach, while the process still
** runs, ljmprof reads each stream's C addresses, names each from the ELF
** file the process maps there (its function symbol, else the object and
** the offset), and writes the names into the stream's leading symbol
** table, which the recorder left empty: a version-3 stream like any
** other, whose C symbols are announced at the functions' own addresses.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach_names.h"
#include "elfinfo.h"
#include "mp_reader.h"

struct mapping {
  uint64_t lo, hi, off;
  char *path;
};

struct attach_maps {
  pid_t pid;
  struct mapping *m;
  size_t n;
};

struct attach_maps *attach_maps_read(pid_t pid)
{
  char name[64], line[4096];
  struct attach_maps *am = calloc(1, sizeof(*am));
  size_t cap = 0;
  FILE *f;
  snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
  if (!am || !(f = fopen(name, "r"))) {
    free(am);
    return NULL;
  }
  am->pid = pid;
  while (fgets(line, sizeof(line), f)) {
    unsigned long lo, hi, off;
    char perm[5], *path = strchr(line, '/');
    if (!path || sscanf(line, "%lx-%lx %4s %lx", &lo, &hi, perm, &off) != 4 ||
	perm[2] != 'x')
      continue;
    path[strcspn(path, "\n")] = 0;
    if (am->n == cap) {
      struct mapping *m = realloc(am->m, (cap = cap ? 2 * cap : 64) *
				  sizeof(*m));
      if (!m) break;
      am->m = m;
    }
    if (!(am->m[am->n].path = strdup(path)))
      break;
    am->m[am->n].lo = lo;
    am->m[am->n].hi = hi;
    am->m[am->n].off = off;
    am->n++;
  }
  fclose(f);
  return am;
}

void attach_maps_free(struct attach_maps *am)
{
  if (!am) return;
  for (size_t i = 0; i < am->n; i++)
    free(am->m[i].path);
  free(am->m);
  free(am);
}

/* The name of the C function at addr: its symbol, else object+0xoff,
** else none (NULL). */
static const char *name_of(const struct attach_maps *am, uint64_t addr,
			   char *buf, size_t n)
{
  for (size_t i = 0; i < am->n; i++) {
    const struct mapping *m = &am->m[i];
    char path[4200];
    uint64_t off, start;
    const char *base;
    if (addr < m->lo || addr >= m->hi)
      continue;
    off = addr - m->lo + m->off;
    snprintf(path, sizeof(path), "/proc/%d/root%s", (int)am->pid, m->path);
    if (ljm_elf_func_at(path, off, buf, n, &start) == 0) {
      if (start != off) {
	size_t len = strlen(buf);
	snprintf(buf + len, n - len, "+0x%llx",
		 (unsigned long long)(off - start));
      }
      return buf;
    }
    base = strrchr(m->path, '/');
    snprintf(buf, n, "%s+0x%llx", base ? base + 1 : m->path,
	     (unsigned long long)off);
    return buf;
  }
  return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void put_uleb(FILE *f, uint64_t v)
{
  while (v >= 0x80) {
    putc((int)(v | 0x80) & 0xff, f);
    v >>= 7;
  }
  putc((int)v, f);
}

/* The stream's C function addresses (of events and of stack frames),
** sorted and each once; -1 on an unreadable stream. */
static long cfuncs(int fd, uint64_t **out, char *err, size_t errn)
{
  struct stat st;
  struct mp_reader *r;
  struct mp_event ev;
  enum mp_status s;
  uint64_t *a = NULL;
  size_t n = 0, cap = 0, k = 0;
  if (fstat(fd, &st) != 0 || !(r = mp_reader_new_fd(fd, st.st_size))) {
    snprintf(err, errn, "cannot read it: %s", strerror(errno));
    return -1;
  }
  while ((s = mp_reader_next(r, &ev)) == MP_OK) {
    uint64_t at;
    /* A C function is an event's location or a C frame of a stack. */
    if (ev.type == MP_EV_SYM_NODE && ev.frame == LJM_FRAME_C)
      at = ev.frame_a;
    else if (!mp_event_is_symbol(ev.type) && ev.src == LJM_SRC_CFUNC)
      at = ev.loc;
    else
      continue;
    if (n == cap) {
      uint64_t *b = realloc(a, (cap = cap ? 2 * cap : 256) * sizeof(*a));
      if (!b) { s = MP_ERROR; break; }
      a = b;
    }
    a[n++] = at;
  }
  if (s != MP_END) {
    snprintf(err, errn, "%s", s == MP_TRUNCATED ? "the stream is cut" :
	     s == MP_ERROR && mp_reader_error(r) ? mp_reader_error(r) :
	     "out of memory");
    mp_reader_free(r);
    free(a);
    return -1;
  }
  mp_reader_free(r);
  if (n) {
    qsort(a, n, sizeof(*a), cmp_u64);
    for (size_t i = 0; i < n; i++)
      if (!k || a[k - 1] != a[i])
	a[k++] = a[i];
  }
  *out = a;
  return (long)k;
}

int attach_name_cfuncs(const char *stream, const struct attach_maps *am,
		       char *err, size_t errn)
{
  /* The recorder's symbol table: empty, of version 3 or of the
  ** profile extension (a stream with a start snapshot). */
  static const uint8_t empty[8] = { 'l', 'j', 's', LJM_FMT_VERSION, 0, 0, 0,
				    LJM_EV_EPILOGUE };
  static const uint8_t empty_ext[8] = { 'l', 'j', 's', LJM_FMT_VERSION_EXT,
					LJM_EXT_PROFILE,
					LJM_EXT_PROFILE_VERSION, 0,
					LJM_EV_EPILOGUE };
  uint8_t head[8], buf[1 << 16];
  char tmp[4200], name[512];
  uint64_t *addr = NULL;
  long n;
  ssize_t got;
  FILE *out;
  int fd = open(stream, O_RDONLY | O_CLOEXEC), ok = 1;
  if (fd < 0) {
    snprintf(err, errn, "cannot open it: %s", strerror(errno));
    return -1;
  }
  if ((n = cfuncs(fd, &addr, err, errn)) <= 0 ||
      pread(fd, head, sizeof(head), 0) != (ssize_t)sizeof(head) ||
      (memcmp(head, empty, sizeof(head)) &&
       memcmp(head, empty_ext, sizeof(head)))) {
    close(fd);
    free(addr);
    if (n > 0)
      snprintf(err, errn, "its symbol table is not the recorder's");
    return n < 0 || n > 0 ? -1 : 0;
  }
  /* The same name with a tag: written beside, then renamed over it. */
  snprintf(tmp, sizeof(tmp), "%s.names", stream);
  {
    int tfd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    struct stat st;
    /* Owned as the stream was (the process's user, when we are root). */
    if (tfd >= 0 && fstat(fd, &st) == 0 && fchown(tfd, st.st_uid, st.st_gid))
      (void)0;
    if (tfd < 0 || !(out = fdopen(tfd, "w"))) {
      snprintf(err, errn, "cannot write %s: %s", tmp, strerror(errno));
      if (tfd >= 0) close(tfd);
      close(fd);
      free(addr);
      return -1;
    }
  }
  fwrite(head, 1, 7, out);
  for (long i = 0; i < n; i++) {
    const char *s = name_of(am, addr[i], name, sizeof(name));
    size_t len;
    if (!s)
      continue;
    len = strlen(s);
    putc(LJM_SYMTAB_CFUNC, out);
    put_uleb(out, addr[i]);
    put_uleb(out, len);
    fwrite(s, 1, len, out);
  }
  putc(LJM_EV_EPILOGUE, out);
  if (lseek(fd, sizeof(head), SEEK_SET) < 0)
    ok = 0;
  while (ok && (got = read(fd, buf, sizeof(buf))) > 0)
    ok = fwrite(buf, 1, (size_t)got, out) == (size_t)got;
  if (fflush(out) != 0 || ferror(out))
    ok = 0;
  ok = (fclose(out) == 0) && ok;
  close(fd);
  free(addr);
  if (!ok || rename(tmp, stream) != 0) {
    snprintf(err, errn, "cannot write %s: %s", tmp, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return (int)n;
}
