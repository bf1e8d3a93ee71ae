/* SPDX-License-Identifier: MIT */
/*
 * The intrusive doubly linked list of the fake provider's trees (engine,
 * verbs, the fake kernel): a struct fp_link embedded in each object, a
 * head that links to itself when empty, and fp_container_of back from the
 * link to its object. Nothing here locks: each user says which lock, or
 * which single thread, owns its lists.
 */
#ifndef FP_LIST_H
#define FP_LIST_H

#include <stdbool.h>
#include <stddef.h>

#define fp_container_of(p, type, m) ((type *)(void *)((char *)(p) - offsetof(type, m)))

struct fp_link {
	struct fp_link *prev, *next;
};

/* A head for a static list: { &head, &head }. */
#define FP_LIST_HEAD_INIT(head) { &(head), &(head) }

static inline void fp_list_init(struct fp_link *h)
{
	h->prev = h->next = h;
}

static inline bool fp_list_empty(const struct fp_link *h)
{
	return h->next == h;
}

static inline void fp_list_add_tail(struct fp_link *h, struct fp_link *n)
{
	n->next = h;
	n->prev = h->prev;
	h->prev->next = n;
	h->prev = n;
}

/* Unlinks n and leaves it linked to itself, so a second del is harmless. */
static inline void fp_list_del(struct fp_link *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}

/* pos may be unlinked (and freed) inside the loop; tmp is the next one. */
#define fp_list_for_each_safe(pos, tmp, head) \
	for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); \
	     (pos) = (tmp), (tmp) = (pos)->next)

#endif /* FP_LIST_H */
