/*
** Memory profiler: names of C functions, from the ELF object they lie in.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
**
** An address is named only from the object (executable or shared library)
** whose executable segment holds it, as the dynamic linker reports the
** objects (dl_iterate_phdr): by the function symbol of that object that
** covers it (st_value <= addr < st_value + st_size; a symbol without a
** size covers its own address only), else as the object plus the offset
** from its load base. An object's function symbols come from the first
** of: the .symtab of its file, the .symtab of its debug file found by
** build ID under the debug folders (/usr/lib/debug by default, as gdb's
** debug-file-directory), the .dynsym of its file.
**
** The tables are read once per process, when an address in the object is
** first named, and kept sorted in malloc'd memory (never a Lua heap):
** every profiled VM of the process shares them, under one lock. They are
** dropped when any object is unloaded (dlpi_subs moves): the next object
** at that address may be another one.
**
** ELF data is read from the files, every offset and size checked against
** the file's size (lj_memprof_elf.h, shared with the ljmprof core). The
** only process memory read is the program headers the loader hands over
** and the build ID note they point to, inside a loaded segment.
*/

#define lj_memprof_sym_c
#define LUA_CORE

/* For dl_iterate_phdr. Must be defined before any system includes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "lj_obj.h"
#include "lj_memprof.h"
#include "lj_memprof_sym.h"

#if LJ_HASMEMPROF

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <link.h>
#include <elf.h>

#include "ljmprof.h"
#include "lj_memprof_elf.h"

/* At most this many function symbols are taken from one object. */
#define MPS_MAXSYMS		(1u << 22)
/* Room for the debug folders and for one path. */
#define MPS_PATHMAX		4096

#define MPS_DEBUGDIRS_DEFAULT	"/usr/lib/debug"

/* -- Process-wide state ------------------------------------------------------ */

/* A function symbol, at its address in the process. */
typedef struct MPSSym {
  uintptr_t addr;		/* First address. */
  uintptr_t end;		/* One past the last address it covers. */
  uintptr_t maxend;		/* Highest end of this and all symbols before. */
  uint32_t name;		/* Offset of the name in the object's strings. */
  uint32_t rank;		/* Preference among symbols at one address. */
} MPSSym;

/* A loaded object whose symbols were needed. */
typedef struct MPSObj {
  uintptr_t base;		/* Load base (dlpi_addr). */
  char *path;			/* dlpi_name, or the program's path. */
  const char *bname;		/* Last component of path. */
  MPSSym *sym;			/* Function symbols, by address. */
  size_t nsym;			/* Number of symbols. */
  char *str;			/* Their names, NUL-terminated. */
} MPSObj;

typedef struct MPSState {
  pthread_mutex_t lock;		/* Guards everything below. */
  MPSObj *obj;			/* Objects read so far. */
  size_t nobj;			/* Used entries in obj. */
  size_t szobj;			/* Allocated entries in obj. */
  unsigned long long adds;	/* dlpi_adds at the last walk. */
  unsigned long long subs;	/* dlpi_subs at the last walk. */
  uint64_t gen;			/* Generation of the loaded objects. */
  char dirs[MPS_PATHMAX];	/* Debug folders, separated by ':'. */
} MPSState;

static MPSState mps_state = {
  PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0, 0, 1, MPS_DEBUGDIRS_DEFAULT
};
static pthread_once_t mps_once = PTHREAD_ONCE_INIT;

/* A fork while another thread holds the lock must not leave it held. */
static void mps_prefork(void) { pthread_mutex_lock(&mps_state.lock); }
static void mps_postfork(void) { pthread_mutex_unlock(&mps_state.lock); }

static void mps_init(void)
{
  (void)pthread_atfork(mps_prefork, mps_postfork, mps_postfork);
}

static void mps_lock(void)
{
  pthread_once(&mps_once, mps_init);
  pthread_mutex_lock(&mps_state.lock);
}

static void mps_unlock(void)
{
  pthread_mutex_unlock(&mps_state.lock);
}

static void mps_flushobjs(MPSState *s)
{
  size_t i;
  for (i = 0; i < s->nobj; i++) {
    free(s->obj[i].path);
    free(s->obj[i].sym);
    free(s->obj[i].str);
  }
  s->nobj = 0;
}

/* -- ELF files ---------------------------------------------------------------- */

