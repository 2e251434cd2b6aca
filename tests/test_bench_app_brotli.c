/* bench_app --brotli, as php-via's withBrotli() answers on the wire (seen on
 * the real stack, php-via v0.12.0 with ext-brotli): a page is compressed
 * (Content-Encoding: br) when the request's Accept-Encoding contains "br"
 * (q-values ignored: "br;q=0" compresses too) and says Vary:
 * Accept-Encoding either way; an SSE stream is one brotli stream with one
 * HTTP chunk per event, each decoding on arrival to exactly that event;
 * /_health, action answers, 400 and the reload script stay plain; a 403 on
 * /_sse carries Content-Encoding: br over a plain body, as php-via's does.
 * Without --brotli, Accept-Encoding changes nothing. Decoding uses
 * libbrotlidec's streaming decoder, chunk by chunk. */
#include "bench_app_client.h"

#include <brotli/decode.h>

static const char AE[] = "Accept-Encoding: gzip, deflate, br, zstd\r\n";

/* The whole body of a Content-Length response, brotli-decoded. */
static size_t decode_all(const char *in, size_t n, char *out, size_t cap)
{
    size_t got = cap;
    ASSERT_EQ(BrotliDecoderDecompress(n, (const uint8_t *)in, &got, (uint8_t *)out),
              BROTLI_DECODER_RESULT_SUCCESS);
    ASSERT_LT(got, cap);
    out[got] = '\0';
    return got;
}

/* A page's body with its context hex replaced by "H" * 16 and the cookie
 * out of the way, for comparing two pages. */
static void normalise(char *body, const char *hex)
{
    for (char *p = body; (p = strstr(p, hex)); p += 16)
        memset(p, 'H', 16);
}

static void pages(int port, bool brotli)
{
    static char dec[1 << 16], plain[1 << 16];
    resp r;
    page pl, pb;
    get_route(port, "/bench/counter", NULL, &pl, &r);
    ASSERT(!strstr(r.head, "Content-Encoding"));
    ASSERT_EQ(has_header(&r, "Vary: Accept-Encoding"), brotli);
    copy_str(plain, sizeof(plain), r.body, r.body_len);
    normalise(plain, pl.hex);

    char hdrs[512];
    snprintf(hdrs, sizeof(hdrs), "%s%s", AE, pl.cookie_hdr);
    req1(port, "GET", "/bench/counter", hdrs, NULL, &r);
    ASSERT_EQ(r.status, 200);
    if (!brotli) {
        ASSERT(!strstr(r.head, "Content-Encoding") && !strstr(r.head, "Vary"));
        return;
    }
    ASSERT(has_header(&r, "Content-Encoding: br"));
    ASSERT(has_header(&r, "Vary: Accept-Encoding"));
    decode_all(r.body, r.body_len, dec, sizeof(dec));
    ASSERT_LT(r.body_len, strlen(dec));
    const char *m = strstr(dec, "\"via_ctx\":\"\\/bench\\/counter_\\/");
    ASSERT(m);
    memcpy(pb.hex, m + strlen("\"via_ctx\":\"\\/bench\\/counter_\\/"), 16);
    pb.hex[16] = '\0';
    ASSERT(is_hex(pb.hex, 16));
    normalise(dec, pb.hex);
    ASSERT_STREQ(dec, plain);

    /* q-values are not read; gzip alone gets no encoding, only Vary. */
    req1(port, "GET", "/bench/counter", "Accept-Encoding: br;q=0, gzip\r\n", NULL, &r);
    ASSERT(has_header(&r, "Content-Encoding: br"));
    req1(port, "GET", "/bench/counter", "Accept-Encoding: gzip\r\n", NULL, &r);
    ASSERT(!strstr(r.head, "Content-Encoding"));
    ASSERT(has_header(&r, "Vary: Accept-Encoding"));
    printf("pages: br when accepted (q ignored), Vary always, decodes to the plain page: ok\n");
}

