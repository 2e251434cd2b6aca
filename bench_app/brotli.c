/* brotli.c — bench_app --brotli: php-via's withBrotli() (BrotliMiddleware
 * and ext-brotli's incremental encoder) with libbrotlienc.
 *
 * php-via compresses at quality 4 (withBrotli()'s dynamic level), window
 * 22, generic mode (brotli_compress_init($level)). A page is one FLUSH of
 * its HTML followed by FINISH, sent as one body; an SSE stream is one
 * brotli stream for the whole response, each event flushed on its own, so
 * every HTTP chunk decodes to exactly one event as it arrives.
 *
 * Memory: an encoder is hm_alloc'd by ba_br_new() with its own scratch
 * buffer and freed by ba_br_free(); libbrotli allocates its state with
 * malloc (its default allocator). Output goes to the caller's ba_buf. */
#include "bench_app/internal.h"

#include <brotli/encode.h>

#define BR_QUALITY 4
#define BR_LGWIN 22

struct ba_br {
    BrotliEncoderState *s;
    ba_buf tmp; /* the compressed bytes of one chunk, before its size line */
};

static BrotliEncoderState *encoder_new(void)
{
    BrotliEncoderState *s = BrotliEncoderCreateInstance(NULL, NULL, NULL);
    if (!s) return NULL;
    if (!BrotliEncoderSetParameter(s, BROTLI_PARAM_QUALITY, BR_QUALITY) ||
        !BrotliEncoderSetParameter(s, BROTLI_PARAM_LGWIN, BR_LGWIN) ||
        !BrotliEncoderSetParameter(s, BROTLI_PARAM_MODE, BROTLI_MODE_GENERIC)) {
        BrotliEncoderDestroyInstance(s);
        return NULL;
    }
    return s;
}

/* Runs op over p[0, n) and appends everything the encoder gives to out;
 * FINISH runs until the stream is complete. 0, -ENOMEM or -EIO. */
static int encode(BrotliEncoderState *s, BrotliEncoderOperation op, const char *p, size_t n,
                  ba_buf *out)
{
    size_t avail_in = n;
    const uint8_t *next_in = (const uint8_t *)p;
    for (;;) {
        size_t avail_out = 0;
        if (!BrotliEncoderCompressStream(s, op, &avail_in, &next_in, &avail_out, NULL, NULL))
            return -EIO;
        size_t got = 0;
        const uint8_t *bytes = BrotliEncoderTakeOutput(s, &got);
        if (got && ba_buf_append(out, bytes, got) < 0) return -ENOMEM;
        bool done = avail_in == 0 && !BrotliEncoderHasMoreOutput(s);
        if (op == BROTLI_OPERATION_FINISH) done = done && BrotliEncoderIsFinished(s);
        if (done) return 0;
    }
}

int ba_br_new(ba_br **out)
{
    ba_br *br = hm_calloc(1, sizeof(*br));
    if (!br) return -ENOMEM;
    br->s = encoder_new();
    if (!br->s) {
        hm_free(br);
        return -ENOMEM;
    }
    *out = br;
    return 0;
}

void ba_br_free(ba_br *br)
{
    if (!br) return;
    BrotliEncoderDestroyInstance(br->s);
    ba_buf_free(&br->tmp);
    hm_free(br);
}

int ba_br_chunk(ba_br *br, const ba_conn *c, ba_buf *out, const char *p, size_t n)
{
    const char *data = p;
    size_t len = n;
    if (br) {
        br->tmp.len = 0;
        int rc = encode(br->s, BROTLI_OPERATION_FLUSH, p, n, &br->tmp);
        if (rc < 0) return rc;
        data = br->tmp.data;
        len = br->tmp.len;
    }
    return ba_body_chunk(c, out, data, len);
}

int ba_br_page(ba_buf *out, const char *p, size_t n)
{
    BrotliEncoderState *s = encoder_new();
    if (!s) return -ENOMEM;
    int rc = encode(s, BROTLI_OPERATION_FLUSH, p, n, out);
    if (rc == 0) rc = encode(s, BROTLI_OPERATION_FINISH, NULL, 0, out);
    BrotliEncoderDestroyInstance(s);
    return rc;
}

bool ba_accepts_br(const ba_conn *c)
{
    /* BrotliMiddleware: str_contains($acceptEncoding, 'br'), so q-values
     * are ignored ("br;q=0" compresses). */
    const char *ae = hm_http_req_header(&c->req, "accept-encoding");
    return ae && strstr(ae, "br") != NULL;
}
