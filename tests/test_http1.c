/* test_http1.c — HTTP/1.1 codec: response and request parsing over llhttp
 * (framing, splits, pipelining, limits, errors) and the serializers. */
#include "proto/http1.h"

#include "base/hm_base.h"
#include "hm_test.h"

#include <stdbool.h>
#include <string.h>

#define S(lit) lit, sizeof(lit) - 1

/* ---- helpers ---- */

/* Everything a caller can read from a finished response, as one string, so
 * results of different feed patterns compare with a single strcmp. */
static void describe(const hm_http_resp_parser *p, char *out, size_t cap)
{
    int n = snprintf(out, cap,
                     "status=%d 1.%d ka=%d up=%d chunked=%d cl=%d/%llu ct=%s loc=%s via=%s conn=%s",
                     p->status, p->http_minor, p->keep_alive, p->upgrade, p->chunked,
                     p->has_content_length, (unsigned long long)p->content_length,
                     p->hdr.content_type.ptr ? p->hdr.content_type.ptr : "-",
                     p->hdr.location.ptr ? p->hdr.location.ptr : "-",
                     p->hdr.x_via_worker.ptr ? p->hdr.x_via_worker.ptr : "-",
                     p->hdr.connection.ptr ? p->hdr.connection.ptr : "-");
    for (size_t i = 0; i < p->n_set_cookie && n > 0 && (size_t)n < cap; i++)
        n += snprintf(out + n, cap - (size_t)n, " sc=%s", p->set_cookie[i].ptr);
    if (n > 0 && (size_t)n < cap)
        snprintf(out + n, cap - (size_t)n, " body[%zu]=%.*s", p->body_len, (int)p->body_len,
                 p->body);
}

/* Feeds data in two parts split at `split`; returns the final result and the
 * bytes consumed in all. */
static int feed_split(hm_http_resp_parser *p, const char *d, size_t n, size_t split, size_t *used)
{
    size_t c = 0;
    int rc = hm_http_resp_feed(p, d, split, &c);
    *used = c;
    if (rc != HM_HTTP_NEED_MORE) return rc;
    ASSERT_EQ(c, split);
    rc = hm_http_resp_feed(p, d + split, n - split, &c);
    *used += c;
    return rc;
}

/* Feeds one byte at a time until something other than NEED_MORE. */
static int feed_bytewise(hm_http_resp_parser *p, const char *d, size_t n, size_t *used)
{
    *used = 0;
    for (size_t i = 0; i < n; i++) {
        size_t c = 99;
        int rc = hm_http_resp_feed(p, d + i, 1, &c);
        *used += c;
        if (rc != HM_HTTP_NEED_MORE) return rc;
        ASSERT_EQ(c, 1);
    }
    return HM_HTTP_NEED_MORE;
}

/* Parses one response in one feed and expects it to be exactly len bytes. */
static void parse_one(hm_http_resp_parser *p, const char *d, size_t n, bool head)
{
    size_t c = 0;
    hm_http_resp_begin(p, head);
    ASSERT_EQ(hm_http_resp_feed(p, d, n, &c), HM_HTTP_DONE);
    ASSERT_EQ(c, n);
}

/* Asserts every split point and the byte-by-byte feed give the same result
 * as a single feed. */
static void check_all_splits(const char *d, size_t n, bool head)
{
    hm_http_resp_parser p;
    char want[2048], got[2048];
    hm_http_resp_init(&p, NULL);
    parse_one(&p, d, n, head);
    describe(&p, want, sizeof(want));
    for (size_t split = 0; split <= n; split++) {
        size_t used;
        hm_http_resp_begin(&p, head);
        ASSERT_EQ(feed_split(&p, d, n, split, &used), HM_HTTP_DONE);
        ASSERT_EQ(used, n);
        describe(&p, got, sizeof(got));
        if (strcmp(want, got) != 0) fprintf(stderr, "split at %zu\n", split);
        ASSERT_STREQ(got, want);
    }
    size_t used;
    hm_http_resp_begin(&p, head);
    ASSERT_EQ(feed_bytewise(&p, d, n, &used), HM_HTTP_DONE);
    ASSERT_EQ(used, n);
    describe(&p, got, sizeof(got));
    ASSERT_STREQ(got, want);
    hm_http_resp_free(&p);
}

/* ---- response parser ---- */

static void test_content_length(void)
{
    static const char msg[] = "HTTP/1.1 200 OK\r\n"
                              "Content-Type: text/html; charset=utf-8  \r\n"
                              "content-length: 5\r\n"
                              "X-VIA-WORKER: w3\r\n"
                              "X-Other: ignored\r\n"
                              "\r\n"
                              "hello";
    hm_http_resp_parser p;
    hm_http_resp_init(&p, NULL);
    parse_one(&p, S(msg), false);
    ASSERT_EQ(p.status, 200);
    ASSERT_EQ(p.http_major, 1);
    ASSERT_EQ(p.http_minor, 1);
    ASSERT(p.keep_alive);
    ASSERT(!p.chunked);
    ASSERT(p.has_content_length);
    ASSERT_EQ(p.content_length, 5);
    ASSERT_MEMEQ(p.body, p.body_len, "hello");
    ASSERT_EQ(p.body[p.body_len], '\0');
    /* Trailing whitespace is not part of a field value. */
    ASSERT_STREQ(p.hdr.content_type.ptr, "text/html; charset=utf-8");
    ASSERT_EQ(p.hdr.content_type.len, strlen("text/html; charset=utf-8"));
    ASSERT_STREQ(p.hdr.x_via_worker.ptr, "w3");
    ASSERT(p.hdr.location.ptr == NULL);
    ASSERT(p.hdr.connection.ptr == NULL);
    ASSERT_EQ(p.n_set_cookie, 0);
    ASSERT(hm_http_resp_error_reason(&p) == NULL);
    hm_http_resp_free(&p);
}

static const char chunked_msg[] = "HTTP/1.1 200 OK\r\n"
                                  "Transfer-Encoding: chunked\r\n"
                                  "Set-Cookie: a=1; Path=/\r\n"
                                  "Location: /next\r\n"
                                  "Set-Cookie: b=2; HttpOnly\r\n"
                                  "\r\n"
                                  "5;ext=1\r\n"
                                  "hello\r\n"
                                  "6;name=\"quoted value\"\r\n"
                                  " world\r\n"
                                  "0\r\n"
                                  "X-Trailer: t\r\n"
                                  "Set-Cookie: trailer=1\r\n"
                                  "\r\n";

