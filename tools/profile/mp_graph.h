/*
** The heap graph of a snapshot (doc/format.md, "The heap graph"): the
** objects the snapshot's GRAPH records name, each with the block the
** profile's heap had at its address then (size, kind, the location that
** allocated it), and the references between them. Kept when the report
** asks for it (MP_PROFILE_GRAPH): the last graph of the last file read.
** Node 0 is the root; its references are a collection's roots.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_GRAPH_H
#define MP_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#define MP_GRAPH_NO_NAME UINT32_MAX	/* An edge without a name. */
#define MP_GRAPH_NO_LOC UINT32_MAX	/* A node that is no block of the heap
					** (the main thread, in the VM's). */
#define MP_GRAPH_NONE UINT32_MAX	/* No parent: not reached. */

struct mp_graph_node {
  uint64_t addr;
  uint64_t size;	/* Its block's, 0 if none. */
  uint32_t loc;		/* The location that allocated it, MP_GRAPH_NO_LOC. */
  uint32_t first, nedges;	/* Its references: edges[first..]. */
  uint32_t parent;	/* The edge a shortest chain from the root reaches
			** it by, or MP_GRAPH_NONE (the root; not reached). */
  uint32_t idom;	/* Immediate dominator (a node), MP_GRAPH_NONE. */
  uint32_t depth;	/* References from the root on the shortest chain. */
  uint64_t retained;	/* Its size and that of all it dominates. */
  uint8_t kind;		/* Its block's LJM_KIND_*. */
  uint8_t flags;	/* The OBJ record's (weak keys, weak values). */
};

struct mp_graph_edge {
  uint64_t num;		/* INDEX: the index; UPVAL, SLOT, ROOT: the number;
			** SLOT: see loc. */
  uint32_t from, to;	/* Nodes. */
  uint32_t name;	/* Offset of its name in names, MP_GRAPH_NO_NAME. */
  uint32_t loc;		/* SLOT: the location (function) of the frame whose
			** local it is, MP_GRAPH_NO_LOC. */
  uint8_t tag;		/* LJM_GRAPH_*, or MP_GRAPH_FIELD_KEY. */
  uint8_t weak;		/* A weak table's: it does not keep its target. */
};

/* The key string of a FIELD: held by the table, as a key. */
#define MP_GRAPH_FIELD_KEY 0x40

struct mp_graph {
  struct mp_graph_node *nodes;
  uint32_t nnodes, nodes_cap;
  struct mp_graph_edge *edges;
  uint32_t nedges, edges_cap;
  char *names;		/* Names, each terminated. */
  size_t names_len, names_cap;
  uint32_t snapshot;	/* The snapshot of its file it was written in. */
  int solved;		/* Chains and dominators computed. */
  int complete;		/* Its snapshot's end was read: every reference is
			** in it (a stream cut inside it has only some). */
  uint32_t reached;	/* Nodes the root reaches. */
  uint64_t reached_bytes;  /* Their sizes. */
};

/*
** The edges of each node, by edge number in the graph's order: node v's
** (its references; with reverse, those to it) are list[first[v]] up to
** list[first[v + 1]]; with strong, only the references that keep their
** target (not a weak table's). 0, or -1 when out of memory; the caller
** frees both.
*/
int mp_graph_rows(const struct mp_graph *g, int reverse, int strong,
		  uint32_t **first, uint32_t **list);

#endif