/* A raw SSE connection whose chunks are read one by one. */
typedef struct raw_sse {
    int fd;
    char buf[1 << 16];
    size_t len;
    BrotliDecoderState *dec;
} raw_sse;

static void raw_open(raw_sse *rs, int port, const page *p, const char *cookie, resp *r)
{
    rs->fd = tcp_connect(port);
    rs->len = 0;
    char q[512], enc[1024], req[2048];
    snprintf(q, sizeof(q), "{\"via_ctx\":\"%s\"}", p->ctx);
    url_encode(q, enc, sizeof(enc));
    int n =
        snprintf(req, sizeof(req), "GET /_sse?datastar=%s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s%s\r\n",
                 enc, AE, cookie);
    send_all(rs->fd, req, (size_t)n);
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    char *end;
    while (!(end = memmem(rs->buf, rs->len, "\r\n\r\n", 4))) {
        ssize_t k = read_until(rs->fd, rs->buf + rs->len, sizeof(rs->buf) - rs->len, until);
        ASSERT_GT(k, 0);
        rs->len += (size_t)k;
    }
    size_t hl = (size_t)(end - rs->buf) + 4;
    memset(r, 0, sizeof(*r));
    copy_str(r->head, sizeof(r->head), rs->buf, hl);
    r->status = atoi(rs->buf + 9);
    memmove(rs->buf, rs->buf + hl, rs->len - hl);
    rs->len -= hl;
    rs->dec = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    ASSERT(rs->dec);
}

/* The next HTTP chunk's payload into out (its size is returned; 0: the
 * last chunk). */
static size_t raw_chunk(raw_sse *rs, char *out, size_t cap)
{
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    for (;;) {
        char *crlf = memmem(rs->buf, rs->len, "\r\n", 2);
        if (crlf) {
            size_t size = strtoul(rs->buf, NULL, 16);
            size_t at = (size_t)(crlf - rs->buf) + 2;
            if (rs->len >= at + size + 2) {
                ASSERT_LT(size, cap);
                memcpy(out, rs->buf + at, size);
                ASSERT_EQ(memcmp(rs->buf + at + size, "\r\n", 2), 0);
                memmove(rs->buf, rs->buf + at + size + 2, rs->len - at - size - 2);
                rs->len -= at + size + 2;
                return size;
            }
        }
        ssize_t k = read_until(rs->fd, rs->buf + rs->len, sizeof(rs->buf) - rs->len, until);
        ASSERT_GT(k, 0);
        rs->len += (size_t)k;
    }
}

/* The next chunk must decode, by itself, to exactly one whole event. */
static void next_event(raw_sse *rs, char *ev, size_t cap)
{
    static char chunk[1 << 16];
    size_t n = raw_chunk(rs, chunk, sizeof(chunk));
    ASSERT_GT(n, 0);
    size_t avail_in = n, avail_out = cap - 1;
    const uint8_t *next_in = (const uint8_t *)chunk;
    uint8_t *next_out = (uint8_t *)ev;
    BrotliDecoderResult res =
        BrotliDecoderDecompressStream(rs->dec, &avail_in, &next_in, &avail_out, &next_out, NULL);
    ASSERT_EQ(res, BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT); /* the stream goes on */
    ASSERT_EQ(avail_in, 0);
    *next_out = '\0';
    size_t len = (size_t)(next_out - (uint8_t *)ev);
    ASSERT_GT(len, 2);
    ASSERT_STREQ(ev + len - 2, "\n\n");
    ASSERT_EQ(strstr(ev, "\n\n"), ev + len - 2); /* one event, whole */
}

static void raw_close(raw_sse *rs)
{
    BrotliDecoderDestroyInstance(rs->dec);
    fd_close(rs->fd);
}

