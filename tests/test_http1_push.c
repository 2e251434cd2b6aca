/* hm_http_resp_parser filled by pushed fields (what HTTP/2 gives it), no
 * I/O: the same results as the byte feed (status, the fields callers read
 * by name, every Set-Cookie, the body), the header limit counted as
 * HTTP/1.1 counts it, a 1xx head dropped, content-length checked, the
 * callbacks (headers, streaming body) and their errors, HEAD and 204
 * without body, and pushes out of order refused. */
#include "hm_test.h"
#include "proto/http1.h"

#include "base/hm_base.h"

#define PF(p, n, v) hm_http_resp_push_field(p, n, strlen(n), v, strlen(v))

static void results(void)
{
    hm_http_resp_parser p;
    hm_http_resp_init(&p, NULL);
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(PF(&p, "content-type", "text/html"), 0);
    ASSERT_EQ(PF(&p, "set-cookie", "a=1"), 0);
    ASSERT_EQ(PF(&p, "x-via-worker", "3"), 0);
    ASSERT_EQ(PF(&p, "set-cookie", "b=2"), 0);
    ASSERT_EQ(PF(&p, "content-length", "5"), 0);
    ASSERT_EQ(PF(&p, "x-other", "ignored"), 0);
    ASSERT_EQ(hm_http_resp_push_head(&p, 200, 2), 0);
    ASSERT_EQ(p.status, 200);
    ASSERT_EQ(p.http_major, 2);
    ASSERT(p.keep_alive);
    ASSERT(p.has_content_length);
    ASSERT_EQ(p.content_length, 5);
    ASSERT_MEMEQ(p.hdr.content_type.ptr, p.hdr.content_type.len, "text/html");
    ASSERT_MEMEQ(p.hdr.x_via_worker.ptr, p.hdr.x_via_worker.len, "3");
    ASSERT_EQ(p.n_set_cookie, 2);
    ASSERT_MEMEQ(p.set_cookie[0].ptr, p.set_cookie[0].len, "a=1");
    ASSERT_MEMEQ(p.set_cookie[1].ptr, p.set_cookie[1].len, "b=2");
    ASSERT_EQ(hm_http_resp_push_body(&p, "hel", 3), 0);
    ASSERT_EQ(hm_http_resp_push_body(&p, "lo", 2), 0);
    ASSERT_EQ(hm_http_resp_push_end(&p), HM_HTTP_DONE);
    ASSERT_MEMEQ(p.body, p.body_len, "hello");
    /* The next response on the same parser starts clean. */
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(p.n_set_cookie, 0);
    ASSERT_EQ(hm_http_resp_push_head(&p, 404, 2), 0);
    ASSERT_EQ(hm_http_resp_push_end(&p), HM_HTTP_DONE);
    ASSERT_EQ(p.status, 404);
    ASSERT_EQ(p.body_len, 0);
    ASSERT_STREQ(p.body, "");
    ASSERT(!p.hdr.content_type.ptr);
    hm_http_resp_free(&p);
    printf("results: status, fields by name, cookies, body; a second response clean: ok\n");
}

static void limits(void)
{
    hm_http_limits lim = {.max_header_bytes = 100, .max_body_bytes = 4};
    hm_http_resp_parser p;
    hm_http_resp_init(&p, &lim);
    hm_http_resp_begin(&p, false);
    char v[80];
    memset(v, 'v', sizeof(v) - 1);
    v[sizeof(v) - 1] = '\0';
    ASSERT_EQ(PF(&p, "x-a", v), 0); /* 3 + 79 + 4 = 86 */
    ASSERT_EQ(PF(&p, "x-b", "12345678901"), -HM_ETOOBIG);
    ASSERT_EQ(hm_http_resp_push_head(&p, 200, 2), -HM_ETOOBIG); /* sticky */
    ASSERT(hm_http_resp_error_reason(&p));
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_push_head(&p, 200, 2), 0);
    ASSERT_EQ(hm_http_resp_push_body(&p, "abcd", 4), 0);
    ASSERT_EQ(hm_http_resp_push_body(&p, "e", 1), -HM_ETOOBIG);
    /* A declared length over the body limit fails at the head. */
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(PF(&p, "content-length", "5"), 0);
    ASSERT_EQ(hm_http_resp_push_head(&p, 200, 2), -HM_ETOOBIG);
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(PF(&p, "content-length", "x5"), -HM_EPROTO_HTTP);
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_push_head(&p, 99, 2), -HM_EPROTO_HTTP);
    hm_http_resp_free(&p);
    printf("limits: header bytes, body bytes, declared length, bad length, bad status: ok\n");
}

