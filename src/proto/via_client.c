/* php-via browser steps over hm_http_conn. */
#include "proto/via_client.h"

#include "proto/url.h"
#include "proto/via_html.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int64_t now_s(void)
{
    return (int64_t)time(NULL);
}

static void store_cookies(hm_cookie_jar *jar, const hm_http_conn *c, const char *path)
{
    for (size_t i = 0; i < c->resp.n_set_cookie; i++)
        hm_cookie_jar_set(jar, c->resp.set_cookie[i].ptr, c->resp.set_cookie[i].len,
                          c->target->host, path, c->target->tls, now_s());
}

/* A page's context and action URL, read on the loop's stack: the JSON and
 * HTML scanners go deeper than a VU's stack needs to be (one page). */
typedef struct scrape {
    const char *body;
    size_t len;
    const char *action;
    hm_via_page *out;
    int rc_ctx, rc_action;
    const char *bad;
} scrape;

static void scrape_page(void *arg)
{
    scrape *sc = arg;
    sc->rc_ctx = hm_via_extract_ctx(sc->body, sc->len, &sc->out->ctx, &sc->bad);
    if (sc->rc_ctx >= 0 && sc->action)
        sc->rc_action = hm_via_find_action(sc->body, sc->len, sc->action, &sc->out->action_url);
}

int hm_via_load_page(hm_http_conn *c, hm_cookie_jar *jar, const char *route, const char *action,
                     int64_t deadline, hm_via_page *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof(*out));
    char *cookie = hm_via_cookie_dup(jar, c->target, route);
    size_t cap = strlen(route) + (cookie ? strlen(cookie) : 0) + 512;
    char *req = cookie ? hm_alloc(cap) : NULL;
    if (!req) {
        hm_free(cookie);
        snprintf(why, whylen, "out of memory");
        return -ENOMEM;
    }
    hm_http_header h[3];
    size_t nh = 0;
    h[nh++] = (hm_http_header){"Accept", "text/html"};
    if (c->target->accept_encoding)
        h[nh++] = (hm_http_header){"Accept-Encoding", c->target->accept_encoding};
    if (cookie[0]) h[nh++] = (hm_http_header){"Cookie", cookie};
    ssize_t len =
        hm_http_write_request(req, cap, "GET", route, c->target->host_header, h, nh, NULL, 0);
    hm_free(cookie);
    if (len < 0) {
        hm_free(req);
        snprintf(why, whylen, "route not usable in a request line: %.200s", route);
        return (int)len;
    }
    hm_http_xopts xo = {.idempotent = true, .deadline = deadline};
    int rc = hm_http_conn_exchange(c, req, (size_t)len, &xo);
    hm_free(req);
    if (rc < 0) {
        snprintf(why, whylen, "page load GET %s failed: %s (%s)", route,
                 hm_http_conn_fail_reason(c, rc), hm_fail_kind_name(c->fail));
        return rc;
    }
    out->status = c->resp.status;
    store_cookies(jar, c, route);
    if (c->resp.status != 200) {
        snprintf(why, whylen, "page load GET %s answered HTTP %d", route, c->resp.status);
        return -HM_ESTATUS;
    }
    scrape sc = {.body = c->resp.body, .len = c->resp.body_len, .action = action, .out = out};
    hm_call_on_loop_stack(scrape_page, &sc);
    rc = sc.rc_ctx;
    if (rc < 0) {
        snprintf(why, whylen, "page %s has no usable <meta data-signals> tag with via_ctx (%s)",
                 route, sc.bad ? sc.bad : hm_strerror(rc));
        return rc;
    }
    if (action) {
        rc = sc.rc_action;
        if (rc < 0) {
            snprintf(why, whylen, "page %s has no action named '%s' (@post('/_action/%s'))", route,
                     action, action);
            hm_via_page_free(out);
            return rc;
        }
    }
    return 0;
}

void hm_via_page_free(hm_via_page *p)
{
    hm_free(p->ctx);
    hm_free(p->action_url);
    p->ctx = p->action_url = NULL;
}

char *hm_via_cookie_dup(const hm_cookie_jar *jar, const hm_http_target *t, const char *path)
{
    /* Sized to the jar: a header that outgrew a fixed buffer went out empty. */
    return hm_cookie_jar_header_dup(jar, t->host, path, t->tls, now_s());
}

ssize_t hm_via_get_request(const hm_http_target *t, const char *path, const char *cookie,
                           char **out)
{
    size_t cap = strlen(path) + strlen(cookie) + 512;
    char *buf = hm_alloc(cap);
    *out = NULL;
    if (!buf) return -ENOMEM;
    hm_http_header h[2];
    size_t nh = 0;
    if (t->accept_encoding) h[nh++] = (hm_http_header){"Accept-Encoding", t->accept_encoding};
    if (cookie[0]) h[nh++] = (hm_http_header){"Cookie", cookie};
    ssize_t n = hm_http_write_request(buf, cap, "GET", path, t->host_header, h, nh, NULL, 0);
    if (n < 0)
        hm_free(buf);
    else
        *out = buf;
    return n;
}