static void test_chunked_extensions_trailers(void)
{
    hm_http_resp_parser p;
    hm_http_resp_init(&p, NULL);
    parse_one(&p, S(chunked_msg), false);
    ASSERT_EQ(p.status, 200);
    ASSERT(p.chunked);
    ASSERT(!p.has_content_length);
    ASSERT(p.keep_alive);
    ASSERT_MEMEQ(p.body, p.body_len, "hello world");
    ASSERT_STREQ(p.hdr.location.ptr, "/next");
    /* Trailers are framing, not headers: the trailer cookie is not kept. */
    ASSERT_EQ(p.n_set_cookie, 2);
    ASSERT_STREQ(p.set_cookie[0].ptr, "a=1; Path=/");
    ASSERT_STREQ(p.set_cookie[1].ptr, "b=2; HttpOnly");
    hm_http_resp_free(&p);
}

static void test_close_delimited(void)
{
    hm_http_resp_parser p;
    size_t c;
    hm_http_resp_init(&p, NULL);
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(
        hm_http_resp_feed(&p, S("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome "), &c),
        HM_HTTP_NEED_MORE);
    ASSERT_EQ(c, strlen("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome "));
    ASSERT_EQ(hm_http_resp_feed(&p, S("body"), &c), HM_HTTP_NEED_MORE);
    ASSERT_EQ(c, 4);
    ASSERT_EQ(hm_http_resp_finish(&p), HM_HTTP_DONE);
    ASSERT_EQ(p.status, 200);
    ASSERT(!p.keep_alive);
    ASSERT_MEMEQ(p.body, p.body_len, "some body");
    ASSERT_STREQ(p.hdr.content_type.ptr, "text/plain");

    /* HTTP/1.0 without a length, and an empty close-delimited body. */
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, S("HTTP/1.0 200 OK\r\n\r\n"), &c), HM_HTTP_NEED_MORE);
    ASSERT_EQ(hm_http_resp_finish(&p), HM_HTTP_DONE);
    ASSERT_EQ(p.http_minor, 0);
    ASSERT_EQ(p.body_len, 0);
    ASSERT_STREQ(p.body, "");
    ASSERT(!p.keep_alive);

    /* After a finish the parser serves a new connection. */
    parse_one(&p, S("HTTP/1.1 204 No Content\r\n\r\n"), false);
    ASSERT_EQ(p.status, 204);
    ASSERT(p.keep_alive);
    hm_http_resp_free(&p);
}

static void test_finish_truncated(void)
{
    hm_http_resp_parser p;
    size_t c;
    hm_http_resp_init(&p, NULL);

    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, S("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"), &c),
              HM_HTTP_NEED_MORE);
    ASSERT_EQ(hm_http_resp_finish(&p), -HM_ECLOSED);
    ASSERT(hm_http_resp_error_reason(&p) != NULL);
    /* Sticky until begin. */
    ASSERT_EQ(hm_http_resp_feed(&p, S("defghij"), &c), -HM_ECLOSED);

    hm_http_resp_begin(&p, false); /* zero bytes, then close */
    ASSERT_EQ(hm_http_resp_finish(&p), -HM_ECLOSED);

    hm_http_resp_begin(&p, false); /* inside the header section */
    ASSERT_EQ(hm_http_resp_feed(&p, S("HTTP/1.1 200 OK\r\nContent-Le"), &c), HM_HTTP_NEED_MORE);
    ASSERT_EQ(hm_http_resp_finish(&p), -HM_ECLOSED);

    hm_http_resp_begin(&p, false); /* chunked without the last chunk */
    ASSERT_EQ(hm_http_resp_feed(
                  &p, S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"), &c),
              HM_HTTP_NEED_MORE);
    ASSERT_EQ(hm_http_resp_finish(&p), -HM_ECLOSED);

    hm_http_resp_begin(&p, false); /* only a 100 Continue arrived */
    ASSERT_EQ(hm_http_resp_feed(&p, S("HTTP/1.1 100 Continue\r\n\r\n"), &c), HM_HTTP_NEED_MORE);
    ASSERT_EQ(hm_http_resp_finish(&p), -HM_ECLOSED);

    /* The peer closing after a complete response: the next one never came. */
    parse_one(&p, S("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), false);
    ASSERT_EQ(hm_http_resp_finish(&p), -HM_ECLOSED);
    hm_http_resp_free(&p);
}

static void test_head_then_next(void)
{
    static const char first[] =
        "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\nContent-Type: text/html\r\n\r\n";
    static const char second[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\nnope";
    char buf[256];
    memcpy(buf, first, sizeof(first) - 1);
    memcpy(buf + sizeof(first) - 1, second, sizeof(second) - 1);
    size_t n = sizeof(first) - 1 + sizeof(second) - 1, c;

    hm_http_resp_parser p;
    hm_http_resp_init(&p, NULL);
    hm_http_resp_begin(&p, true);
    ASSERT_EQ(hm_http_resp_feed(&p, buf, n, &c), HM_HTTP_DONE);
    ASSERT_EQ(c, sizeof(first) - 1);
    ASSERT_EQ(p.status, 200);
    ASSERT(p.has_content_length);
    ASSERT_EQ(p.content_length, 1234);
    ASSERT_EQ(p.body_len, 0);
    ASSERT(p.keep_alive);
    ASSERT_STREQ(p.hdr.content_type.ptr, "text/html");

    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, buf + c, n - c, &c), HM_HTTP_DONE);
    ASSERT_EQ(c, sizeof(second) - 1);
    ASSERT_EQ(p.status, 404);
    ASSERT_MEMEQ(p.body, p.body_len, "nope");
    ASSERT(p.hdr.content_type.ptr == NULL);

    /* 304 carries no body even with a Content-Length. */
    static const char nm[] = "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n"
                             "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, S(nm), &c), HM_HTTP_DONE);
    ASSERT_EQ(p.status, 304);
    ASSERT_EQ(p.body_len, 0);
    size_t off = c;
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, nm + off, sizeof(nm) - 1 - off, &c), HM_HTTP_DONE);
    ASSERT_EQ(off + c, sizeof(nm) - 1);
    ASSERT_MEMEQ(p.body, p.body_len, "ok");

    check_all_splits(S(first), true);
    hm_http_resp_free(&p);
}

