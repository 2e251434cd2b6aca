/* fuzz_http_req.c — the HTTP/1.1 request parser (src/proto/http1.h) as
 * bench_app's connection loop drives it: feed what the socket gave, handle
 * each complete request, feed the rest (pipelining) until the connection
 * may not go on.
 *
 * The payload is one connection's bytes from a client, parsed twice on a
 * coroutine-sized stack: fed whole and in the pieces the split bytes
 * choose; both must see the same requests and the same error. A request
 * that completes without consuming a byte would spin bench_app's loop
 * forever, so it fails the run.
 *
 * Flags (byte 0):
 *   bit 0  small limits (256 header bytes, 1 KiB body) instead of the defaults
 *   bit 1  after a request that ends the connection, reset the parser and go
 *          on with the rest as a new connection's bytes */
#include "fuzz_common.h"

#include "base/hm_base.h"
#include "proto/http1.h"

#include <string.h>

enum { F_SMALL = 1, F_RECONNECT = 2 };

static void log_str(hm_fuzz_log *l, const char *tag, hm_http_str s)
{
    if (!s.ptr) {
        hm_fuzz_log_printf(l, " %s=-", tag);
        return;
    }
    HM_FUZZ_CHECK(s.ptr[s.len] == '\0');
    hm_fuzz_log_bytes(l, tag, s.ptr, s.len);
}

static void log_request(hm_fuzz_log *l, const hm_http_req_parser *p)
{
    hm_fuzz_log_printf(l, " %d %s %u.%u ka=%d up=%d chunked=%d cl=%d/%llu", p->method,
                       p->method_name, p->http_major, p->http_minor, p->keep_alive, p->upgrade,
                       p->chunked, p->has_content_length, (unsigned long long)p->content_length);
    log_str(l, "target", p->target);
    log_str(l, "path", p->path);
    log_str(l, "query", p->query);
    /* path and query are views of the target's text. */
    HM_FUZZ_CHECK(p->path.len <= p->target.len);
    HM_FUZZ_CHECK(p->target.len == 0 || memcmp(p->path.ptr, p->target.ptr, p->path.len) == 0);
    if (p->query.ptr) HM_FUZZ_CHECK(p->target.ptr[p->path.len] == '?');
    log_str(l, "host", p->hdr.host);
    log_str(l, "cookie", p->hdr.cookie);
    log_str(l, "origin", p->hdr.origin);
    log_str(l, "ct", p->hdr.content_type);
    log_str(l, "conn", p->hdr.connection);
    log_str(l, "ds", p->hdr.datastar_request);
    log_str(l, "accept", p->hdr.accept);
    log_str(l, "upgrade", p->hdr.upgrade);
    size_t n = hm_http_req_header_count(p);
    for (size_t i = 0; i < n; i++) {
        hm_http_str name, value;
        HM_FUZZ_CHECK(hm_http_req_header_at(p, i, &name, &value) == 0);
        log_str(l, "name", name);
        log_str(l, "value", value);
        /* The first header of a name is what a lookup by that name finds. */
        const char *first = hm_http_req_header(p, name.ptr);
        HM_FUZZ_CHECK(first != NULL);
    }
    hm_http_str name, value;
    HM_FUZZ_CHECK(hm_http_req_header_at(p, n, &name, &value) == -ERANGE);
    const char *expect = hm_http_req_header(p, "expect");
    hm_fuzz_log_printf(l, " expect=%s", expect ? expect : "-");
    HM_FUZZ_CHECK(p->body && p->body[p->body_len] == '\0');
    hm_fuzz_log_bytes(l, "body", p->body, p->body_len);
}

typedef struct run {
    const hm_fuzz_input *in;
    bool split;
    hm_fuzz_log log;
} run;

static void parse(run *r)
{
    const hm_fuzz_input *in = r->in;
    const char *d = (const char *)in->data;
    size_t n = in->len;
    hm_http_limits small = {.max_header_bytes = 256, .max_body_bytes = 1024};
    hm_http_req_parser p;
    hm_http_req_init(&p, (in->flags & F_SMALL) ? &small : NULL);
    size_t off = 0, piece_end = 0, piece = 0;
    while (off < n) {
        if (off >= piece_end)
            piece_end = off + (r->split ? hm_fuzz_piece(in, piece++, n - off) : n - off);
        size_t len = piece_end - off, used = (size_t)-1;
        int rc = hm_http_req_feed(&p, d + off, len, &used);
        if (rc == HM_HTTP_NEED_MORE) {
            HM_FUZZ_CHECK(used == len);
            off += len;
            continue;
        }
        if (rc < 0) {
            HM_FUZZ_CHECK(hm_http_req_error_reason(&p) != NULL);
            hm_fuzz_log_printf(&r->log, "\nerror %d", rc == -HM_ETOOBIG ? -HM_EPROTO_HTTP : rc);
            break;
        }
        HM_FUZZ_CHECK(rc == HM_HTTP_DONE && used <= len);
        HM_FUZZ_CHECK(used > 0);
        off += used;
        hm_fuzz_log_printf(&r->log, "\nDONE end=%zu", off);
        log_request(&r->log, &p);
        if (p.upgrade || !p.keep_alive) {
            if (!(in->flags & F_RECONNECT)) break;
            hm_http_req_reset(&p);
        }
    }
    hm_http_req_free(&p);
}

static void both(void *arg)
{
    const hm_fuzz_input *in = arg;
    run whole = {.in = in}, split = {.in = in, .split = true};
    parse(&whole);
    parse(&split);
    hm_fuzz_log_same(&whole.log, &split.log, "whole and split parses");
    hm_fuzz_log_free(&whole.log);
    hm_fuzz_log_free(&split.log);
}

HM_FUZZ_ENTRY(both)