static void interim_and_order(void)
{
    hm_http_resp_parser p;
    hm_http_resp_init(&p, NULL);
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(PF(&p, "link", "</a.css>; rel=preload"), 0);
    ASSERT_EQ(PF(&p, "set-cookie", "early=1"), 0);
    ASSERT_EQ(hm_http_resp_push_head(&p, 103, 2), 0); /* dropped with its fields */
    ASSERT_EQ(p.status, 0);
    ASSERT_EQ(PF(&p, "set-cookie", "real=1"), 0);
    ASSERT_EQ(hm_http_resp_push_head(&p, 200, 2), 0);
    ASSERT_EQ(p.n_set_cookie, 1);
    ASSERT_MEMEQ(p.set_cookie[0].ptr, p.set_cookie[0].len, "real=1");
    ASSERT_EQ(PF(&p, "x-late", "1"), -HM_EPROTO_HTTP); /* a field after the head */
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_push_body(&p, "x", 1), -HM_EPROTO_HTTP); /* body before a head */
    hm_http_resp_begin(&p, true);                                   /* HEAD: no body */
    ASSERT_EQ(PF(&p, "content-length", "100"), 0);
    ASSERT_EQ(hm_http_resp_push_head(&p, 200, 2), 0);
    ASSERT_EQ(hm_http_resp_push_body(&p, "ignored", 7), 0);
    ASSERT_EQ(hm_http_resp_push_end(&p), HM_HTTP_DONE);
    ASSERT_EQ(p.body_len, 0);
    ASSERT_EQ(p.content_length, 100);
    hm_http_resp_free(&p);
    printf("1xx dropped with its fields; fields after the head, body before it: refused; HEAD: "
           "ok\n");
}

typedef struct seen {
    int status;
    char body[64];
    size_t len;
    int fail_headers;
} seen;

static int on_head(void *user, hm_http_resp_parser *p)
{
    seen *s = user;
    s->status = p->status;
    return s->fail_headers;
}

static int on_body(void *user, const char *at, size_t len)
{
    seen *s = user;
    if (len > sizeof(s->body) - s->len) return -E2BIG;
    memcpy(s->body + s->len, at, len);
    s->len += len;
    return 0;
}

static void callbacks(void)
{
    hm_http_limits lim = {.max_body_bytes = 4}; /* streaming is unlimited */
    hm_http_resp_parser p;
    hm_http_resp_init(&p, &lim);
    seen s = {0};
    hm_http_resp_set_callbacks(&p, on_head, on_body, &s);
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_push_head(&p, 200, 2), 0);
    ASSERT_EQ(s.status, 200);
    ASSERT_EQ(hm_http_resp_push_body(&p, "event: a\n\n", 10), 0);
    ASSERT_EQ(hm_http_resp_push_body(&p, "event: b\n\n", 10), 0);
    ASSERT_MEMEQ(s.body, s.len, "event: a\n\nevent: b\n\n");
    ASSERT_EQ(p.body_len, 0); /* streamed, not buffered */
    s.fail_headers = -HM_ESTATUS;
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_push_head(&p, 403, 2), -HM_ESTATUS);
    hm_http_resp_free(&p);
    printf("callbacks: headers, streamed body, a headers callback's error: ok\n");
}

int main(void)
{
    results();
    limits();
    interim_and_order();
    callbacks();
    return 0;
}
