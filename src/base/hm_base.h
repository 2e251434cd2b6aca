/* hm_base.h — conventions shared by every layer of hammer.
 *
 * Errors: every function that can fail returns 0 (or a non-negative count)
 * on success and a negative errno on failure; hm_strerror() names it. Codes
 * in the HM_E* range below are hammer's own, for failures errno cannot name.
 *
 * Time: hm_now_ns() is CLOCK_MONOTONIC in nanoseconds. Wall-clock time is
 * never used to measure anything.
 *
 * Memory: hm_alloc/hm_free go to mimalloc (per-thread heaps, no locks) in
 * normal builds and to libc malloc under sanitizers, so ASan sees every
 * allocation. Whoever calls hm_alloc owns the block until hm_free. */
#ifndef HM_BASE_H
#define HM_BASE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define HM_LIKELY(x) __builtin_expect(!!(x), 1)
#define HM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HM_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define HM_CONTAINER_OF(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* hammer's own error codes, kept clear of errno values (< 4096). */
enum {
    HM_EPROTO_HTTP = 10001, /* malformed HTTP message */
    HM_ETOOBIG = 10002,     /* header or body over the configured limit */
    HM_ECLOSED = 10003,     /* peer closed the connection before a full message */
    HM_EPARSE = 10004,      /* malformed input other than HTTP (JSON, SSE, URL, HTML) */
    HM_ENOTFOUND = 10005,   /* something expected in a document is missing */
    HM_ESTATUS = 10006,     /* an HTTP status other than the one expected */
    HM_ETLS = 10007,        /* TLS failure; details from OpenSSL elsewhere */
};

/* Returns a static, human-readable description of a negative error code. */
const char *hm_strerror(int err);

/* Parses a duration: "250ms", "10s", "2m", "1h", "500us", parts that add up
 * ("1m30s", "1h30m") or a bare number of seconds, into nanoseconds. 0, or
 * -EINVAL for anything else. */
int hm_parse_duration(const char *s, int64_t *ns);

/* Levenshtein distance between two words of up to 64 bytes (SIZE_MAX for
 * longer ones), for "did you mean". */
size_t hm_edit_distance(const char *a, const char *b);

/* True when `typed` is a slip of `known`: within a third of its length
 * (at least 2) edits, and more than one letter long. */
bool hm_near_miss(const char *typed, const char *known);

/* Parses a whole decimal number in min..max, nothing after it. 0, or
 * -EINVAL for anything else. */
int hm_parse_int(const char *s, long long min, long long max, long long *out);

static inline int64_t hm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void *hm_alloc(size_t size);
void *hm_calloc(size_t n, size_t size);
void *hm_realloc(void *p, size_t size);
void hm_free(void *p);
char *hm_strdup(const char *s);
char *hm_strndup(const char *s, size_t n);

#endif
