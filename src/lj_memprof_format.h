/*
** Memory profiler stream format (memprof, version 3): the constants that
** the writer inside the VM (src/) and the reader (tools/) share.
** This header is the only thing they share. It must stay free of any
** LuaJIT type or include. doc/format.md explains it for users.
**
** All integers are ULEB128; a string is a ULEB128 length and its bytes.
**
**   stream   := symtab events
**   symtab   := 'l' 'j' 's' version 0 0 0  sym*  0x80
**   sym      := kind(0..2)  symbody(kind)
**   symbody  := LFUNC: proto-addr chunkname linedefined
**             | CFUNC: addr name
**             | TRACE: traceno proto-addr line
**   events   := 'l' 'j' 'm' version 0 0 0  event*  0x80
**   event    := header location body
**   header   := bits 0-1 event, bits 2-4 source, bits 5-6 zero
**   location := INTERNAL: nothing
**             | LFUNC: proto-addr line
**             | CFUNC: function-addr
**             | TRACE: traceno
**   body     := ALLOC: new-addr new-size
**             | FREE: old-addr old-size
**             | REALLOC: old-addr old-size new-addr new-size
**             | SYMTAB: symbody(source) (a symbol event has no location)
**
** linedefined is 0 for a main chunk; the reference writer writes
** 2^64-1 (-1) for built-ins implemented in bytecode. A symbol event comes
** before the first event that names its address; a later definition of
** an address replaces the earlier one from that point of the stream.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJ_MEMPROF_FORMAT_H
#define LJ_MEMPROF_FORMAT_H

/* -- Common -------------------------------------------------------------- */

#define LJM_FMT_VERSION		3	/* Both sections carry this version. */
#define LJM_FMT_HDRLEN		7	/* Magic (3) + version (1) + reserved (3). */
#define LJM_FMT_ULEB128_MAX	10	/* Longest ULEB128 of a 64 bit value. */

/*
** Extensions. A stream that uses one (they are opt-in) writes
** LJM_FMT_VERSION_EXT in the version byte of both section headers, the
** extension's id in the first reserved byte and its version in the
** second; the third stays 0. A reader of the established format stops at
** the version byte ("unsupported version"); ours accepts exactly the
** pairs listed here, and names any other pair it meets.
**
** X(name, id, version).
*/
#define LJM_FMT_VERSION_EXT	0x80
#define LJM_FMT_EXTENSIONS(X) \
  X(PROFILE, LJM_EXT_PROFILE, LJM_EXT_PROFILE_VERSION)

/*
** The profile extension ('x', version 1): call stacks, and the records
** that time marks, sampling, object kinds, trace sites and a start
** snapshot use. One extension for all of them, so that a stream says once
** what it is. The symbol table is that of version 3. In the events:
**
**   event    := header location body [objkind]
**   header   := bits 0-1 event, bits 2-4 source, bit 5 KIND, bit 6 zero
**   location := (the sources of version 3)
**             | STACK: node-id            (an announced node, >= 1)
**   objkind  := one byte, present iff KIND is set (ALLOC, REALLOC only)
**   SYMTAB events with the new sources:
**     NODE:  parent-id frame              (ids count up from 1 in the
**                                          order nodes are announced;
**                                          parent 0 is the root, else
**                                          an id announced before)
**     INFO:  key value                    (LJM_INFO_*; a reader skips
**                                          keys it does not know)
**     SITE:  traceno site-id n (proto-addr line){n}
**                                         (a call site in trace code: its
**                                          line, then the lines of the
**                                          frames inlined above the
**                                          trace's start, inner first)
**   frame    := LUA:   proto-addr line name   (name "" if not known)
**             | FAST:  ffid name              (as Lua knows it)
**             | C:     function-addr          (named as a CFUNC source)
**             | TRACE: traceno site-id        (site 0: not known)
**             | CUT                           (deeper frames left out)
**
** A stack is leaf first in the events (the id of the leaf node), root
** first in the tree. A free may carry a STACK or a version-3 location.
*/
#define LJM_EXT_PROFILE		'x'
#define LJM_EXT_PROFILE_VERSION	1