/* Preference among symbols at one address: sized, then by binding. */
static uint32_t mps_rank(const ElfW(Sym) *s)
{
  uint32_t bind = ELF64_ST_BIND(s->st_info), r;
  r = bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0;
  return r + (s->st_size ? 4 : 0);
}

static int mps_isfunc(const ElfW(Sym) *s, size_t strsz)
{
  uint32_t t = ELF64_ST_TYPE(s->st_info);
  return (t == STT_FUNC || t == STT_GNU_IFUNC) && s->st_shndx != SHN_UNDEF &&
	 s->st_value != 0 && s->st_name != 0 && s->st_name < strsz;
}

static int mps_symcmp(const void *a, const void *b)
{
  const MPSSym *x = (const MPSSym *)a, *y = (const MPSSym *)b;
  if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
  if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
  return x->name < y->name ? -1 : x->name > y->name;
}

/*
** Take the function symbols of the file's first section of this type
** (SHT_SYMTAB or SHT_DYNSYM). Returns 1 if it had any, 0 if not, -1 when
** out of memory.
*/
static int mps_loadsyms(MPSObj *o, const MPEFile *f, uint32_t type)
{
  size_t i, j, n, nf = 0, nstr = 0, pos = 0;
  const ElfW(Sym) *sym;
  const char *str;
  size_t strsz;
  MPETable t;
  for (i = 0; i < f->nsh && f->sh[i].sh_type != type; i++)
    ;  /* The first section of that type. */
  if (i == f->nsh ||
      lj_memprof_elf_table(f, &f->sh[i], sizeof(ElfW(Sym)), 1, &t) != 0)
    return 0;
  sym = (const ElfW(Sym) *)t.ent;
  n = t.n;
  str = t.str;
  strsz = t.strsz;
  if (n > MPS_MAXSYMS) n = MPS_MAXSYMS;
  for (i = 0; i < n; i++)
    if (mps_isfunc(&sym[i], strsz)) {
      nf++;
      nstr += strnlen(str + sym[i].st_name, strsz - sym[i].st_name) + 1;
    }
  if (nf == 0) return 0;
  if (nstr > 0xffffffffu) return 0;
  o->sym = (MPSSym *)malloc(nf * sizeof(MPSSym));
  o->str = (char *)malloc(nstr);
  if (o->sym == NULL || o->str == NULL) {
    free(o->sym); free(o->str);
    o->sym = NULL; o->str = NULL;
    return -1;
  }
  for (i = j = 0; i < n; i++) {
    const ElfW(Sym) *s = &sym[i];
    if (mps_isfunc(s, strsz)) {
      MPSSym *d = &o->sym[j++];
      size_t len = strnlen(str + s->st_name, strsz - s->st_name);
      d->addr = o->base + (uintptr_t)s->st_value;
      d->end = d->addr + (s->st_size ? (uintptr_t)s->st_size : 1);
      if (d->end < d->addr) d->end = ~(uintptr_t)0;
      d->name = (uint32_t)pos;
      d->rank = mps_rank(s);
      memcpy(o->str + pos, str + s->st_name, len);
      o->str[pos + len] = '\0';
      pos += len + 1;
    }
  }
  qsort(o->sym, nf, sizeof(MPSSym), mps_symcmp);
  for (i = 0; i < nf; i++)
    o->sym[i].maxend = i && o->sym[i-1].maxend > o->sym[i].end ?
		       o->sym[i-1].maxend : o->sym[i].end;
  o->nsym = nf;
  return 1;
}

/* -- Objects -------------------------------------------------------------------- */

/* The build ID of a loaded object, from a PT_NOTE inside a PT_LOAD. */
static size_t mps_memid(struct dl_phdr_info *info, uint8_t *id)
{
  int i, j;
  for (i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *nt = &info->dlpi_phdr[i];
    if (nt->p_type != PT_NOTE) continue;
    for (j = 0; j < info->dlpi_phnum; j++) {
      const ElfW(Phdr) *ld = &info->dlpi_phdr[j];
      size_t n;
      if (ld->p_type == PT_LOAD && nt->p_vaddr >= ld->p_vaddr &&
	  nt->p_memsz <= ld->p_filesz &&
	  nt->p_vaddr - ld->p_vaddr <= ld->p_filesz - nt->p_memsz &&
	  (n = lj_memprof_elf_noteid((const uint8_t *)(info->dlpi_addr + nt->p_vaddr),
			  nt->p_memsz, (size_t)nt->p_align, id)) != 0)
	return n;
    }
  }
  return 0;
}

