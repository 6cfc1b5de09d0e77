/*
** ljmprof core: small questions about ELF files (which flavour of LuaJIT
** a library is, whether a program links LuaJIT statically), answered by
** reading the file, never by loading it.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJM_ELFINFO_H
#define LJM_ELFINFO_H

#include <stddef.h>
#include <stdint.h>

/* 1 if the ELF file defines (exports) dynamic symbol sym, 0 if not,
** -1 if it cannot be read or is not an ELF file of this process's class
** (64-bit on x86_64). */
int ljm_elf_defines(const char *path, const char *sym);

/* 1 if the ELF file has a DT_NEEDED entry soname, 0 if not, -1 on error. */
int ljm_elf_needs(const char *path, const char *soname);

/* "luajit2" (OpenResty's, exports lua_setexdata), "luajit", or NULL if
** the file cannot be read. */
const char *ljm_elf_flavour(const char *path);

/* The system's libluajit-5.1.so.2 as the dynamic linker would find it in
** the default folders, into buf; 0, or ENOENT. */
int ljm_system_luajit(char *buf, size_t n);

/* The GNU build-id of an ELF file, in hex, into buf[n]; 0, or -1 when the
** file cannot be read or has none. */
int ljm_elf_build_id(const char *path, char *buf, size_t n);

/* The function symbol of the ELF file that covers file offset off (or
** starts there), from .symtab, else .dynsym: its name into buf[n], the
** file offset it starts at into *start. 0, or -1 when none does. */
int ljm_elf_func_at(const char *path, uint64_t off, char *buf, size_t n,
		    uint64_t *start);

#endif