static int headers_calls;
static int count_headers(void *user, hm_http_resp_parser *p)
{
    (void)user;
    headers_calls++;
    ASSERT_NE(p->status / 100, 1);
    return 0;
}

static const char continue_msg[] = "HTTP/1.1 100 Continue\r\n\r\n"
                                   "HTTP/1.1 103 Early Hints\r\n"
                                   "Link: </style.css>; rel=preload\r\n"
                                   "Set-Cookie: early=1\r\n"
                                   "\r\n"
                                   "HTTP/1.1 201 Created\r\n"
                                   "Location: /items/7\r\n"
                                   "Content-Length: 2\r\n"
                                   "\r\n"
                                   "ok";

static void test_informational(void)
{
    hm_http_resp_parser p;
    size_t c;
    hm_http_resp_init(&p, NULL);
    hm_http_resp_set_callbacks(&p, count_headers, NULL, NULL);
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, S(continue_msg), &c), HM_HTTP_DONE);
    ASSERT_EQ(c, sizeof(continue_msg) - 1);
    ASSERT_EQ(p.status, 201);
    ASSERT_STREQ(p.hdr.location.ptr, "/items/7");
    ASSERT_EQ(p.n_set_cookie, 0); /* the 103's headers are gone */
    ASSERT_MEMEQ(p.body, p.body_len, "ok");
    ASSERT_EQ(headers_calls, 1);

    /* Split after the 100: the first feed is not DONE. */
    hm_http_resp_begin(&p, false);
    size_t cut = strlen("HTTP/1.1 100 Continue\r\n\r\n");
    ASSERT_EQ(hm_http_resp_feed(&p, continue_msg, cut, &c), HM_HTTP_NEED_MORE);
    ASSERT_EQ(c, cut);
    ASSERT_EQ(hm_http_resp_feed(&p, continue_msg + cut, sizeof(continue_msg) - 1 - cut, &c),
              HM_HTTP_DONE);
    ASSERT_EQ(p.status, 201);
    ASSERT_EQ(headers_calls, 2);
    hm_http_resp_free(&p);

    check_all_splits(S(continue_msg), false);

    /* Informational responses are bounded: HM_HTTP_MAX_INTERIM pass, one
     * more is a protocol error that says so, however the bytes arrive. */
    static const char one[] = "HTTP/1.1 100 Continue\r\n\r\n";
    hm_http_resp_init(&p, NULL);
    for (int extra = 0; extra <= 1; extra++) {
        hm_http_resp_begin(&p, false);
        int rc = HM_HTTP_NEED_MORE;
        for (int i = 0; i < HM_HTTP_MAX_INTERIM + extra && rc == HM_HTTP_NEED_MORE; i++)
            rc = hm_http_resp_feed(&p, S(one), &c);
        if (!extra) {
            ASSERT_EQ(rc, HM_HTTP_NEED_MORE);
            ASSERT_EQ(hm_http_resp_feed(&p, S("HTTP/1.1 204 No Content\r\n\r\n"), &c),
                      HM_HTTP_DONE);
            ASSERT_EQ(p.status, 204);
        } else {
            ASSERT_EQ(rc, -HM_EPROTO_HTTP);
            ASSERT(strstr(hm_http_resp_error_reason(&p), "informational (1xx)"));
        }
    }
    /* The count is per request, not per connection. */
    hm_http_resp_begin(&p, false);
    for (int i = 0; i < HM_HTTP_MAX_INTERIM; i++)
        ASSERT_EQ(hm_http_resp_feed(&p, S(one), &c), HM_HTTP_NEED_MORE);
    ASSERT_EQ(hm_http_resp_feed(&p, S("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), &c),
              HM_HTTP_DONE);
    hm_http_resp_begin(&p, false);
    for (int i = 0; i < HM_HTTP_MAX_INTERIM; i++)
        ASSERT_EQ(hm_http_resp_feed(&p, S(one), &c), HM_HTTP_NEED_MORE);
    hm_http_resp_free(&p);
}

static void test_pipelined(void)
{
    static const char two[] =
        "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nX-Via-Worker: 1\r\n\r\none"
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Via-Worker: 2\r\n\r\n"
        "3\r\ntwo\r\n0\r\n\r\n"
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nthree";
    size_t len1 = strlen("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nX-Via-Worker: 1\r\n\r\none");
    size_t len2 = strlen("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Via-Worker: 2\r\n\r\n"
                         "3\r\ntwo\r\n0\r\n\r\n");
    hm_http_resp_parser p;
    size_t c;
    hm_http_resp_init(&p, NULL);
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, S(two), &c), HM_HTTP_DONE);
    ASSERT_EQ(c, len1);
    ASSERT_MEMEQ(p.body, p.body_len, "one");
    ASSERT_STREQ(p.hdr.x_via_worker.ptr, "1");

    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, two + len1, sizeof(two) - 1 - len1, &c), HM_HTTP_DONE);
    ASSERT_EQ(c, len2);
    ASSERT_MEMEQ(p.body, p.body_len, "two");
    ASSERT_STREQ(p.hdr.x_via_worker.ptr, "2");

    /* A feed after DONE without begin starts the next response itself. */
    size_t off = len1 + len2;
    ASSERT_EQ(hm_http_resp_feed(&p, two + off, sizeof(two) - 1 - off, &c), HM_HTTP_DONE);
    ASSERT_EQ(off + c, sizeof(two) - 1);
    ASSERT_MEMEQ(p.body, p.body_len, "three");
    ASSERT(p.hdr.x_via_worker.ptr == NULL);
    hm_http_resp_free(&p);
}

static void test_upgrade(void)
{
    static const char resp[] = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                               "Connection: Upgrade\r\n\r\n\x81\x05hello";
    size_t head = sizeof(resp) - 1 - 7, c;
    hm_http_resp_parser p;
    hm_http_resp_init(&p, NULL);
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, S(resp), &c), HM_HTTP_DONE);
    ASSERT_EQ(c, head); /* the frame stays with the caller */
    ASSERT_EQ(p.status, 101);
    ASSERT(p.upgrade);
    ASSERT_STREQ(p.hdr.connection.ptr, "Upgrade");
    ASSERT_EQ(hm_http_resp_feed(&p, resp + c, 7, &c), -HM_EPROTO_HTTP);
    hm_http_resp_free(&p);

    static const char req[] = "GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n"
                              "Connection: Upgrade\r\n\r\n\x81\x05hello";
    hm_http_req_parser rq;
    hm_http_req_init(&rq, NULL);
    ASSERT_EQ(hm_http_req_feed(&rq, S(req), &c), HM_HTTP_DONE);
    ASSERT_EQ(c, sizeof(req) - 1 - 7);
    ASSERT(rq.upgrade);
    ASSERT_STREQ(rq.hdr.upgrade.ptr, "websocket");
    ASSERT_EQ(hm_http_req_feed(&rq, req + c, 7, &c), -HM_EPROTO_HTTP);
    hm_http_req_free(&rq);
}

