/* hm_dlist.h — an intrusive doubly-linked FIFO.
 *
 * The link lives in the record it chains (embed an hm_dlink; get the
 * record back with HM_CONTAINER_OF), so pushing and removing allocate
 * nothing and removing from the middle is O(1): the engine's timer
 * queues and wait queues, HTTP/2's deadline list, TLS's handshake turns
 * and bench_app's expired sessions are each one of these.
 *
 * Ownership: a list owns nothing; remove a record before freeing it. Not
 * thread-safe: a list belongs to one thread. */
#ifndef HM_BASE_DLIST_H
#define HM_BASE_DLIST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct hm_dlink {
    struct hm_dlink *prev, *next;
} hm_dlink;

typedef struct hm_dlist {
    hm_dlink *head, *tail; /* oldest first; both NULL when empty */
} hm_dlist;

static inline bool hm_dlist_empty(const hm_dlist *l)
{
    return !l->head;
}

/* Appends n (not in any list) at the tail. */
static inline void hm_dlist_push(hm_dlist *l, hm_dlink *n)
{
    n->next = NULL;
    n->prev = l->tail;
    if (l->tail)
        l->tail->next = n;
    else
        l->head = n;
    l->tail = n;
}

/* Takes n out of l, which holds it. */
static inline void hm_dlist_remove(hm_dlist *l, hm_dlink *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else
        l->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        l->tail = n->prev;
    n->prev = n->next = NULL;
}

#endif