#define LJM_EV_KIND		0x20	/* Bit 5: an objkind byte follows. */

/*
** Object kinds: what the VM allocates a block for, as the allocating
** call says (patch 0010). X(name, number, short name, what it is); the
** short name is what ljmprof's options take. A reader shows a number not
** listed as "kind N". NONE: no call said (the bytecode writer's heap of
** newer trees, the GDB JIT interface). Machine code is mapped by the VM
** outside its allocator: no event has it.
*/
#define LJM_FMT_KINDS(X) \
  X(NONE, 0, "unknown", "said by no allocating call") \
  X(TAB, 1, "table", "table (with an array part of up to 16 slots)") \
  X(TAB_ARRAY, 2, "table-array", "array part of a table") \
  X(TAB_HASH, 3, "table-hash", "hash part of a table") \
  X(STR, 4, "string", "string") \
  X(LFUNC, 5, "lua-function", "Lua function (closure)") \
  X(CFUNC, 6, "c-function", "C function") \
  X(UPVAL, 7, "upvalue", "upvalue") \
  X(PROTO, 8, "prototype", "function prototype (bytecode, constants)") \
  X(THREAD, 9, "thread", "thread (coroutine)") \
  X(STACK, 10, "stack", "stack of a thread") \
  X(UDATA, 11, "userdata", "userdata") \
  X(CDATA, 12, "cdata", "cdata (FFI)") \
  X(TRACE, 13, "trace", "compiled trace (its IR and snapshots)") \
  X(BUF, 14, "buffer", "string buffer contents") \
  X(STRTAB, 15, "string-table", "table of interned strings") \
  X(PARSER, 16, "parser", "parser's bytecode and variable stacks") \
  X(JIT, 17, "jit", "JIT compiler's work memory") \
  X(FFI, 18, "ffi", "FFI type table, callback slots") \
  X(VM, 19, "vm", "other VM internals (light userdata segments)")

#define LJM_KIND_DEF(name, n, cli, what)	LJM_KIND_##name = n,
enum { LJM_FMT_KINDS(LJM_KIND_DEF) LJM_KIND__MAX };
#undef LJM_KIND_DEF

#define LJM_SRC_STACK		0x14	/* Events: the location is a node id. */
#define LJM_SRC_NODE		0x14	/* Symbol events: a stack node. */
#define LJM_SRC_INFO		0x18	/* Symbol events: key and value. */
#define LJM_SRC_SITE		0x1c	/* Symbol events: a trace call site. */

#define LJM_SRC_GRAPH		0x00	/* Symbol events: the heap graph. */

/*
** The heap graph (LJM_SRC_GRAPH symbol events): written inside a later
** snapshot when asked, after its blocks, before INFO SNAPSHOT 0. Each
** record is a tag and its fields; addresses are those of the snapshot's
** blocks (the main thread's lies inside the VM's state). An OBJ record
** says whose references follow, up to the next OBJ; object 0 is the
** root, whose references are the roots of a collection.
**
**   graph := OBJ addr flags               (flags: WEAKKEYS | WEAKVALUES)
**          | PART to                      (a block the object is made of)
**          | INDEX index to               (array slot, integer key)
**          | FIELD key to name            (a string key: the key string
**                                          and the value, 0 if the value
**                                          is not an object)
**          | KEY key                      (another object as a key)
**          | VALUE to                     (its value; or a reference
**                                          without a name)
**          | META to | ENV to | PROTO to | CONST to
**          | UPVAL index to name          (name "" if not known)
**          | SLOT slot to proto name      (a thread's stack slot; proto:
**                                          the Lua frame whose local it
**                                          is, 0 and "" if not known)
**          | ROOT index to name
*/
#define LJM_FMT_GRAPH(X) \
  X(OBJ, 1, "object") \
  X(PART, 2, "part") \
  X(INDEX, 3, "index") \
  X(FIELD, 4, "field") \
  X(KEY, 5, "key") \
  X(VALUE, 6, "value") \
  X(META, 7, "metatable") \
  X(ENV, 8, "environment") \
  X(PROTO, 9, "prototype") \
  X(CONST, 10, "constant") \
  X(UPVAL, 11, "upvalue") \
  X(SLOT, 12, "stack slot") \
  X(ROOT, 13, "root")