static void test_every_split(void)
{
    check_all_splits(S(chunked_msg), false);
    check_all_splits(S("HTTP/1.1 200 OK\r\n"
                       "Content-Type: application/json\r\n"
                       "Set-Cookie: sid=abc\r\n"
                       "Set-Cookie: theme=dark\r\n"
                       "X-Via-Worker: worker-12\r\n"
                       "Connection: keep-alive\r\n"
                       "Content-Length: 17\r\n"
                       "\r\n"
                       "{\"ok\":true,\"n\":1}"),
                     false);
    check_all_splits(S("HTTP/1.0 302 Found\r\nLocation: http://x/y\r\nConnection: keep-alive\r\n"
                       "Content-Length: 0\r\n\r\n"),
                     false);
}

static void test_keep_alive_decisions(void)
{
    hm_http_resp_parser p;
    hm_http_resp_init(&p, NULL);

    parse_one(&p, S("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), false);
    ASSERT(p.keep_alive);

    parse_one(&p, S("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"), false);
    ASSERT(!p.keep_alive);
    ASSERT_STREQ(p.hdr.connection.ptr, "close");

    parse_one(&p, S("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"), false);
    ASSERT(!p.keep_alive);
    ASSERT_EQ(p.http_minor, 0);

    parse_one(&p, S("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nhi"),
              false);
    ASSERT(p.keep_alive);

    /* After Connection: close, begin starts over as for a new connection. */
    parse_one(&p, S("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx"), false);
    ASSERT(!p.keep_alive);
    parse_one(&p, S("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\ny"), false);
    ASSERT_MEMEQ(p.body, p.body_len, "y");
    hm_http_resp_free(&p);
}

static void test_set_cookie_many(void)
{
    hm_http_resp_parser p;
    hm_http_resp_init(&p, NULL);
    char msg[4096];
    int n = snprintf(msg, sizeof(msg), "HTTP/1.1 200 OK\r\n");
    for (int i = 0; i < 20; i++)
        n += snprintf(msg + n, sizeof(msg) - (size_t)n, "%s: c%d=v%d\r\n",
                      i % 2 ? "set-cookie" : "Set-Cookie", i, i);
    n += snprintf(msg + n, sizeof(msg) - (size_t)n, "Content-Length: 0\r\n\r\n");
    for (int round = 0; round < 2; round++) {
        parse_one(&p, msg, (size_t)n, false);
        ASSERT_EQ(p.n_set_cookie, 20);
        for (int i = 0; i < 20; i++) {
            char want[32];
            snprintf(want, sizeof(want), "c%d=v%d", i, i);
            ASSERT_STREQ(p.set_cookie[i].ptr, want);
            ASSERT_EQ(p.set_cookie[i].len, strlen(want));
        }
    }
    hm_http_resp_free(&p);
}

static void test_header_split_across_feeds(void)
{
    hm_http_resp_parser p;
    size_t c;
    hm_http_resp_init(&p, NULL);
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, S("HTTP/1.1 200 OK\r\nContent-Ty"), &c), HM_HTTP_NEED_MORE);
    ASSERT_EQ(hm_http_resp_feed(&p, S("pe: text/ht"), &c), HM_HTTP_NEED_MORE);
    ASSERT_EQ(hm_http_resp_feed(&p, S("ml\r\nSet-Cook"), &c), HM_HTTP_NEED_MORE);
    ASSERT_EQ(hm_http_resp_feed(&p, S("ie: a"), &c), HM_HTTP_NEED_MORE);
    ASSERT_EQ(hm_http_resp_feed(&p, S("=1\r"), &c), HM_HTTP_NEED_MORE);
    ASSERT_EQ(hm_http_resp_feed(&p, S("\nContent-Length: 0\r\n\r\n"), &c), HM_HTTP_DONE);
    ASSERT_STREQ(p.hdr.content_type.ptr, "text/html");
    ASSERT_EQ(p.n_set_cookie, 1);
    ASSERT_STREQ(p.set_cookie[0].ptr, "a=1");
    hm_http_resp_free(&p);
}

static void test_header_limit(void)
{
    hm_http_limits lim = {.max_header_bytes = 256};
    hm_http_resp_parser p;
    size_t c;
    char big[600];
    memset(big, 'v', sizeof(big));
    hm_http_resp_init(&p, &lim);

    /* One long value, delivered in pieces so the limit cannot rely on seeing
     * it whole. */
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, S("HTTP/1.1 200 OK\r\nContent-Type: "), &c), HM_HTTP_NEED_MORE);
    int rc = HM_HTTP_NEED_MORE;
    for (size_t i = 0; i < sizeof(big) && rc == HM_HTTP_NEED_MORE; i += 100)
        rc = hm_http_resp_feed(&p, big + i, 100, &c);
    ASSERT_EQ(rc, -HM_ETOOBIG);
    ASSERT(hm_http_resp_error_reason(&p) != NULL);
    ASSERT_EQ(hm_http_resp_feed(&p, S("\r\n\r\n"), &c), -HM_ETOOBIG);

    /* Many small uninteresting headers count too. */
    char msg[2048];
    int n = snprintf(msg, sizeof(msg), "HTTP/1.1 200 OK\r\n");
    for (int i = 0; i < 40; i++)
        n += snprintf(msg + n, sizeof(msg) - (size_t)n, "X-H%d: v\r\n", i);
    n += snprintf(msg + n, sizeof(msg) - (size_t)n, "\r\n");
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, msg, (size_t)n, &c), -HM_ETOOBIG);

    /* Just under the limit parses, and the parser recovers after begin. */
    parse_one(&p, S("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), false);
    ASSERT_MEMEQ(p.body, p.body_len, "ok");
    hm_http_resp_free(&p);
}

static void test_body_limit(void)
{
    hm_http_limits lim = {.max_body_bytes = 10};
    hm_http_resp_parser p;
    size_t c;
    hm_http_resp_init(&p, &lim);

    hm_http_resp_begin(&p, false); /* declared length over: refused before the body */
    ASSERT_EQ(hm_http_resp_feed(&p, S("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n"), &c),
              -HM_ETOOBIG);

    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p,
                                S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                  "6\r\nabcdef\r\n6\r\nghijkl\r\n0\r\n\r\n"),
                                &c),
              -HM_ETOOBIG);

    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, S("HTTP/1.1 200 OK\r\n\r\n0123456789"), &c), HM_HTTP_NEED_MORE);
    ASSERT_EQ(hm_http_resp_feed(&p, S("x"), &c), -HM_ETOOBIG);

    parse_one(&p, S("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789"), false);
    ASSERT_MEMEQ(p.body, p.body_len, "0123456789");
    hm_http_resp_free(&p);
}

