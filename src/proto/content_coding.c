/* content_coding.c — incremental gzip/deflate (zlib) and br (libbrotlidec)
 * decoding of HTTP bodies (content_coding.h). */
#include "proto/content_coding.h"

#include "base/hm_base.h"

#include <brotli/decode.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#define ZWIN (16 * 1024)

const char *hm_coding_name(hm_coding c)
{
    switch (c) {
    case HM_CODING_GZIP:
        return "gzip";
    case HM_CODING_DEFLATE:
        return "deflate";
    case HM_CODING_BR:
        return "br";
    default:
        return "identity";
    }
}

static bool token_is(const char *s, size_t n, const char *name)
{
    return strlen(name) == n && strncasecmp(s, name, n) == 0;
}

int hm_coding_parse(const char *value, size_t len, hm_coding *out)
{
    *out = HM_CODING_IDENTITY;
    bool seen = false;
    size_t i = 0;
    while (i < len) {
        size_t start = i;
        while (i < len && value[i] != ',')
            i++;
        size_t end = i++;
        while (start < end && (value[start] == ' ' || value[start] == '\t'))
            start++;
        while (end > start && (value[end - 1] == ' ' || value[end - 1] == '\t'))
            end--;
        const char *t = value + start;
        size_t n = end - start;
        hm_coding c;
        if (n == 0 || token_is(t, n, "identity"))
            continue;
        else if (token_is(t, n, "gzip") || token_is(t, n, "x-gzip"))
            c = HM_CODING_GZIP;
        else if (token_is(t, n, "deflate"))
            c = HM_CODING_DEFLATE;
        else if (token_is(t, n, "br"))
            c = HM_CODING_BR;
        else
            return -ENOTSUP;
        if (seen) return -ENOTSUP; /* stacked codings: no browser peer sends them */
        seen = true;
        *out = c;
    }
    return 0;
}

/* ---- allocation through hm_alloc (mimalloc), for both libraries ---- */

static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    return hm_calloc(items, size);
}

static void z_free(voidpf opaque, voidpf p)
{
    (void)opaque;
    hm_free(p);
}

static void *br_alloc(void *opaque, size_t size)
{
    (void)opaque;
    return hm_alloc(size);
}

static void br_free(void *opaque, void *p)
{
    (void)opaque;
    hm_free(p);
}

/* ---- the decoder ---- */

void hm_content_decoder_free(hm_content_decoder *d)
{
    if (d->z_) {
        inflateEnd(d->z_);
        hm_free(d->z_);
    }
    if (d->br_) BrotliDecoderDestroyInstance(d->br_);
    hm_free(d->win_);
    d->z_ = d->br_ = NULL;
    d->win_ = NULL;
}

int hm_content_decoder_start(hm_content_decoder *d, hm_coding c)
{
    hm_content_decoder_free(d);
    memset(d, 0, sizeof(*d));
    d->coding = c;
    if (c == HM_CODING_BR) {
        d->br_ = BrotliDecoderCreateInstance(br_alloc, br_free, NULL);
        return d->br_ ? 0 : -ENOMEM;
    }
    if (c == HM_CODING_GZIP || c == HM_CODING_DEFLATE) {
        z_stream *z = hm_calloc(1, sizeof(*z));
        d->win_ = hm_alloc(ZWIN);
        if (!z || !d->win_) {
            hm_free(z);
            hm_content_decoder_free(d);
            return -ENOMEM;
        }
        z->zalloc = z_alloc;
        z->zfree = z_free;
        /* deflate chooses zlib or raw framing at its first two bytes. */
        if (c == HM_CODING_GZIP && inflateInit2(z, 15 + 16) != Z_OK) {
            hm_free(z);
            hm_content_decoder_free(d);
            return -ENOMEM;
        }
        d->z_ = z;
    }
    return 0;
}

static int fail(hm_content_decoder *d, int err, const char *fmt, const char *what)
{
    snprintf(d->why, sizeof(d->why), fmt, hm_coding_name(d->coding), what ? what : "");
    d->err_ = err;
    return err;
}

/* Hands n decoded bytes to fn, within the feed's bound. */
static int emit(hm_content_decoder *d, const void *p, size_t n, size_t *budget, hm_decoded_fn fn,
                void *user)
{
    if (n == 0) return 0;
    if (*budget < n)
        return fail(d, -HM_ETOOBIG, "%s body expands past the limit of one read%s", NULL);
    *budget -= n;
    d->out_bytes += n;
    int rc = fn(user, p, n);
    if (rc < 0) d->err_ = rc;
    return rc;
}

/* deflate's framing: a zlib header (RFC 1950) is CM 8, a window of at most
 * 32 KiB and a check that makes the first two bytes a multiple of 31;
 * anything else is raw deflate, as some servers send it (browsers accept
 * both). */
