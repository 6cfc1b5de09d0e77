/*
** Memory profiler: mapping an ELF file and walking its sections.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
**
** lj_memprof_sym.c (function symbols, inside the VM) and the ljmprof
** core's elfinfo.c (the flavour of a library, whether a program needs
** LuaJIT, in the shim and in `ljmprof record`; build-ids and function
** names for `ljmprof attach`) both read ELF files this
** way: mapped read-only, every offset and size checked against the
** file's size before it is used. This is that part, written once.
**
** A header of static functions rather than an object of its own: src/ is
** compiled by LuaJIT's build, whose object lists live in the patch
** series, and the core by ours. A header is in neither list, depends on
** nothing of LuaJIT (plain C, <elf.h>, <link.h>), and gives each user a
** private copy, so that the shim, which links both the VM's objects and
** the core, holds no symbol twice and exports nothing new.
**
** Files are read in the process's own class (ElfW), the only class the
** process can load.
*/

#ifndef _LJ_MEMPROF_ELF_H
#define _LJ_MEMPROF_ELF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <elf.h>
#include <link.h>

#if __ELF_NATIVE_CLASS == 64
#define MPE_ELFCLASS		ELFCLASS64
#else
#define MPE_ELFCLASS		ELFCLASS32
#endif

/* A mapped ELF file. */
typedef struct MPEFile {
  const uint8_t *p;		/* The mapped file. */
  size_t sz;			/* Its size. */
  const ElfW(Ehdr) *eh;		/* Its header. */
  const ElfW(Shdr) *sh;		/* Section headers (checked), or NULL. */
  size_t nsh;			/* Number of section headers. */
} MPEFile;

/* The entries of a section and the string table it links to. */
typedef struct MPETable {
  const uint8_t *ent;		/* First entry. */
  size_t n;			/* Number of entries. */
  const char *str;		/* The linked string table. */
  size_t strsz;			/* Its size, > 0. */
} MPETable;

/*
** Map a regular ELF file of the process's class, and find its section
** headers when they lie inside the file (else f->sh is NULL). 0, or -1
** with nothing mapped.
*/
static inline int lj_memprof_elf_open(MPEFile *f, const char *path)
{
  int fd = open(path, O_RDONLY|O_CLOEXEC);
  struct stat st;
  void *map;
  const ElfW(Ehdr) *eh;
  if (fd < 0) return -1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      (uint64_t)st.st_size < sizeof(ElfW(Ehdr)) ||
      (uint64_t)st.st_size > (uint64_t)(size_t)-1) {
    close(fd);
    return -1;
  }
  f->sz = (size_t)st.st_size;
  map = mmap(NULL, f->sz, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return -1;
  f->p = (const uint8_t *)map;
  f->eh = eh = (const ElfW(Ehdr) *)map;
  f->sh = NULL;
  f->nsh = 0;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != MPE_ELFCLASS) {
    munmap(map, f->sz);
    return -1;
  }
  if (eh->e_shentsize == sizeof(ElfW(Shdr)) && eh->e_shoff != 0 &&
      eh->e_shoff <= f->sz &&
      eh->e_shnum <= (f->sz - eh->e_shoff) / sizeof(ElfW(Shdr))) {
    f->sh = (const ElfW(Shdr) *)(f->p + eh->e_shoff);
    f->nsh = eh->e_shnum;
  }
  return 0;
}

static inline void lj_memprof_elf_close(MPEFile *f)
{
  munmap((void *)f->p, f->sz);
}

/* Is the section's content inside the file? */
static inline int lj_memprof_elf_inside(const MPEFile *f,
					const ElfW(Shdr) *s)
{
  return s->sh_type != SHT_NOBITS && s->sh_offset <= f->sz &&
	 s->sh_size <= f->sz - s->sh_offset;
}

/*
** The entries of section s, entsize bytes each, and its linked string
** table. With strict, the section must say it holds entries of that size
** (sh_entsize), as symbol tables do. 0, or -1 when the section or its
** string table is not usable.
*/
static inline int lj_memprof_elf_table(const MPEFile *f, const ElfW(Shdr) *s,
				       size_t entsize, int strict,
				       MPETable *t)
{
  const ElfW(Shdr) *ss;
  if ((strict && s->sh_entsize != entsize) || !lj_memprof_elf_inside(f, s) ||
      s->sh_link >= f->nsh)
    return -1;
  ss = &f->sh[s->sh_link];
  if (ss->sh_type != SHT_STRTAB || !lj_memprof_elf_inside(f, ss) ||
      ss->sh_size == 0)
    return -1;
  t->ent = f->p + s->sh_offset;
  t->n = s->sh_size / entsize;
  t->str = (const char *)f->p + ss->sh_offset;
  t->strsz = ss->sh_size;
  return 0;
}

/* Longest build ID taken (SHA-1 ones have 20 bytes). */
#define MPE_IDMAX		64

/* Find the GNU build ID in a block of notes (aligned to 4, or to 8 as a
** section or segment may say), into id[MPE_IDMAX]. Its length, or 0. */
static inline size_t lj_memprof_elf_noteid(const uint8_t *p, size_t n,
					   size_t align, uint8_t *id)
{
  size_t pos = 0;
  if (align != 8) align = 4;
  while (n - pos >= sizeof(ElfW(Nhdr))) {
    const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(p + pos);
    size_t namesz = nh->n_namesz, descsz = nh->n_descsz;
    size_t name = pos + sizeof(ElfW(Nhdr)), desc, next;
    size_t namepad = (namesz + align - 1) & ~(align - 1);
    if (namesz > n || namepad > n - name) break;
    desc = name + namepad;
    if (descsz > n - desc) break;
    if (nh->n_type == NT_GNU_BUILD_ID && namesz == 4 &&
	memcmp(p + name, "GNU", 4) == 0 && descsz > 0 && descsz <= MPE_IDMAX) {
      memcpy(id, p + desc, descsz);
      return descsz;
    }
    next = desc + ((descsz + align - 1) & ~(align - 1));
    if (next <= pos || next > n) break;
    pos = next;
  }
  return 0;
}

/* The build ID of a file, from its note sections, into id[MPE_IDMAX]. */
static inline size_t lj_memprof_elf_fileid(const MPEFile *f, uint8_t *id)
{
  size_t i, n;
  for (i = 0; i < f->nsh; i++) {
    const ElfW(Shdr) *s = &f->sh[i];
    if (s->sh_type == SHT_NOTE && lj_memprof_elf_inside(f, s) &&
	(n = lj_memprof_elf_noteid(f->p + s->sh_offset, s->sh_size,
			(size_t)s->sh_addralign, id)) != 0)
      return n;
  }
  return 0;
}

#endif
