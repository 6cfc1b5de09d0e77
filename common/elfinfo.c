/*
** ljmprof core: small questions about ELF files, answered by reading them.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfinfo.h"

#ifndef LJM_MULTIARCH
#define LJM_MULTIARCH ""
#endif

struct elf_map {
  const unsigned char *p;	/* Mapped file. */
  size_t size;			/* Its size. */
};

static int map_file(const char *path, struct elf_map *m)
{
  struct stat st;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  void *p;
  if (fd < 0)
    return -1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
    close(fd);
    return -1;
  }
  p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED)
    return -1;
  m->p = p;
  m->size = (size_t)st.st_size;
  return 0;
}

/* The section headers, checked against the file size. */
static const Elf64_Shdr *sections(const struct elf_map *m, size_t *n)
{
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m->p;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff == 0 ||
      eh->e_shoff > m->size ||
      (m->size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
    return NULL;
  *n = eh->e_shnum;
  return (const Elf64_Shdr *)(m->p + eh->e_shoff);
}

static int in_file(const struct elf_map *m, const Elf64_Shdr *s)
{
  return s->sh_offset <= m->size && s->sh_size <= m->size - s->sh_offset;
}

/* The string table that section s links to. */
static const char *linked_strtab(const struct elf_map *m,
				 const Elf64_Shdr *sh, size_t n,
				 const Elf64_Shdr *s, size_t *len)
{
  const Elf64_Shdr *st;
  if (s->sh_link >= n)
    return NULL;
  st = &sh[s->sh_link];
  if (st->sh_type != SHT_STRTAB || !in_file(m, st) || st->sh_size == 0)
    return NULL;
  *len = st->sh_size;
  return (const char *)m->p + st->sh_offset;
}

/* Map PATH and find its section headers; 0, or -1 with nothing mapped. */
static int map_sections(const char *path, struct elf_map *m,
			const Elf64_Shdr **sh, size_t *n)
{
  if (map_file(path, m) != 0)
    return -1;
  *sh = sections(m, n);
  if (*sh == NULL) {
    munmap((void *)m->p, m->size);
    return -1;
  }
  return 0;
}

int ljm_elf_defines(const char *path, const char *sym)
{
  struct elf_map m;
  const Elf64_Shdr *sh;
  size_t n, i, j, slen = strlen(sym);
  int found = 0;

  if (map_sections(path, &m, &sh, &n) != 0)
    return -1;
  for (i = 0; i < n && !found; i++) {
    const Elf64_Sym *syms;
    const char *str;
    size_t strlen_, nsyms;
    if (sh[i].sh_type != SHT_DYNSYM || !in_file(&m, &sh[i]) ||
	sh[i].sh_entsize != sizeof(Elf64_Sym))
      continue;
    str = linked_strtab(&m, sh, n, &sh[i], &strlen_);
    if (str == NULL)
      continue;
    syms = (const Elf64_Sym *)(m.p + sh[i].sh_offset);
    nsyms = sh[i].sh_size / sizeof(Elf64_Sym);
    for (j = 0; j < nsyms; j++) {
      size_t off = syms[j].st_name;
      if (off >= strlen_ || strlen_ - off <= slen)
	continue;
      if (memcmp(str + off, sym, slen + 1) == 0 &&
	  syms[j].st_shndx != SHN_UNDEF) {
	found = 1;
	break;
      }
    }
  }
  munmap((void *)m.p, m.size);
  return found;
}

int ljm_elf_needs(const char *path, const char *soname)
{
  struct elf_map m;
  const Elf64_Shdr *sh;
  size_t n, i, j, slen = strlen(soname);
  int found = 0;

  if (map_sections(path, &m, &sh, &n) != 0)
    return -1;
  for (i = 0; i < n && !found; i++) {
    const Elf64_Dyn *dyn;
    const char *str;
    size_t strlen_, ndyn;
    if (sh[i].sh_type != SHT_DYNAMIC || !in_file(&m, &sh[i]))
      continue;
    str = linked_strtab(&m, sh, n, &sh[i], &strlen_);
    if (str == NULL)
      continue;
    dyn = (const Elf64_Dyn *)(m.p + sh[i].sh_offset);
    ndyn = sh[i].sh_size / sizeof(Elf64_Dyn);
    for (j = 0; j < ndyn && dyn[j].d_tag != DT_NULL; j++) {
      size_t off = (size_t)dyn[j].d_un.d_val;
      if (dyn[j].d_tag != DT_NEEDED || off >= strlen_ ||
	  strlen_ - off <= slen)
	continue;
      if (memcmp(str + off, soname, slen + 1) == 0) {
	found = 1;
	break;
      }
    }
  }
  munmap((void *)m.p, m.size);
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