static int deflate_init(hm_content_decoder *d)
{
    const unsigned char *h = d->sniff_;
    bool zlib = (h[0] & 0x0f) == 8 && (h[0] >> 4) <= 7 && ((h[0] << 8) | h[1]) % 31 == 0;
    if (inflateInit2((z_stream *)d->z_, zlib ? 15 : -15) != Z_OK)
        return fail(d, -ENOMEM, "%s: out of memory%s", NULL);
    d->sniff_len_ = 3; /* initialised */
    return 0;
}

static int zlib_run(hm_content_decoder *d, const unsigned char *in, size_t n, size_t *budget,
                    hm_decoded_fn fn, void *user)
{
    z_stream *z = d->z_;
    z->next_in = (Bytef *)(uintptr_t)in;
    z->avail_in = (uInt)n;
    for (;;) {
        if (d->ended_) {
            if (z->avail_in == 0) return 0;
            /* gzip allows several members back to back; anything else after
             * the end is not part of the body. */
            if (d->coding != HM_CODING_GZIP || z->next_in[0] != 0x1f)
                return fail(d, -HM_EPROTO_HTTP, "bytes after the end of the %s body%s", NULL);
            inflateReset(z);
            d->ended_ = false;
        }
        z->next_out = d->win_;
        z->avail_out = ZWIN;
        int zr = inflate(z, Z_SYNC_FLUSH);
        int rc = emit(d, d->win_, ZWIN - z->avail_out, budget, fn, user);
        if (rc < 0) return rc;
        if (zr == Z_STREAM_END) {
            d->ended_ = true;
            continue;
        }
        if (zr == Z_BUF_ERROR) return 0; /* no progress possible: needs more input */
        if (zr == Z_NEED_DICT)
            return fail(d, -HM_EPROTO_HTTP, "%s body needs a preset dictionary%s", NULL);
        if (zr != Z_OK) return fail(d, -HM_EPROTO_HTTP, "corrupt %s body: %s", z->msg);
        if (z->avail_in == 0 && z->avail_out != 0) return 0;
    }
}

static int brotli_run(hm_content_decoder *d, const unsigned char *in, size_t n, size_t *budget,
                      hm_decoded_fn fn, void *user)
{
    BrotliDecoderState *s = d->br_;
    size_t avail_in = n;
    const uint8_t *next_in = in;
    for (;;) {
        if (d->ended_)
            return avail_in ? fail(d, -HM_EPROTO_HTTP, "bytes after the end of the %s body%s", NULL)
                            : 0;
        size_t avail_out = 0;
        BrotliDecoderResult r =
            BrotliDecoderDecompressStream(s, &avail_in, &next_in, &avail_out, NULL, NULL);
        /* With no output buffer of ours, the decoder lends its window. */
        while (BrotliDecoderHasMoreOutput(s)) {
            size_t got = 0;
            const uint8_t *p = BrotliDecoderTakeOutput(s, &got);
            int rc = emit(d, p, got, budget, fn, user);
            if (rc < 0) return rc;
        }
        switch (r) {
        case BROTLI_DECODER_RESULT_SUCCESS:
            d->ended_ = true;
            break;
        case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
            return 0;
        case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
            break;
        default: {
            const char *e = BrotliDecoderErrorString(BrotliDecoderGetErrorCode(s));
            return fail(d, -HM_EPROTO_HTTP, "corrupt %s body: %s", e);
        }
        }
    }
}

int hm_content_decoder_feed(hm_content_decoder *d, const char *in, size_t n, size_t max_out,
                            hm_decoded_fn fn, void *user)
{
    if (d->err_) return d->err_;
    if (n == 0) return 0;
    size_t budget = max_out ? max_out : SIZE_MAX;
    const unsigned char *u = (const unsigned char *)in;
    d->in_bytes += n;
    switch (d->coding) {
    case HM_CODING_IDENTITY:
        return emit(d, in, n, &budget, fn, user);
    case HM_CODING_BR:
        return brotli_run(d, u, n, &budget, fn, user);
    case HM_CODING_GZIP:
        return zlib_run(d, u, n, &budget, fn, user);
    case HM_CODING_DEFLATE:
        if (d->sniff_len_ < 2) {
            /* Keep the first bytes until the framing is known. */
            while (d->sniff_len_ < 2 && n > 0) {
                d->sniff_[d->sniff_len_++] = *u++;
                n--;
            }
            if (d->sniff_len_ < 2) return 0;
            int rc = deflate_init(d);
            if (rc == 0) rc = zlib_run(d, d->sniff_, 2, &budget, fn, user);
            if (rc < 0 || n == 0) return rc;
        }
        return zlib_run(d, u, n, &budget, fn, user);
    }
    return 0;
}

int hm_content_decoder_end(hm_content_decoder *d)
{
    if (d->err_) return d->err_;
    if (d->coding == HM_CODING_IDENTITY || d->in_bytes == 0 || d->ended_) return 0;
    return fail(d, -HM_EPROTO_HTTP, "%s body ended before its coded stream did (truncated)%s",
                NULL);
}
