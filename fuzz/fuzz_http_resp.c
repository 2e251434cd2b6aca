/* fuzz_http_resp.c — the HTTP/1.1 response parser (src/proto/http1.h), as a
 * client connection drives it: begin, feed what the socket gave, DONE, the
 * next response on the same connection, finish at EOF.
 *
 * The payload is one connection's bytes from the server. It is parsed twice
 * on a coroutine-sized stack: once fed whole, once in the pieces the split
 * bytes choose; both must report the same responses (status, framing,
 * headers, Set-Cookies, body, where each ended) and the same error.
 *
 * Flags (byte 0):
 *   bit 0  the first request was HEAD
 *   bit 1  streaming body (on_body callback) instead of the buffered body
 *   bit 2  pick the body mode in on_headers: streaming for 2xx, else buffered
 *   bit 3  small limits (256 header bytes, 1 KiB body) instead of the defaults
 *   bit 4  the peer closes after the payload: hm_http_resp_finish
 *   bit 5  every second request after the first is HEAD
 *   bit 6  after a response that ends the connection, begin again and parse
 *          the rest as a new connection's */
#include "fuzz_common.h"

#include "base/hm_base.h"
#include "proto/http1.h"

enum {
    F_HEAD = 1,
    F_STREAM = 2,
    F_PICK = 4,
    F_SMALL = 8,
    F_FINISH = 16,
    F_HEAD_ALT = 32,
    F_RECONNECT = 64,
};

typedef struct run {
    const hm_fuzz_input *in;
    bool split;
    hm_fuzz_log log;
    hm_fuzz_log body; /* streamed body bytes of the current response */
} run;

static void log_str(hm_fuzz_log *l, const char *tag, hm_http_str s)
{
    if (!s.ptr) {
        hm_fuzz_log_printf(l, " %s=-", tag);
        return;
    }
    HM_FUZZ_CHECK(s.ptr[s.len] == '\0');
    hm_fuzz_log_bytes(l, tag, s.ptr, s.len);
}

static void log_head(run *r, const hm_http_resp_parser *p)
{
    HM_FUZZ_CHECK(p->status < 100 || p->status >= 200 || p->status == 101);
    hm_fuzz_log_printf(&r->log, " %d %u.%u chunked=%d cl=%d/%llu", p->status, p->http_major,
                       p->http_minor, p->chunked, p->has_content_length,
                       (unsigned long long)p->content_length);
    log_str(&r->log, "ct", p->hdr.content_type);
    log_str(&r->log, "loc", p->hdr.location);
    log_str(&r->log, "via", p->hdr.x_via_worker);
    log_str(&r->log, "conn", p->hdr.connection);
    for (size_t i = 0; i < p->n_set_cookie; i++)
        log_str(&r->log, "sc", p->set_cookie[i]);
}

static int on_body(void *user, const char *at, size_t len)
{
    run *r = user;
    HM_FUZZ_CHECK(len > 0);
    hm_fuzz_log_raw(&r->body, at, len);
    return 0;
}

static int on_headers(void *user, hm_http_resp_parser *p)
{
    run *r = user;
    hm_fuzz_log_printf(&r->log, "\nH");
    log_head(r, p);
    if (r->in->flags & F_PICK) {
        bool stream = p->status >= 200 && p->status < 300;
        hm_http_resp_set_callbacks(p, on_headers, stream ? on_body : NULL, r);
    }
    return 0;
}

/* The streamed bytes as one piece, so the log does not depend on how the
 * body was cut. */
static void flush_streamed(run *r)
{
    if (r->body.len) hm_fuzz_log_bytes(&r->log, "stream", r->body.data, r->body.len);
    r->body.len = 0;
}

static bool head_of(const hm_fuzz_input *in, int msg)
{
    if (msg == 0) return in->flags & F_HEAD;
    return (in->flags & F_HEAD_ALT) && msg % 2 == 0;
}

static void parse(run *r)
{
    const hm_fuzz_input *in = r->in;
    const char *d = (const char *)in->data;
    size_t n = in->len;
    hm_http_limits small = {.max_header_bytes = 256, .max_body_bytes = 1024};
    hm_http_resp_parser p;
    hm_http_resp_init(&p, (in->flags & F_SMALL) ? &small : NULL);
    hm_http_resp_set_callbacks(&p, on_headers, (in->flags & F_STREAM) ? on_body : NULL, r);
    int msg = 0;
    hm_http_resp_begin(&p, head_of(in, msg));
    size_t off = 0, piece_end = 0, piece = 0;
    bool open = true; /* the parser still expects bytes of this connection */
    while (off < n) {
        if (off >= piece_end)
            piece_end = off + (r->split ? hm_fuzz_piece(in, piece++, n - off) : n - off);
        size_t len = piece_end - off, used = (size_t)-1;
        int rc = hm_http_resp_feed(&p, d + off, len, &used);
        if (rc == HM_HTTP_NEED_MORE) {
            HM_FUZZ_CHECK(used == len);
            off += len;
            continue;
        }
        if (rc < 0) {
            flush_streamed(r);
            HM_FUZZ_CHECK(hm_http_resp_error_reason(&p) != NULL);
            /* Bytes both malformed and over a limit may be reported as either,
             * depending on what the parser had seen when it gave up. */
            hm_fuzz_log_printf(&r->log, "\nerror %d", rc == -HM_ETOOBIG ? -HM_EPROTO_HTTP : rc);
            open = false;
            break;
        }
        HM_FUZZ_CHECK(rc == HM_HTTP_DONE && used <= len);
        off += used;
        flush_streamed(r);
        HM_FUZZ_CHECK(p.body && p.body[p.body_len] == '\0');
        hm_fuzz_log_printf(&r->log, "\nDONE end=%zu ka=%d up=%d", off, p.keep_alive, p.upgrade);
        log_head(r, &p);
        hm_fuzz_log_bytes(&r->log, "body", p.body, p.body_len);
        msg++;
        if (p.upgrade) {
            open = false;
            break;
        }
        if (!p.keep_alive && !(in->flags & F_RECONNECT)) {
            open = false;
            break;
        }
        if (used == 0) { /* an empty response would repeat forever */
            hm_fuzz_log_printf(&r->log, "\nstall");
            open = false;
            break;
        }
        hm_http_resp_begin(&p, head_of(in, msg));
    }
    if (open && (in->flags & F_FINISH)) {
        int rc = hm_http_resp_finish(&p);
        flush_streamed(r);
        hm_fuzz_log_printf(&r->log, "\nfinish %d", rc);
        if (rc == HM_HTTP_DONE) {
            HM_FUZZ_CHECK(!p.keep_alive);
            log_head(r, &p);
            hm_fuzz_log_bytes(&r->log, "body", p.body, p.body_len);
        }
    }
    hm_http_resp_free(&p);
}

static void both(void *arg)
{
    const hm_fuzz_input *in = arg;
    run whole = {.in = in}, split = {.in = in, .split = true};
    parse(&whole);
    parse(&split);
    hm_fuzz_log_same(&whole.log, &split.log, "whole and split parses");
    hm_fuzz_log_free(&whole.log);
    hm_fuzz_log_free(&whole.body);
    hm_fuzz_log_free(&split.log);
    hm_fuzz_log_free(&split.body);
}

HM_FUZZ_ENTRY(both)