/* Try the debug file of a build ID under each debug folder. */
static int mps_debugfile(MPSObj *o, const uint8_t *id, size_t idlen)
{
  const char *d = mps_state.dirs;
  while (*d) {
    const char *e = strchr(d, ':');
    size_t dl = e ? (size_t)(e - d) : strlen(d), k;
    char path[MPS_PATHMAX], *p;
    if (dl > 0 && dl + 20 + 2*idlen <= sizeof(path)) {
      static const char hex[] = "0123456789abcdef";
      MPEFile f;
      memcpy(path, d, dl);
      p = path + dl;
      memcpy(p, "/.build-id/", 11); p += 11;
      *p++ = hex[id[0] >> 4]; *p++ = hex[id[0] & 15];
      *p++ = '/';
      for (k = 1; k < idlen; k++) {
	*p++ = hex[id[k] >> 4]; *p++ = hex[id[k] & 15];
      }
      memcpy(p, ".debug", 7);
      if (lj_memprof_elf_open(&f, path) == 0) {
	uint8_t fid[MPE_IDMAX];
	size_t fl = lj_memprof_elf_fileid(&f, fid);
	int r = 0;
	if (fl == 0 || (fl == idlen && memcmp(fid, id, idlen) == 0))
	  r = mps_loadsyms(o, &f, SHT_SYMTAB);
	lj_memprof_elf_close(&f);
	if (r != 0) return r;
      }
    }
    if (!e) break;
    d = e + 1;
  }
  return 0;
}

/* Read the function symbols of a loaded object. */
static void mps_readobj(MPSObj *o, struct dl_phdr_info *info,
			const char *file)
{
  uint8_t mid[MPE_IDMAX], fid[MPE_IDMAX];
  size_t ml = mps_memid(info, mid), fl = 0;
  MPEFile f;
  int r = 0, opened = lj_memprof_elf_open(&f, file) == 0;
  if (opened) {
    fl = lj_memprof_elf_fileid(&f, fid);
    if (ml && fl && (ml != fl || memcmp(mid, fid, ml) != 0)) {
      /* The file was replaced since it was loaded: not this object. */
      lj_memprof_elf_close(&f);
      opened = 0;
    }
  }
  if (opened) r = mps_loadsyms(o, &f, SHT_SYMTAB);
  if (r == 0 && (ml || fl))
    r = ml ? mps_debugfile(o, mid, ml) : mps_debugfile(o, fid, fl);
  if (r == 0 && opened) r = mps_loadsyms(o, &f, SHT_DYNSYM);
  if (opened) lj_memprof_elf_close(&f);
}

static const char *mps_basename(const char *path)
{
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* The cached object at base with this name, read now if need be. */
static MPSObj *mps_getobj(struct dl_phdr_info *info)
{
  MPSState *s = &mps_state;
  uintptr_t base = (uintptr_t)info->dlpi_addr;
  const char *name = info->dlpi_name ? info->dlpi_name : "";
  char exe[MPS_PATHMAX];
  const char *file = name;
  MPSObj *o;
  size_t i;
  if (name[0] == '\0') {  /* The main program. */
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) n = 0;
    exe[n] = '\0';
    name = n ? exe : "exe";
    file = "/proc/self/exe";  /* Even if its path was replaced since. */
  }
  for (i = 0; i < s->nobj; i++)
    if (s->obj[i].base == base && strcmp(s->obj[i].path, name) == 0)
      return &s->obj[i];
  if (s->nobj == s->szobj) {
    size_t nsz = s->szobj ? 2*s->szobj : 16;
    MPSObj *no = (MPSObj *)realloc(s->obj, nsz * sizeof(MPSObj));
    if (no == NULL) return NULL;
    s->obj = no;
    s->szobj = nsz;
  }
  o = &s->obj[s->nobj];
  memset(o, 0, sizeof(*o));
  o->base = base;
  o->path = strdup(name);
  if (o->path == NULL) return NULL;
  o->bname = mps_basename(o->path);
  mps_readobj(o, info, file);
  s->nobj++;
  return o;
}

