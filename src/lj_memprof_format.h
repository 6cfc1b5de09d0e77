/*
** Memory profiler stream format (memprof, version 3): the constants that
** the writer inside the VM (src/) and the reader (tools/) share.
** This header is the only thing they share. It must stay free of any
** LuaJIT type or include; see FORMAT.md for the grammar.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJ_MEMPROF_FORMAT_H
#define LJ_MEMPROF_FORMAT_H

/* -- Common -------------------------------------------------------------- */

#define LJM_FMT_VERSION		3	/* Both sections carry this version. */
#define LJM_FMT_HDRLEN		7	/* Magic (3) + version (1) + reserved (3). */
#define LJM_FMT_ULEB128_MAX	10	/* Longest ULEB128 of a 64 bit value. */

/* -- Symbol table section -------------------------------------------------- */

#define LJM_SYMTAB_M0		'l'
#define LJM_SYMTAB_M1		'j'
#define LJM_SYMTAB_M2		's'

#define LJM_SYMTAB_KIND_MASK	0x03	/* Bits 0-1 of an entry header. */
#define LJM_SYMTAB_LFUNC	0	/* Proto address, chunk name, linedefined. */
#define LJM_SYMTAB_CFUNC	1	/* Symbol address, symbol name. */
#define LJM_SYMTAB_TRACE	2	/* Trace number, proto address, line. */
#define LJM_SYMTAB_FINAL	0x80	/* Header of the end-of-table marker. */

/* -- Event section ----------------------------------------------------------- */

#define LJM_EVENTS_M0		'l'
#define LJM_EVENTS_M1		'j'
#define LJM_EVENTS_M2		'm'

/* Event kind, bits 0-1 of the header. */
#define LJM_EV_MASK		0x03
#define LJM_EV_SYMTAB		0	/* A new symbol; its source says which. */
#define LJM_EV_ALLOC		1	/* New address, new size. */
#define LJM_EV_FREE		2	/* Old address, old size. */
#define LJM_EV_REALLOC		3	/* Old address/size, new address/size. */

/* Source, bits 2-4 of the header, already shifted into place. */
#define LJM_SRC_MASK		0x1c
#define LJM_SRC_INTERNAL	0x04	/* No location. */
#define LJM_SRC_LFUNC		0x08	/* Proto address, current line. */
#define LJM_SRC_CFUNC		0x0c	/* C function address. */
#define LJM_SRC_TRACE		0x10	/* Trace number. */

#define LJM_EV_UNUSED_MASK	0x60	/* Bits 5-6: always 0. */
#define LJM_EV_EPILOGUE		0x80	/* The last byte of a stream. */

#endif
