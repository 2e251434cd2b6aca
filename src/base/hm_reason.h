/* hm_reason.h — a failure's reason in words, allocated only when something
 * fails.
 *
 * Records that live long and rarely fail (a VU, its connections, its
 * stream's watch) say why the last thing failed in a string that exists
 * only once it has something to say: a char * that is NULL while there is
 * no reason. hm_reason_set allocates its cap bytes at the first failure
 * and writes into them as snprintf into a char[cap] would (the same words,
 * cut at the same length); hm_reason_clear frees it again, so a record
 * that recovered holds no buffer either.
 *
 * Ownership: the record holding the pointer owns the string; clear it
 * before the record goes. Out of memory, a set keeps the reason it had (or
 * none). Not thread-safe: one owner. */
#ifndef HM_BASE_REASON_H
#define HM_BASE_REASON_H

#include <stddef.h>

/* Writes the formatted reason into *r, cut to cap - 1 bytes as snprintf
 * cuts; allocates cap bytes when *r is NULL. A record's every set on the
 * same pointer passes the same cap. */
void hm_reason_set(char **r, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The reason, or "" when there is none. */
static inline const char *hm_reason(const char *r)
{
    return r ? r : "";
}

/* Forgets the reason and frees its string; *r becomes NULL. */
void hm_reason_clear(char **r);

#endif