static void streams(int port)
{
    page p, other;
    get_page(port, NULL, &p);
    get_page(port, NULL, &other);
    char wire[128], ev[8192];
    wire_id(&p, wire, sizeof(wire));
    resp r;
    raw_sse rs;
    raw_open(&rs, port, &p, p.cookie_hdr, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT(has_header(&r, "Content-Type: text/event-stream"));
    ASSERT(has_header(&r, "Content-Encoding: br"));
    ASSERT(has_header(&r, "Vary: Accept-Encoding"));
    ASSERT(has_header(&r, "Transfer-Encoding: chunked"));
    next_event(&rs, ev, sizeof(ev));
    ev[strlen(ev) - 2] = '\0'; /* ELEMENTS_EVENT is without its blank line */
    ASSERT_STREQ(ev, ELEMENTS_EVENT);
    next_event(&rs, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), 0);
    for (int i = 1; i <= 3; i++) {
        char hdrs[512];
        snprintf(hdrs, sizeof(hdrs), "%s", AE);
        action(port, "increment", &p, hdrs, -1, &r);
        ASSERT_EQ(r.status, 200);
        ASSERT(!strstr(r.head, "Content-Encoding"));
        next_event(&rs, ev, sizeof(ev));
        ASSERT_EQ(signal_in(ev, wire), i);
    }
    raw_close(&rs);
    notice_closed_streams(port, &p, "increment", 0);
    printf("SSE: one brotli stream, one chunk per event, each decoding on arrival: ok\n");

    /* Plain even when br is accepted: /_health, 400, the reload script. */
    req1(port, "GET", "/_health", AE, NULL, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT(!strstr(r.head, "Content-Encoding"));
    ASSERT(strstr(r.body, "\"status\":\"ok\""));
    page unknown = p;
    snprintf(unknown.ctx, sizeof(unknown.ctx), "/bench/counter_/00000000deadbeef");
    action(port, "increment", &unknown, AE, -1, &r);
    ASSERT_EQ(r.status, 400);
    ASSERT_STREQ(r.body, "Invalid context");
    raw_open(&rs, port, &unknown, p.cookie_hdr, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT(!strstr(r.head, "Content-Encoding"));
    size_t n = raw_chunk(&rs, ev, sizeof(ev));
    ev[n] = '\0';
    ASSERT(strstr(ev, "window.location.reload()"));
    ASSERT_EQ(raw_chunk(&rs, ev, sizeof(ev)), 0);
    raw_close(&rs);
    /* php-via sets the encoding headers before its session check. */
    raw_open(&rs, port, &p, other.cookie_hdr, &r);
    ASSERT_EQ(r.status, 403);
    ASSERT(has_header(&r, "Content-Encoding: br"));
    ASSERT(has_header(&r, "Content-Length: 9"));
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    while (rs.len < 9) {
        ssize_t k = read_until(rs.fd, rs.buf + rs.len, sizeof(rs.buf) - rs.len, until);
        ASSERT_GT(k, 0);
        rs.len += (size_t)k;
    }
    ASSERT_EQ(memcmp(rs.buf, "Forbidden", 9), 0);
    raw_close(&rs);
    printf("/_health, actions, 400 and the reload script plain; 403 as php-via's: ok\n");
}

int main(int argc, char **argv)
{
    hm_bench_app_options o = ba_test_options(ba_test_begin(argc, argv, false));
    o.brotli = true;
    int port;
    pid_t pid = start_server(&o, &port);
    pages(port, true);
    streams(port);
    stop_server(pid);

    o.brotli = false;
    pid = start_server(&o, &port);
    pages(port, false);
    raw_sse rs;
    resp r;
    page p;
    get_page(port, NULL, &p);
    raw_open(&rs, port, &p, p.cookie_hdr, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT(!strstr(r.head, "Content-Encoding") && !strstr(r.head, "Vary"));
    raw_close(&rs);
    stop_server(pid);
    printf("without --brotli, Accept-Encoding changes nothing: ok\n");
    return 0;
}
