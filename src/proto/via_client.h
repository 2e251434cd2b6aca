/* via_client.h — what a browser of a php-via app does, as client steps:
 * load a page (cookies kept, via_ctx and the action URL scraped), build the
 * SSE and action requests, and close the session.
 *
 * Ownership: hm_via_page strings are hm_alloc'd and freed by
 * hm_via_page_free(). Request builders write into the caller's buffer. */
#ifndef HM_PROTO_VIA_CLIENT_H
#define HM_PROTO_VIA_CLIENT_H

#include "proto/cookie.h"
#include "proto/http_client.h"

typedef struct hm_via_page {
    char *ctx;        /* via_ctx of the page's context */
    char *action_url; /* path of the action, NULL when not asked for */
    int status;
} hm_via_page;

/* GETs route with the jar's cookies, stores Set-Cookie in the jar, and
 * scrapes via_ctx (and the URL of `action` when not NULL). On failure writes
 * a one-line reason to why and returns a negative error. */
int hm_via_load_page(hm_http_conn *c, hm_cookie_jar *jar, const char *route, const char *action,
                     int64_t deadline, hm_via_page *out, char *why, size_t whylen);
void hm_via_page_free(hm_via_page *p);

/* The Cookie header value the jar holds for path on the conn's target, as
 * a hm_alloc'd string of its own size ("" when none; NULL only when out of
 * memory): a fixed buffer once dropped a long one, and on a coroutine's
 * stack would keep its pages resident. */
char *hm_via_cookie_dup(const hm_cookie_jar *jar, const hm_http_target *t, const char *path);

/* hm_via_write_action / hm_via_write_sse into a hm_alloc'd buffer of the
 * right size; *len gets the length. NULL on failure. */
char *hm_via_action_request(const hm_http_target *t, const char *action_url, const char *cookie,
                            const char *body, size_t body_len, const char *origin, size_t *len);
char *hm_via_sse_request(const hm_http_target *t, const char *ctx, const char *cookie, size_t *len);
/* GET path with the user's cookie ("" for none) and the run's
 * Accept-Encoding, into *out (hm_alloc'd, the right size). Returns the
 * length, or a negative errno (-ENOMEM; a path that cannot go in a request
 * line: hm_http_write_request's error), *out then NULL. */
ssize_t hm_via_get_request(const hm_http_target *t, const char *path, const char *cookie,
                           char **out);

/* POST action_url with a JSON body, as Datastar sends it. origin NULL
 * leaves Origin out. Returns the request length or -ENOSPC. */
ssize_t hm_via_write_action(char *buf, size_t cap, const hm_http_target *t, const char *action_url,
                            const char *cookie, const char *body, size_t body_len,
                            const char *origin);

/* GET /_sse?datastar=<{"via_ctx":ctx}> with the cookie and Datastar headers. */
ssize_t hm_via_write_sse(char *buf, size_t cap, const hm_http_target *t, const char *ctx,
                         const char *cookie);

/* True when c's last response is php-via's answer to an action for a
 * context this server does not have: 400 with "Invalid context". */
bool hm_via_invalid_context(const hm_http_conn *c);

/* True when an /_sse response head is php-via's repeat answer for a lost
 * context: 200 with Content-Length: 0 (the first answer is the reload
 * script, hm_watch.reload_asked). */
bool hm_via_sse_empty(const hm_http_resp_parser *p);

/* POST /_session/close with the context id as body (the beacon). */
int hm_via_close_session(hm_http_conn *c, const char *ctx, const char *cookie, int64_t deadline);

#endif
