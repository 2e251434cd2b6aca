/* cookie.h — a browser-like cookie jar for one virtual user (RFC 6265 §5,
 * plus the Secure-origin and __Secure-/__Host- prefix rules of RFC 6265bis).
 *
 * Not implemented: the public-suffix check, the 6265bis rule that stops a
 * plain-http response from shadowing a Secure cookie, SameSite enforcement
 * (hammer never makes cross-site requests) and partitioning (Partitioned is
 * stored only). Dates are parsed with strptime, so the process must run in
 * the C (or an English) LC_TIME locale, which is the default.
 *
 * Bounds, so a server can neither grow a jar without limit nor make it drop
 * a cookie unnoticed: a cookie whose name and value exceed
 * HM_COOKIE_MAX_NAME_VALUE bytes is refused and an attribute value over
 * HM_COOKIE_MAX_ATTR_VALUE is ignored (both as RFC 6265bis §5.6 says); a
 * jar holds at most HM_COOKIE_JAR_MAX_COOKIES cookies and
 * HM_COOKIE_JAR_MAX_BYTES of cookie text. A Set-Cookie past a bound is
 * refused with -HM_ETOOBIG and jar->error naming the bound; nothing already
 * stored is evicted. Every Cookie header the jar can produce fits in
 * HM_COOKIE_HEADER_MAX bytes, and hm_cookie_jar_header_dup sizes its own.
 *
 * Memory: the jar owns every string in it. Pointers returned by
 * hm_cookie_jar_get stay valid until the next call that changes the jar. A
 * jar is not thread-safe; each virtual user has its own. */
#ifndef HM_PROTO_COOKIE_H
#define HM_PROTO_COOKIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum hm_samesite {
    HM_SAMESITE_DEFAULT = 0, /* attribute absent or unrecognised */
    HM_SAMESITE_NONE,
    HM_SAMESITE_LAX,
    HM_SAMESITE_STRICT,
} hm_samesite;

#define HM_COOKIE_MAX_NAME_VALUE 4096
#define HM_COOKIE_MAX_ATTR_VALUE 1024
/* RFC 6265 §6.1 asks user agents for at least 3000 cookies in all. */
#define HM_COOKIE_JAR_MAX_COOKIES 3000
/* Names, values, domains and paths of every cookie in the jar, NULs included. */
#define HM_COOKIE_JAR_MAX_BYTES ((size_t)64 << 10)
/* Room for the longest Cookie header value a jar can produce, NUL included:
 * each cookie adds at most its name, '=', its value and "; ". */
#define HM_COOKIE_HEADER_MAX (HM_COOKIE_JAR_MAX_BYTES + 3 * HM_COOKIE_JAR_MAX_COOKIES + 1)

/* Session cookies (no Max-Age / Expires) never expire within a run. */
#define HM_COOKIE_SESSION INT64_MAX

typedef struct hm_cookie {
    char *name; /* start of one block holding name, value, domain, path */
    char *value;
    char *domain;      /* lower-case, no leading dot */
    char *path;        /* starts with '/' */
    int64_t expires_s; /* Unix seconds; HM_COOKIE_SESSION if none */
    uint64_t created;  /* jar-local creation order, kept across replacement */
    hm_samesite samesite;
    bool host_only; /* no Domain attribute: sent to exactly this host */
    bool secure;
    bool http_only;
    bool partitioned;
} hm_cookie;

/* Cookies are kept sorted by path length (longest first), then by creation,
 * which is the order RFC 6265 §5.4 asks for in the Cookie header. */
typedef struct hm_cookie_jar {
    hm_cookie *items;
    const char *error; /* static: why the last set or put failed; NULL after success */
    /* 32 bits each, as the bounds above allow (a browser VU holds a jar):
     * the count of cookies, the room for them, the cookie text held
     * (counted against HM_COOKIE_JAR_MAX_BYTES), and the creation order,
     * which wraps only after 4 billion cookies set in one jar. */
    uint32_t len, cap;
    uint32_t bytes;
    uint32_t next_created;
} hm_cookie_jar;

/* Makes *jar an empty jar. Never fails (storage is allocated on first set). */
void hm_cookie_jar_init(hm_cookie_jar *jar);

/* Frees every cookie and leaves *jar empty and reusable. */
void hm_cookie_jar_free(hm_cookie_jar *jar);

/* Applies one Set-Cookie header value (len bytes, no "Set-Cookie:" prefix)
 * received for request_host / request_path (query ignored) at now_s (Unix
 * seconds). Stores, replaces (same name, domain and path) or, when it is
 * already expired, deletes. Returns 0, -HM_EPARSE (no '=', an empty name or
 * a control character anywhere: the cookie is ignored as RFC 6265bis
 * says), -EPERM (refused: Domain does not
 * cover the host, Secure or a __Secure-/__Host- name without a secure
 * channel or without its required attributes), -HM_ETOOBIG (past one of the
 * bounds above) or -ENOMEM; on failure jar->error says which. */
int hm_cookie_jar_set(hm_cookie_jar *jar, const char *set_cookie_value, size_t len,
                      const char *request_host, const char *request_path, bool secure_channel,
                      int64_t now_s);

/* Writes the Cookie header value ("a=1; b=2") for a request to host / path
 * at now_s: only unexpired cookies whose domain and path match, Secure ones
 * only when secure_channel; longest path first. NUL-terminates buf. Returns
 * its length (0 when no cookie applies) or -ENOSPC (buf emptied), which
 * never happens when cap >= HM_COOKIE_HEADER_MAX. */
int hm_cookie_jar_header(const hm_cookie_jar *jar, const char *host, const char *path,
                         bool secure_channel, int64_t now_s, char *buf, size_t cap);

/* The same header value in a new string of its exact size (hm_free it);
 * "" when no cookie applies; NULL only when out of memory. */
char *hm_cookie_jar_header_dup(const hm_cookie_jar *jar, const char *host, const char *path,
                               bool secure_channel, int64_t now_s);

/* Returns the value of the first cookie called name (any domain or path,
 * expired or not), or NULL. */
const char *hm_cookie_jar_get(const hm_cookie_jar *jar, const char *name);

/* Stores name=value as a host-only session cookie for host with path "/",
 * as if the server had set it (hammer uses this to pick its own
 * via_session_id). A __Secure-/__Host- name gets the Secure flag, since no
 * browser could hold it otherwise. Returns 0, -HM_EPARSE (empty name or
 * host, ';' in name or value, '=' in the name, control characters),
 * -HM_ETOOBIG (past a bound) or -ENOMEM; on failure jar->error says which. */
int hm_cookie_jar_put(hm_cookie_jar *jar, const char *name, const char *value, const char *host);

#endif