static void test_garbage(void)
{
    hm_http_resp_parser p;
    size_t c;
    hm_http_resp_init(&p, NULL);
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, S("GARBAGE\r\n\r\n"), &c), -HM_EPROTO_HTTP);
    ASSERT(hm_http_resp_error_reason(&p) != NULL);

    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, S("HTTP/1.1 2x0 OK\r\n\r\n"), &c), -HM_EPROTO_HTTP);

    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(
                  &p, S("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"), &c),
              -HM_EPROTO_HTTP);

    hm_http_resp_begin(&p, false);
    ASSERT_EQ(
        hm_http_resp_feed(&p, S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), &c),
        -HM_EPROTO_HTTP);

    /* After Connection: close, more bytes on the same stream are an error. */
    static const char closed[] = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
                                 "HTTP/1.1 200 OK\r\n\r\n";
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, S(closed), &c), HM_HTTP_DONE);
    ASSERT(!p.keep_alive);
    size_t off = c;
    ASSERT_EQ(hm_http_resp_feed(&p, closed + off, sizeof(closed) - 1 - off, &c), -HM_EPROTO_HTTP);
    ASSERT(hm_http_resp_error_reason(&p) != NULL);
    /* begin means a new connection: the same bytes now parse. */
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, closed + off, sizeof(closed) - 1 - off, &c), HM_HTTP_NEED_MORE);
    ASSERT_EQ(hm_http_resp_finish(&p), HM_HTTP_DONE);
    hm_http_resp_free(&p);
}

typedef struct {
    char data[256];
    size_t len;
    int headers_seen;
    int status_at_headers;
    bool sse;
} stream_sink;

static int sink_body(void *user, const char *at, size_t len)
{
    stream_sink *s = user;
    ASSERT_LE(s->len + len, sizeof(s->data));
    memcpy(s->data + s->len, at, len);
    s->len += len;
    return 0;
}

/* Streams only event streams, as an SSE client would decide at headers time. */
static int sink_headers(void *user, hm_http_resp_parser *p)
{
    stream_sink *s = user;
    s->headers_seen++;
    s->status_at_headers = p->status;
    s->sse = p->hdr.content_type.ptr && strcmp(p->hdr.content_type.ptr, "text/event-stream") == 0;
    hm_http_resp_set_callbacks(p, sink_headers, s->sse ? sink_body : NULL, s);
    return 0;
}

static int failing_body(void *user, const char *at, size_t len)
{
    (void)user, (void)at, (void)len;
    return -EPIPE;
}

static void test_streaming(void)
{
    hm_http_resp_parser p;
    stream_sink sink = {0};
    hm_http_resp_init(&p, NULL);

    /* Same bytes as buffered mode, for every split. */
    parse_one(&p, S(chunked_msg), false);
    char buffered[64];
    size_t blen = p.body_len;
    memcpy(buffered, p.body, blen);
    for (size_t split = 0; split <= sizeof(chunked_msg) - 1; split++) {
        sink.len = 0;
        hm_http_resp_set_callbacks(&p, NULL, sink_body, &sink);
        hm_http_resp_begin(&p, false);
        size_t used;
        ASSERT_EQ(feed_split(&p, S(chunked_msg), split, &used), HM_HTTP_DONE);
        ASSERT_MEMEQ(sink.data, sink.len, "hello world");
        ASSERT_EQ(sink.len, blen);
        ASSERT(memcmp(sink.data, buffered, blen) == 0);
        ASSERT_EQ(p.body_len, 0);
    }

    /* Streaming is not bounded by max_body_bytes. */
    hm_http_limits lim = {.max_body_bytes = 4};
    hm_http_resp_free(&p);
    hm_http_resp_init(&p, &lim);
    sink = (stream_sink){0};
    hm_http_resp_set_callbacks(&p, sink_headers, NULL, &sink);
    hm_http_resp_begin(&p, false);
    size_t c;
    ASSERT_EQ(hm_http_resp_feed(&p,
                                S("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
                                  "data: one\n\n"),
                                &c),
              HM_HTTP_NEED_MORE);
    ASSERT_EQ(sink.headers_seen, 1);
    ASSERT_EQ(sink.status_at_headers, 200);
    ASSERT(sink.sse);
    ASSERT_EQ(hm_http_resp_feed(&p, S("data: two\n\n"), &c), HM_HTTP_NEED_MORE);
    ASSERT_MEMEQ(sink.data, sink.len, "data: one\n\ndata: two\n\n");
    ASSERT_EQ(hm_http_resp_finish(&p), HM_HTTP_DONE);

    /* The headers callback chose buffered mode for a non-SSE response. */
    sink.len = 0;
    parse_one(&p, S("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nabc"),
              false);
    ASSERT(!sink.sse);
    ASSERT_EQ(sink.len, 0);
    ASSERT_MEMEQ(p.body, p.body_len, "abc");

    /* A callback error stops the feed with that error. */
    hm_http_resp_set_callbacks(&p, NULL, failing_body, NULL);
    hm_http_resp_begin(&p, false);
    ASSERT_EQ(hm_http_resp_feed(&p, S("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"), &c),
              -EPIPE);
    hm_http_resp_free(&p);
}

static void test_steady_state_reuses_buffers(void)
{
    hm_http_resp_parser p;
    hm_http_resp_init(&p, NULL);
    parse_one(&p, S(chunked_msg), false);
    parse_one(&p, S(chunked_msg), false);
    const char *arena = p.c_.arena.data, *body = p.c_.body.data;
    const hm_http_str *sc = p.set_cookie;
    for (int i = 0; i < 1000; i++) {
        parse_one(&p, S(chunked_msg), false);
        ASSERT_MEMEQ(p.body, p.body_len, "hello world");
    }
    ASSERT(p.c_.arena.data == arena);
    ASSERT(p.c_.body.data == body);
    ASSERT(p.set_cookie == sc);
    hm_http_resp_free(&p);
}

