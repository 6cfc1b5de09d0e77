/*
** The frame tree of the flame graphs (svg, html): the folded format's
** frames (real stacks, or a version-3 stream's chunk, function and line)
** merged where they print alike, each node with its own and its callees'
** values, children in name order.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_FTREE_H
#define MP_FTREE_H

#include <stdint.h>

#include "mp_names.h"
#include "mp_profile.h"

/* Frame kinds: what colours a frame. */
enum mp_ftree_kind {
  MP_FK_LUA, MP_FK_BUILTIN, MP_FK_C, MP_FK_TRACE, MP_FK_INTERNAL,
  MP_FK_ROOT, MP_FK_N
};

/* The values a node sums; the first three in the order of enum
** mp_value, so that v[o->value] is what --value asks for. */
enum mp_ftree_value {
  MP_FV_ALLOC_BYTES, MP_FV_ALLOC_COUNT, MP_FV_HELD_END,
  MP_FV_HELD_AT,	/* Held at a moment: the caller's figures. */
  MP_FV_N
};

struct mp_ftree_node {
  uint32_t parent;
  uint32_t first, nchildren;	/* In order[]: its children. */
  uint32_t hash;		/* mp_ftree_hash(parent, name): kept, so that
				** growing the slots and a lookup's probes
				** read no name. */
  size_t name_at, name_len;	/* In the names buffer. */
  uint32_t kid, sib;		/* Its last child made, and the child made
				** before it under its parent (0: none). */
  uint32_t nkids;
  uint8_t kind;			/* enum mp_ftree_kind. */
  uint8_t hashed;		/* Its children are in the slots. */
  uint64_t v[MP_FV_N];		/* Its own and its callees'. */
};

struct mp_ftree_slot {
  uint32_t hash, id;	/* The node's hash, and its id + 1 (0: empty). */
};

struct mp_ftree {
  struct mp_ftree_node *nodes;	/* 0 is the root. */
  uint32_t n, cap;
  struct mp_ftree_slot *slots;	/* By hash of (parent, name): the
				** children of hashed nodes. */
  uint32_t nslots, nhashed;
  uint32_t *order;	/* Node ids by (parent, name), after sorting. */
  struct mp_buf names;
};

int mp_ftree_init(struct mp_ftree *t);
void mp_ftree_free(struct mp_ftree *t);

/*
** Add p's stacks (or, without stacks, its locations) to t. A path is
** added when one of the values in mask (1 << MP_FV_*) is not 0. at,
** when not NULL, gives MP_FV_HELD_AT: bytes per stack node (nat of
** them) or, without stacks, per location. 0, or -1 out of memory.
*/
int mp_ftree_add(struct mp_ftree *t, struct mp_profile *p,
		 struct mp_aliases *al, unsigned mask, const uint64_t *at,
		 uint32_t nat);

/*
** The same by object kind (MP_PROFILE_KINDS): into trees[kind], where
** not NULL, the call paths of that kind (with stacks; without, its
** locations' folded frames), MP_FV_HELD_AT 0. 0, or -1 out of memory.
*/
int mp_ftree_add_kinds(struct mp_ftree *const trees[MP_NKINDS],
		       struct mp_profile *p, struct mp_aliases *al);

/* mp_ftree_add, and with stacks *of (malloc'd, the caller's; else NULL):
** the tree node of each stream stack node (0: none). */
int mp_ftree_add_map(struct mp_ftree *t, struct mp_profile *p,
		     struct mp_aliases *al, unsigned mask, const uint64_t *at,
		     uint32_t nat, uint32_t **of);

/* A new child of parent, with no lookup (the caller knows it is new):
** its id, or 0 when out of memory. */
uint32_t mp_ftree_append(struct mp_ftree *t, uint32_t parent,
			 const char *name, size_t len,
			 enum mp_ftree_kind kind, const uint64_t *v);

/* Each node's children in name order (order[first .. first+nchildren)). */
int mp_ftree_sort(struct mp_ftree *t);

/* The same for the nodes keep() keeps only: a kept node's parent must
** be kept too (the others are in no node's children). */
int mp_ftree_sort_some(struct mp_ftree *t,
		       int (*keep)(const struct mp_ftree *, uint32_t));

/* Each node's count of frames, itself and all under it (malloc'd, t->n
** of them), or NULL. */
uint32_t *mp_ftree_sizes(const struct mp_ftree *t);

/* A hash of a name under parent: the shade of a frame. */
uint32_t mp_ftree_hash(uint32_t parent, const char *s, size_t len);

#endif