#define LJM_GRAPH_DEF(name, n, what)	LJM_GRAPH_##name = n,
enum { LJM_FMT_GRAPH(LJM_GRAPH_DEF) LJM_GRAPH__MAX };
#undef LJM_GRAPH_DEF

#define LJM_GRAPH_WEAKKEYS	1	/* OBJ flags: a weak table's. */
#define LJM_GRAPH_WEAKVALUES	2

/* Frame tags of a NODE. */
#define LJM_FRAME_LUA		0
#define LJM_FRAME_FAST		1
#define LJM_FRAME_C		2
#define LJM_FRAME_TRACE		3
#define LJM_FRAME_CUT		4

/*
** INFO keys. X(name, key, what the value is). Values are ULEB128.
*/
#define LJM_FMT_INFOS(X) \
  X(DEPTH, 1, "stack depth limit (frames)") \
  X(TIME, 2, "nanoseconds since the stream began (monotonic)") \
  X(SAMPLE, 3, "mean bytes between sampled allocations (0: all)") \
  X(NODES_FULL, 4, "node table full at this many nodes") \
  X(CUT_EVENTS, 5, "events whose stack the full table cut") \
  X(SNAPSHOT, 6, "1: start snapshot begins, 0: it ends") \
  X(FULL_ROOT, 7, "the next node, a CUT root, stands for the frames " \
		  "that the full table left out") \
  X(RSS, 8, "the process's resident set size (bytes), at the TIME mark " \
	    "before it") \
  X(MAPPED, 9, "bytes LuaJIT's own allocator has mapped from the system, " \
	       "at the TIME mark before it")

#define LJM_INFO_DEPTH		1
#define LJM_INFO_TIME		2
#define LJM_INFO_SAMPLE		3
#define LJM_INFO_NODES_FULL	4
#define LJM_INFO_CUT_EVENTS	5
#define LJM_INFO_SNAPSHOT	6
#define LJM_INFO_FULL_ROOT	7
#define LJM_INFO_RSS		8
#define LJM_INFO_MAPPED		9
/* Its values: a snapshot of the start (its blocks are held from the
** start), a later one (a census of what is live then, not events), and
** the end of either. */
#define LJM_SNAPSHOT_END	0
#define LJM_SNAPSHOT_START	1
#define LJM_SNAPSHOT_LATER	2

#define LJM_STACK_DEPTH_DEFAULT	32	/* Frames kept, leaf first. */
#define LJM_STACK_DEPTH_MAX	1024
#define LJM_STACK_NODES_MAX	(1u << 22)  /* Writer's bound on nodes. */
#define LJM_SAMPLE_DEFAULT	(4u << 20)  /* Mean of "sample: yes". */

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

/*
** The sources as a list, for code that handles each in turn:
** X(name, source bits, symbol kind of its symbols (-1: none), what it is).
** A new source is one line here; a reader that meets source bits not in
** the list rejects the event.
*/
#define LJM_FMT_SOURCES(X) \
  X(INTERNAL, LJM_SRC_INTERNAL, -1, "internal") \
  X(LFUNC, LJM_SRC_LFUNC, LJM_SYMTAB_LFUNC, "Lua function") \
  X(CFUNC, LJM_SRC_CFUNC, LJM_SYMTAB_CFUNC, "C function") \
  X(TRACE, LJM_SRC_TRACE, LJM_SYMTAB_TRACE, "trace")

#define LJM_EV_UNUSED_MASK	0x60	/* Bits 5-6: always 0. */
#define LJM_EV_EPILOGUE		0x80	/* The last byte of a stream. */

#endif
