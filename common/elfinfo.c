/*
** ljmprof core: small questions about ELF files, answered by reading them.
**
** Mapping the file and checking its sections is the profiler's own code
** (src/lj_memprof_elf.h), so that both read ELF files the same way.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elfinfo.h"
#include "lj_memprof_elf.h"	/* Shared with the profiler (src/). */

#ifndef LJM_MULTIARCH
#define LJM_MULTIARCH ""
#endif

/* Map PATH and find its section headers; 0, or -1 with nothing mapped. */
static int map_sections(const char *path, MPEFile *f)
{
  if (lj_memprof_elf_open(f, path) != 0)
    return -1;
  if (f->sh == NULL) {
    lj_memprof_elf_close(f);
    return -1;
  }
  return 0;
}

int ljm_elf_defines(const char *path, const char *sym)
{
  MPEFile f;
  size_t i, j, slen = strlen(sym);
  int found = 0;

  if (map_sections(path, &f) != 0)
    return -1;
  for (i = 0; i < f.nsh && !found; i++) {
    const ElfW(Sym) *syms;
    MPETable t;
    if (f.sh[i].sh_type != SHT_DYNSYM ||
	lj_memprof_elf_table(&f, &f.sh[i], sizeof(ElfW(Sym)), 1, &t) != 0)
      continue;
    syms = (const ElfW(Sym) *)t.ent;
    for (j = 0; j < t.n; j++) {
      size_t off = syms[j].st_name;
      if (off >= t.strsz || t.strsz - off <= slen)
	continue;
      if (memcmp(t.str + off, sym, slen + 1) == 0 &&
	  syms[j].st_shndx != SHN_UNDEF) {
	found = 1;
	break;
      }
    }
  }
  lj_memprof_elf_close(&f);
  return found;
}

int ljm_elf_needs(const char *path, const char *soname)
{
  MPEFile f;
  size_t i, j, slen = strlen(soname);
  int found = 0;

  if (map_sections(path, &f) != 0)
    return -1;
  for (i = 0; i < f.nsh && !found; i++) {
    const ElfW(Dyn) *dyn;
    MPETable t;
    if (f.sh[i].sh_type != SHT_DYNAMIC ||
	lj_memprof_elf_table(&f, &f.sh[i], sizeof(ElfW(Dyn)), 0, &t) != 0)
      continue;
    dyn = (const ElfW(Dyn) *)t.ent;
    for (j = 0; j < t.n && dyn[j].d_tag != DT_NULL; j++) {
      size_t off = (size_t)dyn[j].d_un.d_val;
      if (dyn[j].d_tag != DT_NEEDED || off >= t.strsz ||
	  t.strsz - off <= slen)
	continue;
      if (memcmp(t.str + off, soname, slen + 1) == 0) {
	found = 1;
	break;
      }
    }
  }
  lj_memprof_elf_close(&f);
  return found;
}

const char *ljm_elf_flavour(const char *path)
{
  int r = ljm_elf_defines(path, "lua_setexdata");
  if (r < 0)
    return NULL;
  return r ? "luajit2" : "luajit";
}

int ljm_system_luajit(char *buf, size_t n)
{
  static const char *const dirs[] = {
    "/lib/" LJM_MULTIARCH, "/usr/lib/" LJM_MULTIARCH, "/lib64", "/usr/lib64",
    "/lib", "/usr/lib", "/usr/local/lib"
  };
  size_t i;
  for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
    if ((size_t)snprintf(buf, n, "%s/libluajit-5.1.so.2", dirs[i]) >= n)
      continue;
    if (access(buf, R_OK) == 0)
      return 0;
  }
  buf[0] = '\0';
  return ENOENT;
}

int ljm_elf_build_id(const char *path, char *buf, size_t n)
{
  MPEFile f;
  uint8_t id[MPE_IDMAX];
  size_t len, k;

  buf[0] = '\0';
  if (map_sections(path, &f) != 0)
    return -1;
  len = lj_memprof_elf_fileid(&f, id);
  lj_memprof_elf_close(&f);
  if (len == 0 || 2 * len >= n)
    return -1;
  for (k = 0; k < len; k++)
    snprintf(buf + 2 * k, 3, "%02x", id[k]);
  return 0;
}

/* The virtual address of file offset off, by the PT_LOAD that holds it. */
static int file_vaddr(const MPEFile *f, uint64_t off, uint64_t *vaddr)
{
  const ElfW(Ehdr) *eh = f->eh;
  size_t i;
  if (eh->e_phentsize != sizeof(ElfW(Phdr)) || eh->e_phoff > f->sz ||
      eh->e_phnum > (f->sz - eh->e_phoff) / sizeof(ElfW(Phdr)))
    return -1;
  for (i = 0; i < eh->e_phnum; i++) {
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(f->p + eh->e_phoff) + i;
    if (ph->p_type == PT_LOAD && off >= ph->p_offset &&
	off - ph->p_offset < ph->p_filesz) {
      *vaddr = off - ph->p_offset + ph->p_vaddr;
      return 0;
    }
  }
  return -1;
}

int ljm_elf_func_at(const char *path, uint64_t off, char *buf, size_t n,
		    uint64_t *start)
{
  MPEFile f;
  uint64_t va;
  int found = 0;
  buf[0] = '\0';
  if (map_sections(path, &f) != 0)
    return -1;
  if (file_vaddr(&f, off, &va) != 0) {
    lj_memprof_elf_close(&f);
    return -1;
  }
  /* .symtab first (every function of an unstripped file), .dynsym
  ** after: a symbol that covers va, or starts at it. */
  for (int pass = 0; pass < 2 && !found; pass++) {
    for (size_t i = 0; i < f.nsh && !found; i++) {
      const ElfW(Sym) *syms;
      MPETable t;
      if (f.sh[i].sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) ||
	  lj_memprof_elf_table(&f, &f.sh[i], sizeof(ElfW(Sym)), 1, &t) != 0)
	continue;
      syms = (const ElfW(Sym) *)t.ent;
      for (size_t j = 0; j < t.n; j++) {
	const ElfW(Sym) *s = &syms[j];
	if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF ||
	    s->st_name >= t.strsz)
	  continue;
	if (va == s->st_value ||
	    (va > s->st_value && va - s->st_value < s->st_size)) {
	  snprintf(buf, n, "%.*s", (int)strnlen(t.str + s->st_name,
						 t.strsz - s->st_name),
		   t.str + s->st_name);
	  *start = off - (va - s->st_value);
	  found = 1;
	  break;
	}
      }
    }
  }
  lj_memprof_elf_close(&f);
  return found ? 0 : -1;
}