/* ---- request parser ---- */

static void parse_req(hm_http_req_parser *p, const char *d, size_t n)
{
    size_t c = 0;
    ASSERT_EQ(hm_http_req_feed(p, d, n, &c), HM_HTTP_DONE);
    ASSERT_EQ(c, n);
}

static void test_req_get(void)
{
    static const char msg[] = "GET /search?q=a%20b&x=1 HTTP/1.1\r\n"
                              "Host: example.com:8080\r\n"
                              "Cookie: sid=abc; theme=dark\r\n"
                              "Accept: text/html\r\n"
                              "X-Custom:   Foo Bar  \r\n"
                              "\r\n";
    hm_http_req_parser p;
    hm_http_req_init(&p, NULL);
    parse_req(&p, S(msg));
    ASSERT_EQ(p.method, HTTP_GET);
    ASSERT_STREQ(p.method_name, "GET");
    ASSERT_EQ(p.http_minor, 1);
    ASSERT(p.keep_alive);
    ASSERT_STREQ(p.target.ptr, "/search?q=a%20b&x=1");
    ASSERT_STREQ(p.path.ptr, "/search");
    ASSERT_EQ(p.path.len, 7);
    ASSERT_STREQ(p.query.ptr, "q=a%20b&x=1");
    ASSERT_EQ(p.query.len, 11);
    ASSERT_STREQ(p.hdr.host.ptr, "example.com:8080");
    ASSERT_STREQ(p.hdr.cookie.ptr, "sid=abc; theme=dark");
    ASSERT_STREQ(p.hdr.accept.ptr, "text/html");
    ASSERT(p.hdr.origin.ptr == NULL);
    ASSERT_STREQ(hm_http_req_header(&p, "x-custom"), "Foo Bar");
    ASSERT_STREQ(hm_http_req_header(&p, "HOST"), "example.com:8080");
    ASSERT(hm_http_req_header(&p, "X-Missing") == NULL);
    ASSERT_EQ(hm_http_req_header_count(&p), 4);
    hm_http_str name, value;
    ASSERT_EQ(hm_http_req_header_at(&p, 3, &name, &value), 0);
    ASSERT_STREQ(name.ptr, "X-Custom");
    ASSERT_STREQ(value.ptr, "Foo Bar");
    ASSERT_EQ(hm_http_req_header_at(&p, 4, &name, &value), -ERANGE);
    ASSERT_EQ(p.body_len, 0);
    ASSERT_STREQ(p.body, "");

    /* No query; an empty query; a fragment. */
    parse_req(&p, S("GET / HTTP/1.1\r\nHost: h\r\n\r\n"));
    ASSERT_STREQ(p.path.ptr, "/");
    ASSERT(p.query.ptr == NULL);
    parse_req(&p, S("GET /a? HTTP/1.1\r\nHost: h\r\n\r\n"));
    ASSERT_STREQ(p.path.ptr, "/a");
    ASSERT_STREQ(p.query.ptr, "");
    parse_req(&p, S("GET /a?b=1#frag HTTP/1.1\r\nHost: h\r\n\r\n"));
    ASSERT_STREQ(p.path.ptr, "/a");
    ASSERT_STREQ(p.query.ptr, "b=1");
    ASSERT_STREQ(p.target.ptr, "/a?b=1#frag");
    hm_http_req_free(&p);
}

static void test_req_post_json(void)
{
    static const char msg[] = "POST /api/items HTTP/1.1\r\n"
                              "Host: localhost\r\n"
                              "Origin: http://localhost\r\n"
                              "Content-Type: application/json\r\n"
                              "Datastar-Request: true\r\n"
                              "Content-Length: 24\r\n"
                              "\r\n"
                              "{\"name\":\"x\",\"count\":42}\n";
    hm_http_req_parser p;
    hm_http_req_init(&p, NULL);
    parse_req(&p, S(msg));
    ASSERT_EQ(p.method, HTTP_POST);
    ASSERT_STREQ(p.method_name, "POST");
    ASSERT_STREQ(p.path.ptr, "/api/items");
    ASSERT(p.has_content_length);
    ASSERT_EQ(p.content_length, 24);
    ASSERT_MEMEQ(p.body, p.body_len, "{\"name\":\"x\",\"count\":42}\n");
    ASSERT_EQ(p.body[p.body_len], '\0');
    ASSERT_STREQ(p.hdr.content_type.ptr, "application/json");
    ASSERT_STREQ(p.hdr.datastar_request.ptr, "true");
    ASSERT_STREQ(p.hdr.origin.ptr, "http://localhost");
    ASSERT_STREQ(hm_http_req_header(&p, "content-length"), "24");

    /* Every split point gives the same request. */
    for (size_t split = 0; split <= sizeof(msg) - 1; split++) {
        size_t c1 = 0, c2 = 0;
        int rc = hm_http_req_feed(&p, msg, split, &c1);
        if (rc == HM_HTTP_NEED_MORE) {
            ASSERT_EQ(c1, split);
            rc = hm_http_req_feed(&p, msg + split, sizeof(msg) - 1 - split, &c2);
        }
        ASSERT_EQ(rc, HM_HTTP_DONE);
        ASSERT_EQ(c1 + c2, sizeof(msg) - 1);
        ASSERT_MEMEQ(p.body, p.body_len, "{\"name\":\"x\",\"count\":42}\n");
        ASSERT_STREQ(p.hdr.datastar_request.ptr, "true");
        ASSERT_STREQ(p.path.ptr, "/api/items");
        ASSERT_EQ(hm_http_req_header_count(&p), 5);
    }
    hm_http_req_free(&p);
}