char *hm_via_action_request(const hm_http_target *t, const char *action_url, const char *cookie,
                            const char *body, size_t body_len, const char *origin, size_t *len)
{
    size_t cap = strlen(action_url) + (cookie ? strlen(cookie) : 0) + body_len + 768;
    char *buf = hm_alloc(cap);
    if (!buf) return NULL;
    ssize_t n = hm_via_write_action(buf, cap, t, action_url, cookie, body, body_len, origin);
    if (n < 0) {
        hm_free(buf);
        return NULL;
    }
    *len = (size_t)n;
    return buf;
}

char *hm_via_sse_request(const hm_http_target *t, const char *ctx, const char *cookie, size_t *len)
{
    size_t cap = 3 * strlen(ctx) + (cookie ? strlen(cookie) : 0) + 768;
    char *buf = hm_alloc(cap);
    if (!buf) return NULL;
    ssize_t n = hm_via_write_sse(buf, cap, t, ctx, cookie);
    if (n < 0) {
        hm_free(buf);
        return NULL;
    }
    *len = (size_t)n;
    return buf;
}

ssize_t hm_via_write_action(char *buf, size_t cap, const hm_http_target *t, const char *action_url,
                            const char *cookie, const char *body, size_t body_len,
                            const char *origin)
{
    hm_http_header h[6];
    size_t n = 0;
    h[n++] = (hm_http_header){"Accept", "text/event-stream, text/html, application/json"};
    if (t->accept_encoding) h[n++] = (hm_http_header){"Accept-Encoding", t->accept_encoding};
    h[n++] = (hm_http_header){"Content-Type", "application/json"};
    h[n++] = (hm_http_header){"Datastar-Request", "true"};
    if (cookie && *cookie) h[n++] = (hm_http_header){"Cookie", cookie};
    if (origin) h[n++] = (hm_http_header){"Origin", origin};
    return hm_http_write_request(buf, cap, "POST", action_url, t->host_header, h, n, body,
                                 body_len);
}

ssize_t hm_via_write_sse(char *buf, size_t cap, const hm_http_target *t, const char *ctx,
                         const char *cookie)
{
    json_t *q = json_object();
    json_object_set_new(q, "via_ctx", json_string(ctx));
    char *js = json_dumps(q, JSON_COMPACT);
    json_decref(q);
    if (!js) return -ENOMEM;
    /* On the heap: this runs on an EventSource's stack, one page without
     * these 4 KiB. */
    enum { ENC = 2048, TARGET = 2200 };
    char *enc = hm_alloc(ENC), *target = hm_alloc(TARGET);
    ssize_t rc = enc && target ? hm_url_encode_component(js, strlen(js), enc, ENC) : -ENOMEM;
    free(js);
    if (rc >= 0) {
        snprintf(target, TARGET, "/_sse?datastar=%s", enc);
        hm_http_header h[4];
        size_t n = 0;
        h[n++] = (hm_http_header){"Accept", "text/event-stream"};
        if (t->accept_encoding) h[n++] = (hm_http_header){"Accept-Encoding", t->accept_encoding};
        h[n++] = (hm_http_header){"Datastar-Request", "true"};
        if (cookie && *cookie) h[n++] = (hm_http_header){"Cookie", cookie};
        rc = hm_http_write_request(buf, cap, "GET", target, t->host_header, h, n, NULL, 0);
    }
    hm_free(enc);
    hm_free(target);
    return rc;
}

int hm_via_close_session(hm_http_conn *c, const char *ctx, const char *cookie, int64_t deadline)
{
    /* Sized to the cookie: a fixed buffer dropped the beacon of a session
     * with many cookies, silently. */
    size_t cap = (cookie ? strlen(cookie) : 0) + strlen(ctx) + 512;
    char *req = hm_alloc(cap);
    if (!req) return -ENOMEM;
    hm_http_header h[3];
    size_t n = 0;
    h[n++] = (hm_http_header){"Content-Type", "text/plain;charset=UTF-8"};
    if (c->target->accept_encoding)
        h[n++] = (hm_http_header){"Accept-Encoding", c->target->accept_encoding};
    if (cookie && *cookie) h[n++] = (hm_http_header){"Cookie", cookie};
    ssize_t len = hm_http_write_request(req, cap, "POST", "/_session/close", c->target->host_header,
                                        h, n, ctx, strlen(ctx));
    int rc = (int)len;
    if (len >= 0) {
        hm_http_xopts xo = {.deadline = deadline};
        rc = hm_http_conn_exchange(c, req, (size_t)len, &xo);
    }
    hm_free(req);
    if (rc < 0) return rc;
    return c->resp.status == 200 ? 0 : -HM_ESTATUS;
}

bool hm_via_invalid_context(const hm_http_conn *c)
{
    static const char words[] = "Invalid context";
    return c->resp.status == 400 && c->resp.body &&
           memmem(c->resp.body, c->resp.body_len, words, sizeof(words) - 1) != NULL;
}

bool hm_via_sse_empty(const hm_http_resp_parser *p)
{
    return p->status == 200 && p->has_content_length && p->content_length == 0;
}