/* The symbol of o that covers addr, or NULL. */
static const MPSSym *mps_cover(const MPSObj *o, uintptr_t addr)
{
  size_t lo = 0, hi = o->nsym;
  while (lo < hi) {  /* First symbol above addr. */
    size_t mid = lo + (hi - lo) / 2;
    if (o->sym[mid].addr <= addr) lo = mid + 1; else hi = mid;
  }
  while (lo-- > 0) {  /* The innermost symbol that reaches addr. */
    const MPSSym *y = &o->sym[lo];
    if (y->end > addr) return y;
    if (y->maxend <= addr) break;  /* None before reaches it either. */
  }
  return NULL;
}

/* "<pfx>+0x<off>" or, with pfx NULL, "CFUNC 0x<off>", malloc'd. */
static char *mps_offname(const char *pfx, uintptr_t off, size_t *len)
{
  size_t n = (pfx ? strlen(pfx) : 5) + 4 + 2*sizeof(uintptr_t);
  char *b = (char *)malloc(n);
  int k;
  if (b == NULL) return NULL;
  k = pfx ? snprintf(b, n, "%s+0x%lx", pfx, (unsigned long)off)
	  : snprintf(b, n, "CFUNC 0x%lx", (unsigned long)off);
  *len = k > 0 ? (size_t)k : 0;
  return b;
}

typedef struct MPSWalk {
  uintptr_t addr;		/* Address to name. */
  int first;			/* First object of the walk. */
  char *name;			/* The name found (malloc'd). */
  size_t len;			/* Its length. */
  int found;			/* An object holds addr. */
} MPSWalk;

static int mps_walk(struct dl_phdr_info *info, size_t size, void *data)
{
  MPSWalk *w = (MPSWalk *)data;
  MPSState *s = &mps_state;
  uintptr_t base = (uintptr_t)info->dlpi_addr, a = w->addr;
  const MPSObj *o;
  const MPSSym *y;
  int i, in = 0;
  if (w->first) {
    w->first = 0;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
		sizeof(info->dlpi_subs)) {
      if (info->dlpi_subs != s->subs) mps_flushobjs(s);  /* Unloaded. */
      if (info->dlpi_adds != s->adds || info->dlpi_subs != s->subs) s->gen++;
      s->adds = info->dlpi_adds;
      s->subs = info->dlpi_subs;
    }
  }
  for (i = 0; i < info->dlpi_phnum && !in; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    in = ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
	 a - (base + ph->p_vaddr) < ph->p_memsz;
  }
  if (!in) return 0;
  w->found = 1;
  o = mps_getobj(info);
  if (o == NULL) {  /* Out of memory: the object, as far as known. */
    const char *n = info->dlpi_name && info->dlpi_name[0] ?
		    mps_basename(info->dlpi_name) : "exe";
    w->name = mps_offname(n, a - base, &w->len);
  } else if ((y = mps_cover(o, a)) == NULL) {
    w->name = mps_offname(o->bname, a - base, &w->len);
  } else if (y->addr != a) {
    w->name = mps_offname(o->str + y->name, a - y->addr, &w->len);
  } else {
    w->len = strlen(o->str + y->name);
    w->name = strdup(o->str + y->name);
  }
  return 1;
}

/* -- Internal API --------------------------------------------------------------- */

char *lj_memprof_sym_name(uintptr_t addr, size_t *len, uint64_t *gen)
{
  MPSWalk w;
  w.addr = addr;
  w.first = 1;
  w.name = NULL;
  w.len = 0;
  w.found = 0;
  mps_lock();
  dl_iterate_phdr(mps_walk, &w);
  *gen = mps_state.gen;
  mps_unlock();
  if (!w.found) w.name = mps_offname(NULL, addr, &w.len);
  *len = w.len;
  return w.name;
}

/* -- Public API ----------------------------------------------------------------- */

LUA_API void ljmprof_debug_dirs(const char *dirs)
{
  MPSState *s = &mps_state;
  size_t n;
  if (dirs == NULL) dirs = MPS_DEBUGDIRS_DEFAULT;
  n = strlen(dirs);
  if (n >= sizeof(s->dirs)) n = 0;  /* Too long to be meant: none. */
  mps_lock();
  memcpy(s->dirs, dirs, n);
  s->dirs[n] = '\0';
  mps_flushobjs(s);  /* Read again under the new folders, */
  s->gen++;	     /* and announce the names again. */
  mps_unlock();
}

#endif