static void test_req_chunked_post(void)
{
    hm_http_req_parser p;
    hm_http_req_init(&p, NULL);
    parse_req(&p, S("POST /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "4\r\nWiki\r\n5;x=y\r\npedia\r\n0\r\nX-T: 1\r\n\r\n"));
    ASSERT(p.chunked);
    ASSERT(p.keep_alive);
    ASSERT_MEMEQ(p.body, p.body_len, "Wikipedia");
    ASSERT(hm_http_req_header(&p, "X-T") == NULL); /* trailers are not headers */
    hm_http_req_free(&p);
}

static void test_req_malformed(void)
{
    hm_http_req_parser p;
    size_t c;
    hm_http_req_init(&p, NULL);
    ASSERT_EQ(hm_http_req_feed(&p, S("G@T / HTTP/1.1\r\n\r\n"), &c), -HM_EPROTO_HTTP);
    const char *why = hm_http_req_error_reason(&p);
    ASSERT(why != NULL && why[0] != '\0');
    ASSERT_EQ(hm_http_req_feed(&p, S("GET / HTTP/1.1\r\n\r\n"), &c), -HM_EPROTO_HTTP); /* sticky */

    hm_http_req_reset(&p);
    ASSERT(hm_http_req_error_reason(&p) == NULL);
    ASSERT_EQ(hm_http_req_feed(&p, S("GET /a b HTTP/1.1\r\n\r\n"), &c), -HM_EPROTO_HTTP);
    ASSERT(hm_http_req_error_reason(&p) != NULL);

    hm_http_req_reset(&p);
    ASSERT_EQ(hm_http_req_feed(&p, S("GET / HTTP/1.1\r\nNoColon\r\n\r\n"), &c), -HM_EPROTO_HTTP);

    hm_http_req_reset(&p);
    parse_req(&p, S("GET / HTTP/1.1\r\nHost: h\r\n\r\n"));
    hm_http_req_free(&p);
}

static void test_req_pipelined(void)
{
    static const char three[] = "GET /one HTTP/1.1\r\nHost: h\r\n\r\n"
                                "POST /two HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
                                "GET /three?z=9 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n";
    static const char *paths[] = {"/one", "/two", "/three"};
    hm_http_req_parser p;
    hm_http_req_init(&p, NULL);
    size_t off = 0;
    for (int i = 0; i < 3; i++) {
        size_t c;
        ASSERT_EQ(hm_http_req_feed(&p, three + off, sizeof(three) - 1 - off, &c), HM_HTTP_DONE);
        ASSERT_GT(c, 0);
        off += c;
        ASSERT_STREQ(p.path.ptr, paths[i]);
        ASSERT_EQ(p.keep_alive, i < 2);
        if (i == 1) ASSERT_MEMEQ(p.body, p.body_len, "abc");
        if (i == 2) ASSERT_STREQ(p.query.ptr, "z=9");
    }
    ASSERT_EQ(off, sizeof(three) - 1);
    /* Nothing may follow Connection: close. */
    size_t c;
    ASSERT_EQ(hm_http_req_feed(&p, S("GET / HTTP/1.1\r\n\r\n"), &c), -HM_EPROTO_HTTP);
    hm_http_req_free(&p);
}

static void test_req_limits(void)
{
    hm_http_limits lim = {.max_header_bytes = 128, .max_body_bytes = 8};
    hm_http_req_parser p;
    size_t c;
    hm_http_req_init(&p, &lim);
    ASSERT_EQ(hm_http_req_feed(&p, S("POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\n123456789"), &c),
              -HM_ETOOBIG);
    hm_http_req_reset(&p);
    char msg[512];
    int n = snprintf(msg, sizeof(msg), "GET /%0200d HTTP/1.1\r\n\r\n", 0);
    ASSERT_EQ(hm_http_req_feed(&p, msg, (size_t)n, &c), -HM_ETOOBIG);
    ASSERT(hm_http_req_error_reason(&p) != NULL);
    hm_http_req_reset(&p);
    parse_req(&p, S("POST / HTTP/1.1\r\nContent-Length: 8\r\n\r\n12345678"));
    ASSERT_MEMEQ(p.body, p.body_len, "12345678");
    hm_http_req_free(&p);
}

/* ---- serializers ---- */

static void test_write_request(void)
{
    char buf[512];
    hm_http_header extra[] = {{"Accept", "*/*"}, {"Cookie", "sid=1"}};
    ssize_t n =
        hm_http_write_request(buf, sizeof(buf), "GET", "/a?b=1", "example.com", extra, 2, NULL, 0);
    ASSERT_MEMEQ(buf, (size_t)n,
                 "GET /a?b=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n"
                 "Cookie: sid=1\r\n\r\n");

    n = hm_http_write_request(buf, sizeof(buf), "POST", "/api", "h:8080", NULL, 0, "{\"a\":1}", 7);
    ASSERT_MEMEQ(buf, (size_t)n,
                 "POST /api HTTP/1.1\r\nHost: h:8080\r\nContent-Length: 7\r\n\r\n{\"a\":1}");

    n = hm_http_write_request(buf, sizeof(buf), "POST", "/empty", "h", NULL, 0, NULL, 0);
    ASSERT_MEMEQ(buf, (size_t)n, "POST /empty HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n");

    hm_http_header own_len[] = {{"content-length", "3"}};
    n = hm_http_write_request(buf, sizeof(buf), "PUT", "/x", NULL, own_len, 1, "abc", 3);
    ASSERT_MEMEQ(buf, (size_t)n, "PUT /x HTTP/1.1\r\ncontent-length: 3\r\n\r\nabc");

    /* Too small at every size short of the exact length. */
    size_t full = strlen("GET / HTTP/1.1\r\nHost: h\r\n\r\n");
    for (size_t cap = 0; cap < full; cap++)
        ASSERT_EQ(hm_http_write_request(buf, cap, "GET", "/", "h", NULL, 0, NULL, 0), -ENOSPC);
    ASSERT_EQ(hm_http_write_request(buf, full, "GET", "/", "h", NULL, 0, NULL, 0), (ssize_t)full);

    hm_http_header inject[] = {{"X-A", "1\r\nX-B: 2"}};
    ASSERT_EQ(hm_http_write_request(buf, sizeof(buf), "GET", "/", "h", inject, 1, NULL, 0),
              -EINVAL);
    ASSERT_EQ(hm_http_write_request(buf, sizeof(buf), "GET", "/a b", "h", NULL, 0, NULL, 0),
              -EINVAL);
    ASSERT_EQ(hm_http_write_request(buf, sizeof(buf), "GET", "/", "h\r\n", NULL, 0, NULL, 0),
              -EINVAL);
}

static void test_write_response(void)
{
    char buf[512];
    hm_http_header hs[] = {{"Content-Type", "text/plain"}};
    ssize_t n = hm_http_write_response_head(buf, sizeof(buf), 200, NULL, hs, 1, 5, true);
    ASSERT_MEMEQ(buf, (size_t)n,
                 "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n");

    n = hm_http_write_response_head(buf, sizeof(buf), 404, NULL, NULL, 0, HM_HTTP_LEN_CHUNKED,
                                    false);
    ASSERT_MEMEQ(buf, (size_t)n,
                 "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n"
                 "Connection: close\r\n\r\n");

    n = hm_http_write_response_head(buf, sizeof(buf), 299, "Custom", NULL, 0, HM_HTTP_LEN_NONE,
                                    true);
    ASSERT_MEMEQ(buf, (size_t)n, "HTTP/1.1 299 Custom\r\n\r\n");

    n = hm_http_write_response_head(buf, 10, 200, NULL, hs, 1, 5, true);
    ASSERT_EQ(n, -ENOSPC);
    ASSERT_EQ(hm_http_write_response_head(buf, sizeof(buf), 42, NULL, NULL, 0, 0, true), -EINVAL);

    n = hm_http_write_chunk(buf, sizeof(buf), "0123456789abcdef", 16);
    ASSERT_MEMEQ(buf, (size_t)n, "10\r\n0123456789abcdef\r\n");
    n = hm_http_write_chunk(buf, sizeof(buf), "hi", 2);
    ASSERT_MEMEQ(buf, (size_t)n, "2\r\nhi\r\n");
    ASSERT_EQ(hm_http_write_chunk(buf, sizeof(buf), "", 0), 0);
    ASSERT_EQ(hm_http_write_chunk(buf, 6, "hi", 2), -ENOSPC);
    n = hm_http_write_chunk_head(buf, sizeof(buf), 4096);
    ASSERT_MEMEQ(buf, (size_t)n, "1000\r\n");
    n = hm_http_write_last_chunk(buf, sizeof(buf));
    ASSERT_MEMEQ(buf, (size_t)n, "0\r\n\r\n");
    ASSERT_EQ(hm_http_write_last_chunk(buf, 4), -ENOSPC);

    ASSERT_STREQ(hm_http_reason(200), "OK");
    ASSERT_STREQ(hm_http_reason(404), "Not Found");
    ASSERT_STREQ(hm_http_reason(503), "Service Unavailable");
    ASSERT_STREQ(hm_http_reason(799), "Unknown");
}

static void test_round_trip(void)
{
    char buf[1024];
    size_t c;

    /* Request: serializer -> request parser. */
    hm_http_header extra[] = {
        {"Cookie", "sid=xyz"}, {"Datastar-Request", "true"}, {"Content-Type", "application/json"}};
    ssize_t n = hm_http_write_request(buf, sizeof(buf), "POST", "/signals?id=4", "bench:9000",
                                      extra, 3, "{\"count\":1}", 11);
    ASSERT_GT(n, 0);
    hm_http_req_parser rq;
    hm_http_req_init(&rq, NULL);
    ASSERT_EQ(hm_http_req_feed(&rq, buf, (size_t)n, &c), HM_HTTP_DONE);
    ASSERT_EQ(c, (size_t)n);
    ASSERT_EQ(rq.method, HTTP_POST);
    ASSERT_STREQ(rq.path.ptr, "/signals");
    ASSERT_STREQ(rq.query.ptr, "id=4");
    ASSERT_STREQ(rq.hdr.host.ptr, "bench:9000");
    ASSERT_STREQ(rq.hdr.cookie.ptr, "sid=xyz");
    ASSERT_STREQ(rq.hdr.datastar_request.ptr, "true");
    ASSERT_STREQ(rq.hdr.content_type.ptr, "application/json");
    ASSERT(rq.keep_alive);
    ASSERT_MEMEQ(rq.body, rq.body_len, "{\"count\":1}");
    hm_http_req_free(&rq);

    /* Chunked response: head + chunks + last chunk -> response parser. */
    hm_http_header hs[] = {{"Content-Type", "text/event-stream"},
                           {"Set-Cookie", "a=1"},
                           {"Set-Cookie", "b=2"},
                           {"X-Via-Worker", "7"}};
    size_t len = 0;
    n = hm_http_write_response_head(buf, sizeof(buf), 200, NULL, hs, 4, HM_HTTP_LEN_CHUNKED, true);
    ASSERT_GT(n, 0);
    len += (size_t)n;
    n = hm_http_write_chunk(buf + len, sizeof(buf) - len, "event: a\n", 9);
    len += (size_t)n;
    n = hm_http_write_chunk(buf + len, sizeof(buf) - len, "data: 1\n\n", 9);
    len += (size_t)n;
    n = hm_http_write_last_chunk(buf + len, sizeof(buf) - len);
    len += (size_t)n;
    hm_http_resp_parser rp;
    hm_http_resp_init(&rp, NULL);
    parse_one(&rp, buf, len, false);
    ASSERT(rp.chunked);
    ASSERT(rp.keep_alive);
    ASSERT_STREQ(rp.hdr.content_type.ptr, "text/event-stream");
    ASSERT_STREQ(rp.hdr.x_via_worker.ptr, "7");
    ASSERT_EQ(rp.n_set_cookie, 2);
    ASSERT_STREQ(rp.set_cookie[1].ptr, "b=2");
    ASSERT_MEMEQ(rp.body, rp.body_len, "event: a\ndata: 1\n\n");

    /* Content-Length response with Connection: close. */
    n = hm_http_write_response_head(buf, sizeof(buf), 500, NULL, NULL, 0, 4, false);
    memcpy(buf + n, "oops", 4);
    parse_one(&rp, buf, (size_t)n + 4, false);
    ASSERT_EQ(rp.status, 500);
    ASSERT(!rp.keep_alive);
    ASSERT_MEMEQ(rp.body, rp.body_len, "oops");
    hm_http_resp_free(&rp);
}

int main(void)
{
    test_content_length();
    test_chunked_extensions_trailers();
    test_close_delimited();
    test_finish_truncated();
    test_head_then_next();
    test_informational();
    test_pipelined();
    test_upgrade();
    test_every_split();
    test_keep_alive_decisions();
    test_set_cookie_many();
    test_header_split_across_feeds();
    test_header_limit();
    test_body_limit();
    test_garbage();
    test_streaming();
    test_steady_state_reuses_buffers();
    test_req_get();
    test_req_post_json();
    test_req_chunked_post();
    test_req_malformed();
    test_req_pipelined();
    test_req_limits();
    test_write_request();
    test_write_response();
    test_round_trip();
    printf("http1: all tests passed\n");
    return 0;
}
