/* fuzz_content_coding.c — the content-coding decoder (src/proto/
 * content_coding.h) that every compressed page and SSE stream goes
 * through, and the response parser that drives it (http1.h, decoding on).
 *
 * The payload is a coded body. On a coroutine-sized stack it is decoded
 * fed whole and in the pieces the split bytes choose: both must succeed or
 * both fail; on success with the same decoded bytes (up to a cap the
 * collector enforces), on failure one's bytes a prefix of the other's
 * (Brotli drops what it decoded in the call that found the error, so a
 * split can show more of a corrupt stream before it fails). Then it is
 * decoded once more with a small per-feed bound, which no feed may exceed,
 * and, wrapped in a chunked response with its Content-Encoding, through
 * the response parser with a small body limit.
 *
 * Flags (byte 0):
 *   bits 0-1  the coding: 0 br, 1 gzip, 2 deflate, 3 br
 *   bit 2     the parser run streams the body (callback) instead of
 *             buffering it */
#include "fuzz_common.h"

#include "base/hm_base.h"
#include "proto/content_coding.h"
#include "proto/http1.h"

#include <stdio.h>
#include <string.h>

enum { F_STREAM = 4 };
#define CAP (256 * 1024) /* decoded bytes the transcript keeps */
#define SMALL_BOUND 4096

typedef struct run {
    const hm_fuzz_input *in;
    hm_coding coding;
    bool split;
    size_t bound; /* per-feed bound, 0: none */
    hm_fuzz_log log;
    size_t total;
    int rc;
} run;

static int collect(void *user, const char *p, size_t n)
{
    run *r = user;
    size_t room = CAP - r->total;
    size_t k = n < room ? n : room;
    hm_fuzz_log_raw(&r->log, p, k);
    r->total += k;
    return k < n ? -HM_ETOOBIG : 0;
}

static int bounded(void *user, const char *p, size_t n)
{
    (void)p;
    size_t *got = user;
    *got += n;
    return 0;
}

static void decode(void *arg)
{
    run *r = arg;
    hm_content_decoder d = {0};
    HM_FUZZ_CHECK(hm_content_decoder_start(&d, r->coding) == 0);
    const char *p = (const char *)r->in->data;
    size_t left = r->in->len, i = 0;
    int rc = 0;
    while (left > 0 && rc == 0) {
        size_t k = r->split ? hm_fuzz_piece(r->in, i++, left) : left;
        rc = hm_content_decoder_feed(&d, p, k, 0, collect, r);
        p += k;
        left -= k;
    }
    if (rc == 0) rc = hm_content_decoder_end(&d);
    HM_FUZZ_CHECK(rc == 0 || rc == -HM_ETOOBIG || d.why[0]);
    HM_FUZZ_CHECK(d.out_bytes >= r->total);
    r->rc = rc;
    hm_content_decoder_free(&d);
}

static void decode_bounded(void *arg)
{
    run *r = arg;
    hm_content_decoder d = {0};
    HM_FUZZ_CHECK(hm_content_decoder_start(&d, r->coding) == 0);
    const char *p = (const char *)r->in->data;
    size_t left = r->in->len, i = 0;
    while (left > 0) {
        size_t k = hm_fuzz_piece(r->in, i++, left), got = 0;
        int rc = hm_content_decoder_feed(&d, p, k, SMALL_BOUND, bounded, &got);
        HM_FUZZ_CHECK(got <= SMALL_BOUND);
        if (rc < 0) break;
        p += k;
        left -= k;
    }
    hm_content_decoder_free(&d);
}

static int discard(void *user, const char *p, size_t n)
{
    (void)p;
    *(size_t *)user += n;
    return 0;
}

static void through_parser(void *arg)
{
    run *r = arg;
    static const char *const names[] = {"br", "gzip", "deflate", "br"};
    hm_http_limits lim = {.max_body_bytes = 64 * 1024};
    hm_http_resp_parser p;
    hm_http_resp_init(&p, &lim);
    hm_http_resp_set_decoding(&p, true);
    size_t streamed = 0;
    if (r->in->flags & F_STREAM) hm_http_resp_set_callbacks(&p, NULL, discard, &streamed);
    hm_http_resp_begin(&p, false);
    char head[128];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 200 OK\r\nContent-Encoding: %s\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "%zx\r\n",
                     names[r->in->flags & 3], r->in->len);
    size_t used;
    int rc = hm_http_resp_feed(&p, head, (size_t)n, &used);
    if (rc == HM_HTTP_NEED_MORE && r->in->len)
        rc = hm_http_resp_feed(&p, (const char *)r->in->data, r->in->len, &used);
    if (rc == HM_HTTP_NEED_MORE) rc = hm_http_resp_feed(&p, "\r\n0\r\n\r\n", 7, &used);
    if (rc == HM_HTTP_DONE) HM_FUZZ_CHECK(p.body_len <= lim.max_body_bytes);
    if (rc < 0) HM_FUZZ_CHECK(hm_http_resp_error_reason(&p) != NULL);
    hm_http_resp_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hm_fuzz_input in;
    hm_fuzz_input_init(&in, data, size);
    static const hm_coding codings[] = {HM_CODING_BR, HM_CODING_GZIP, HM_CODING_DEFLATE,
                                        HM_CODING_BR};
    run whole = {.in = &in, .coding = codings[in.flags & 3]};
    run pieces = whole;
    pieces.split = true;
    hm_fuzz_on_coro_stack(decode, &whole);
    hm_fuzz_on_coro_stack(decode, &pieces);
    HM_FUZZ_CHECK((whole.rc == 0) == (pieces.rc == 0));
    if (whole.rc == 0) {
        hm_fuzz_log_same(&whole.log, &pieces.log, "decoded whole vs in pieces");
    } else {
        size_t n = whole.log.len < pieces.log.len ? whole.log.len : pieces.log.len;
        HM_FUZZ_CHECK(n == 0 || memcmp(whole.log.data, pieces.log.data, n) == 0);
    }
    hm_fuzz_on_coro_stack(decode_bounded, &whole);
    hm_fuzz_on_coro_stack(through_parser, &whole);
    hm_fuzz_log_free(&whole.log);
    hm_fuzz_log_free(&pieces.log);
    hm_fuzz_input_free(&in);
    return 0;
}
