/* Content codings (src/proto/content_coding.h) and the response parser's
 * decoding (http1.h): gzip, deflate (zlib and raw) and br bodies made by
 * zlib and libbrotlienc decode to what was compressed, in any split; a
 * Brotli stream flushed per event hands out each event with its chunk;
 * corrupt, truncated and trailing bytes fail with a reason; a bomb stops
 * at the bound. */
#include "hm_test.h"

#include "base/hm_base.h"
#include "base/hm_buf.h"
#include "proto/content_coding.h"
#include "proto/http1.h"

#include <brotli/encode.h>
#include <zlib.h>

static int collect(void *user, const char *p, size_t n)
{
    return hm_buf_append(user, p, n) == 0 ? 0 : -ENOMEM;
}

/* zlib: window_bits 15+16 gzip, 15 zlib, -15 raw deflate. */
static hm_buf zcompress(const char *p, size_t n, int window_bits)
{
    z_stream z = {0};
    ASSERT_EQ(deflateInit2(&z, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
    hm_buf out = {0};
    ASSERT_EQ(hm_buf_reserve(&out, deflateBound(&z, n)), 0);
    z.next_in = (Bytef *)(uintptr_t)p;
    z.avail_in = (uInt)n;
    z.next_out = (Bytef *)out.data;
    z.avail_out = (uInt)out.cap;
    ASSERT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
    out.len = z.total_out;
    deflateEnd(&z);
    return out;
}

static hm_buf brcompress(const char *p, size_t n)
{
    hm_buf out = {0};
    size_t cap = BrotliEncoderMaxCompressedSize(n);
    ASSERT_EQ(hm_buf_reserve(&out, cap), 0);
    size_t len = cap;
    ASSERT(BrotliEncoderCompress(5, 22, BROTLI_MODE_GENERIC, n, (const uint8_t *)p, &len,
                                 (uint8_t *)out.data));
    out.len = len;
    return out;
}

/* Decodes coded[0, n) fed in pieces of `piece` bytes; returns the feed's
 * first error, or end()'s. */
static int decode(hm_coding c, const char *coded, size_t n, size_t piece, size_t max_out,
                  hm_buf *out, hm_content_decoder *d)
{
    ASSERT_EQ(hm_content_decoder_start(d, c), 0);
    for (size_t off = 0; off < n; off += piece) {
        size_t k = n - off < piece ? n - off : piece;
        int rc = hm_content_decoder_feed(d, coded + off, k, max_out, collect, out);
        if (rc < 0) return rc;
    }
    return hm_content_decoder_end(d);
}

static char text[200000];

static void fill_text(void)
{
    /* compressible, but not trivially: a counter in every line */
    size_t n = 0;
    for (int i = 0; n + 64 < sizeof(text); i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n,
                              "event: datastar-patch-signals\n"
                              "data: signals {\"count\":%d}\n\n",
                              i);
}

static void roundtrip(hm_coding c, const hm_buf *coded, size_t piece)
{
    hm_content_decoder d = {0};
    hm_buf out = {0};
    int rc = decode(c, coded->data, coded->len, piece, 0, &out, &d);
    if (rc < 0) HM_FAIL_("%s, pieces of %zu: %d (%s)", hm_coding_name(c), piece, rc, d.why);
    ASSERT_EQ(out.len, strlen(text));
    ASSERT(memcmp(out.data, text, out.len) == 0);
    ASSERT_EQ(d.in_bytes, coded->len);
    ASSERT_EQ(d.out_bytes, strlen(text));
    hm_content_decoder_free(&d);
    hm_buf_free(&out);
}

static void test_parse(void)
{
    hm_coding c;
    ASSERT_EQ(hm_coding_parse("gzip", 4, &c), 0);
    ASSERT_EQ(c, HM_CODING_GZIP);
    ASSERT_EQ(hm_coding_parse(" x-GZIP ", 8, &c), 0);
    ASSERT_EQ(c, HM_CODING_GZIP);
    ASSERT_EQ(hm_coding_parse("Br", 2, &c), 0);
    ASSERT_EQ(c, HM_CODING_BR);
    ASSERT_EQ(hm_coding_parse("identity, deflate", 17, &c), 0);
    ASSERT_EQ(c, HM_CODING_DEFLATE);
    ASSERT_EQ(hm_coding_parse("", 0, &c), 0);
    ASSERT_EQ(c, HM_CODING_IDENTITY);
    ASSERT_EQ(hm_coding_parse("zstd", 4, &c), -ENOTSUP);
    ASSERT_EQ(hm_coding_parse("gzip, br", 8, &c), -ENOTSUP);
}

static void test_roundtrips(void)
{
    size_t n = strlen(text);
    hm_buf gz = zcompress(text, n, 15 + 16), zl = zcompress(text, n, 15),
           raw = zcompress(text, n, -15), br = brcompress(text, n);
    ASSERT_LT(br.len, n);
    const size_t pieces[] = {1, 2, 3, 7, 1000, 1 << 20};
    for (size_t i = 0; i < HM_ARRAY_LEN(pieces); i++) {
        roundtrip(HM_CODING_GZIP, &gz, pieces[i]);
        roundtrip(HM_CODING_DEFLATE, &zl, pieces[i]);
        roundtrip(HM_CODING_DEFLATE, &raw, pieces[i]);
        roundtrip(HM_CODING_BR, &br, pieces[i]);
    }
    /* gzip: two members back to back are one body */
    hm_buf half1 = zcompress(text, n / 2, 15 + 16), half2 = zcompress(text + n / 2, n - n / 2, 31);
    ASSERT_EQ(hm_buf_append(&half1, half2.data, half2.len), 0);
    roundtrip(HM_CODING_GZIP, &half1, 5);
    hm_buf_free(&half1);
    hm_buf_free(&half2);
    hm_buf_free(&gz);
    hm_buf_free(&zl);
    hm_buf_free(&raw);
    hm_buf_free(&br);
}

/* php-via's withBrotli: one stream, flushed after every event; each chunk
 * decodes to its event when it arrives, before the stream ends. */
static void test_brotli_flush_per_event(void)
{
    BrotliEncoderState *e = BrotliEncoderCreateInstance(NULL, NULL, NULL);
    BrotliEncoderSetParameter(e, BROTLI_PARAM_QUALITY, 4);
    BrotliEncoderSetParameter(e, BROTLI_PARAM_LGWIN, 22);
    hm_content_decoder d = {0};
    ASSERT_EQ(hm_content_decoder_start(&d, HM_CODING_BR), 0);
    hm_buf out = {0};
    for (int i = 0; i < 50; i++) {
        char ev[128];
        int len = snprintf(ev, sizeof(ev),
                           "event: datastar-patch-signals\ndata: signals {\"n\":%d}\n\n", i);
        size_t avail_in = (size_t)len;
        const uint8_t *next_in = (const uint8_t *)ev;
        hm_buf chunk = {0};
        do {
            size_t avail_out = 0;
            ASSERT(BrotliEncoderCompressStream(e, BROTLI_OPERATION_FLUSH, &avail_in, &next_in,
                                               &avail_out, NULL, NULL));
            size_t got = 0;
            const uint8_t *p = BrotliEncoderTakeOutput(e, &got);
            ASSERT_EQ(hm_buf_append(&chunk, p, got), 0);
        } while (avail_in || BrotliEncoderHasMoreOutput(e));
        out.len = 0;
        ASSERT_EQ(hm_content_decoder_feed(&d, chunk.data, chunk.len, 0, collect, &out), 0);
        ASSERT_EQ(out.len, (size_t)len);
        ASSERT(memcmp(out.data, ev, out.len) == 0);
        hm_buf_free(&chunk);
    }
    /* the stream never finished: ending it here is a truncation */
    ASSERT_EQ(hm_content_decoder_end(&d), -HM_EPROTO_HTTP);
    ASSERT(strstr(d.why, "truncated"));
    hm_content_decoder_free(&d);
    hm_buf_free(&out);
    BrotliEncoderDestroyInstance(e);
}

static void expect_error(hm_coding c, const hm_buf *coded, int want, const char *why_part)
{
    hm_content_decoder d = {0};
    hm_buf out = {0};
    int rc = decode(c, coded->data, coded->len, 13, 0, &out, &d);
    if (rc != want) HM_FAIL_("%s: got %d, want %d (%s)", hm_coding_name(c), rc, want, d.why);
    if (!strstr(d.why, why_part)) HM_FAIL_("reason '%s' lacks '%s'", d.why, why_part);
    /* sticky */
    ASSERT_EQ(hm_content_decoder_feed(&d, "x", 1, 0, collect, &out), want);
    hm_content_decoder_free(&d);
    hm_buf_free(&out);
}

static void test_corrupt(void)
{
    size_t n = strlen(text);
    hm_buf gz = zcompress(text, n, 15 + 16), br = brcompress(text, n), zl = zcompress(text, n, 15);
    /* a flipped byte in the middle of the data */
    gz.data[gz.len / 2] ^= 0x55;
    expect_error(HM_CODING_GZIP, &gz, -HM_EPROTO_HTTP, "corrupt gzip body");
    /* Brotli has no checksum: a flipped byte shows as bad data or as a
     * stream that does not end where the body does */
    br.data[br.len / 2] ^= 0x55;
    expect_error(HM_CODING_BR, &br, -HM_EPROTO_HTTP, "br body");
    /* not compressed at all */
    hm_buf plain = {0};
    hm_buf_append(&plain, "<html>hello</html>", 18);
    expect_error(HM_CODING_GZIP, &plain, -HM_EPROTO_HTTP, "gzip");
    expect_error(HM_CODING_BR, &plain, -HM_EPROTO_HTTP, "br");
    /* truncated */
    hm_buf_free(&br);
    br = brcompress(text, n);
    br.len -= 3;
    expect_error(HM_CODING_BR, &br, -HM_EPROTO_HTTP, "truncated");
    zl.len /= 2;
    expect_error(HM_CODING_DEFLATE, &zl, -HM_EPROTO_HTTP, "truncated");
    /* bytes after the end */
    hm_buf_free(&br);
    br = brcompress(text, n);
    hm_buf_append(&br, "junk", 4);
    expect_error(HM_CODING_BR, &br, -HM_EPROTO_HTTP, "after the end");
    hm_buf_free(&gz);
    gz = zcompress(text, n, 15 + 16);
    hm_buf_append(&gz, "junk", 4);
    expect_error(HM_CODING_GZIP, &gz, -HM_EPROTO_HTTP, "after the end");
    hm_buf_free(&gz);
    hm_buf_free(&br);
    hm_buf_free(&zl);
    hm_buf_free(&plain);
}

/* A few KiB that decode to 64 MiB stop at the bound of one feed. */
static void test_bomb(void)
{
    size_t n = (size_t)64 << 20;
    char *zeros = calloc(1, n);
    ASSERT(zeros);
    hm_buf br = brcompress(zeros, n), gz = zcompress(zeros, n, 15 + 16);
    free(zeros);
    ASSERT_LT(br.len, 64 * 1024);
    const size_t bound = (size_t)8 << 20;
    for (int i = 0; i < 2; i++) {
        hm_coding c = i ? HM_CODING_GZIP : HM_CODING_BR;
        const hm_buf *coded = i ? &gz : &br;
        hm_content_decoder d = {0};
        hm_buf out = {0};
        ASSERT_EQ(hm_content_decoder_start(&d, c), 0);
        int rc = hm_content_decoder_feed(&d, coded->data, coded->len, bound, collect, &out);
        ASSERT_EQ(rc, -HM_ETOOBIG);
        ASSERT(strstr(d.why, "expands past the limit"));
        ASSERT_LE(out.len, bound);
        ASSERT_LE(d.out_bytes, bound);
        hm_content_decoder_free(&d);
        hm_buf_free(&out);
    }
    hm_buf_free(&br);
    hm_buf_free(&gz);
}

/* ---- through the response parser ---- */

static hm_buf response(const char *coding, const hm_buf *body, bool chunked)
{
    hm_buf r = {0};
    char head[256];
    int n =
        snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\n%s%s%s",
                 coding ? "Content-Encoding: " : "", coding ? coding : "", coding ? "\r\n" : "");
    hm_buf_append(&r, head, (size_t)n);
    if (chunked) {
        hm_buf_append(&r, "Transfer-Encoding: chunked\r\n\r\n", 30);
        for (size_t off = 0; off < body->len; off += 1000) {
            size_t k = body->len - off < 1000 ? body->len - off : 1000;
            n = snprintf(head, sizeof(head), "%zx\r\n", k);
            hm_buf_append(&r, head, (size_t)n);
            hm_buf_append(&r, body->data + off, k);
            hm_buf_append(&r, "\r\n", 2);
        }
        hm_buf_append(&r, "0\r\n\r\n", 5);
    } else {
        n = snprintf(head, sizeof(head), "Content-Length: %zu\r\n\r\n", body->len);
        hm_buf_append(&r, head, (size_t)n);
        hm_buf_append(&r, body->data, body->len);
    }
    return r;
}

/* Feeds r in pieces of `piece`; returns DONE or the error. */
static int feed_all(hm_http_resp_parser *p, const hm_buf *r, size_t piece)
{
    hm_http_resp_begin(p, false);
    for (size_t off = 0; off < r->len;) {
        size_t k = r->len - off < piece ? r->len - off : piece, used = 0;
        int rc = hm_http_resp_feed(p, r->data + off, k, &used);
        if (rc != HM_HTTP_NEED_MORE) return rc;
        off += used;
    }
    return HM_HTTP_NEED_MORE;
}

/* A stream whose headers callback drops the head (hm_http_resp_drop_head),
 * as a browser VU's EventSource does once it has read them. */
typedef struct drop_sink {
    int heads;
    hm_buf got;
} drop_sink;

static int drop_head(void *user, hm_http_resp_parser *p)
{
    drop_sink *s = user;
    ASSERT(p->hdr.content_encoding.ptr != NULL);
    hm_http_resp_drop_head(p);
    ASSERT(p->hdr.content_encoding.ptr == NULL && p->hdr.content_type.ptr == NULL);
    ASSERT_EQ(p->n_set_cookie, 0);
    s->heads++;
    return 0;
}

static int drop_sink_body(void *user, const char *at, size_t n)
{
    drop_sink *s = user;
    return collect(&s->got, at, n);
}

static void test_parser(void)
{
    size_t n = strlen(text);
    hm_buf br = brcompress(text, n), gz = zcompress(text, n, 15 + 16);
    hm_http_resp_parser p;
    hm_http_resp_init(&p, NULL);
    hm_http_resp_set_decoding(&p, true);
    for (int chunked = 0; chunked < 2; chunked++) {
        hm_buf r = response("br", &br, chunked);
        ASSERT_EQ(feed_all(&p, &r, 777), HM_HTTP_DONE);
        ASSERT_EQ(p.coding, HM_CODING_BR);
        ASSERT_EQ(p.body_len, n);
        ASSERT(memcmp(p.body, text, n) == 0);
        hm_buf_free(&r);
        r = response("gzip", &gz, chunked);
        ASSERT_EQ(feed_all(&p, &r, 777), HM_HTTP_DONE);
        ASSERT_EQ(p.body_len, n);
        ASSERT(memcmp(p.body, text, n) == 0);
        hm_buf_free(&r);
    }
    ASSERT_EQ(p.coded_in, 2 * (br.len + gz.len));
    ASSERT_EQ(p.decoded_out, 4 * n);

    /* streaming: the callback gets the decoded bytes */
    hm_buf got = {0};
    hm_http_resp_set_callbacks(&p, NULL, collect, &got);
    hm_buf r = response("br", &br, true);
    ASSERT_EQ(feed_all(&p, &r, 100), HM_HTTP_DONE);
    ASSERT_EQ(got.len, n);
    ASSERT(memcmp(got.data, text, n) == 0);
    hm_buf_free(&r);
    hm_buf_free(&got);

    /* streaming with the head dropped at headers time: the body still
     * decodes (the decoder was set up from the head before the callback),
     * in pieces from one byte up */
    for (size_t piece = 1; piece <= 1024; piece *= 4) {
        drop_sink s = {0};
        hm_http_resp_set_callbacks(&p, drop_head, drop_sink_body, &s);
        r = response("gzip", &gz, true);
        ASSERT_EQ(feed_all(&p, &r, piece), HM_HTTP_DONE);
        ASSERT_EQ(s.heads, 1);
        ASSERT_EQ(p.status, 200);
        ASSERT_EQ(s.got.len, n);
        ASSERT(memcmp(s.got.data, text, n) == 0);
        hm_buf_free(&r);
        hm_buf_free(&s.got);
    }
    hm_http_resp_set_callbacks(&p, NULL, NULL, NULL);

    /* a coding hammer does not decode */
    r = response("zstd", &br, false);
    ASSERT_EQ(feed_all(&p, &r, 777), -HM_EPROTO_HTTP);
    ASSERT(strstr(hm_http_resp_error_reason(&p), "does not decode"));
    ASSERT(strstr(hm_http_resp_error_reason(&p), "\"zstd\""));
    hm_buf_free(&r);
    /* corrupt: a failure with the decoder's reason */
    hm_buf bad = {0};
    for (int i = 0; i < 64; i++)
        hm_buf_append(&bad, "<html>not compressed</html>", 27);
    r = response("br", &bad, true);
    ASSERT_EQ(feed_all(&p, &r, 777), -HM_EPROTO_HTTP);
    ASSERT(strstr(hm_http_resp_error_reason(&p), "corrupt br body"));
    hm_buf_free(&r);
    hm_buf_free(&bad);
    /* truncated at the body's end */
    bad = brcompress(text, n);
    bad.len -= 2;
    r = response("br", &bad, false);
    ASSERT_EQ(feed_all(&p, &r, 777), -HM_EPROTO_HTTP);
    ASSERT(strstr(hm_http_resp_error_reason(&p), "truncated"));
    hm_buf_free(&r);
    hm_buf_free(&bad);

    /* the decoded body is bounded by the body limit */
    hm_http_resp_parser small;
    hm_http_limits lim = {.max_body_bytes = 4096};
    hm_http_resp_init(&small, &lim);
    hm_http_resp_set_decoding(&small, true);
    r = response("br", &br, false);
    ASSERT_LT(br.len, lim.max_body_bytes); /* the wire body fits, the decoded one does not */
    ASSERT_EQ(feed_all(&small, &r, 777), -HM_ETOOBIG);
    ASSERT(strstr(hm_http_resp_error_reason(&small), "decoded body over the size limit"));
    hm_buf_free(&r);
    hm_http_resp_free(&small);

    /* decoding off: the coded bytes pass as they came */
    hm_http_resp_set_decoding(&p, false);
    r = response("br", &br, false);
    ASSERT_EQ(feed_all(&p, &r, 777), HM_HTTP_DONE);
    ASSERT_EQ(p.coding, HM_CODING_IDENTITY);
    ASSERT_EQ(p.body_len, br.len);
    hm_buf_free(&r);

    /* a 204 or HEAD with Content-Encoding has no body, and that is fine */
    hm_http_resp_set_decoding(&p, true);
    static const char no_content[] = "HTTP/1.1 204 No Content\r\nContent-Encoding: br\r\n\r\n";
    hm_buf nc = {0};
    hm_buf_append(&nc, no_content, sizeof(no_content) - 1);
    ASSERT_EQ(feed_all(&p, &nc, 777), HM_HTTP_DONE);
    hm_buf empty = {0};
    r = response("gzip", &empty, false);
    ASSERT_EQ(feed_all(&p, &r, 777), HM_HTTP_DONE);
    ASSERT_EQ(p.body_len, 0);
    hm_buf_free(&r);
    hm_buf_free(&nc);
    hm_http_resp_free(&p);
    hm_buf_free(&br);
    hm_buf_free(&gz);
}

int main(void)
{
    fill_text();
    test_parse();
    test_roundtrips();
    test_brotli_flush_per_event();
    test_corrupt();
    test_bomb();
    test_parser();
    printf("content coding: ok\n");
    return 0;
}
