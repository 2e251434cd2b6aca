/* content_coding.h — HTTP content codings (Content-Encoding) decoded
 * incrementally: gzip and deflate through zlib, br through libbrotlidec.
 *
 * A decoder takes a response body as it arrives, in pieces of any size,
 * and hands the decoded bytes to a callback as soon as the coding lets it
 * (a Brotli stream flushed per event decodes each event with its chunk).
 * It is a pure codec: bytes in, bytes out, no I/O.
 *
 * zstd is not decoded (and hammer does not offer it): none of hammer's
 * dependencies decodes it, and php-via compresses with Brotli only.
 *
 * Bounds: one feed hands out at most max_out decoded bytes; more is
 * -HM_ETOOBIG, so a few wire bytes that expand without end (a
 * decompression bomb) stop there. Whoever buffers the output bounds the
 * total itself (the HTTP parser's body limit, the SSE parser's event limit).
 *
 * Errors: corrupt or truncated data, bytes after the end of the coded
 * stream, an unknown coding: -HM_EPROTO_HTTP (-HM_ETOOBIG for the bound,
 * -ENOMEM), with the reason in d->why; an error is sticky until the next
 * start.
 *
 * Memory: the caller owns the hm_content_decoder struct (embed it, zeroed).
 * hm_content_decoder_start allocates the coding's state (zlib's, with a
 * 16 KiB output window, or Brotli's, whose window the server's stream
 * chooses: up to 16 MiB, php-via's 4 MiB) through hm_alloc;
 * hm_content_decoder_free releases it, and start frees a previous state
 * first. Decoded bytes handed to the callback are valid only during the
 * call. Not thread-safe: one decoder per response. */
#ifndef HM_PROTO_CONTENT_CODING_H
#define HM_PROTO_CONTENT_CODING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum hm_coding {
    HM_CODING_IDENTITY = 0, /* no coding (or "identity") */
    HM_CODING_GZIP,         /* gzip, x-gzip: RFC 1952, several members allowed */
    HM_CODING_DEFLATE,      /* deflate: zlib (RFC 1950), or raw deflate as servers send it */
    HM_CODING_BR,           /* br: RFC 7932 */
} hm_coding;

/* What hammer sends as Accept-Encoding when it asks for compression:
 * Chromium's default without zstd (see above). */
#define HM_ACCEPT_ENCODING "gzip, deflate, br"

/* "gzip", "deflate", "br", "identity". */
const char *hm_coding_name(hm_coding c);

/* Parses a Content-Encoding value (case-insensitive, surrounding spaces
 * ignored; "identity" entries skipped). 0 with *out set, or -ENOTSUP when
 * it names a coding hammer does not decode or more than one coding. */
int hm_coding_parse(const char *value, size_t len, hm_coding *out);

typedef struct hm_content_decoder {
    hm_coding coding;
    uint64_t in_bytes;  /* coded bytes fed since start */
    uint64_t out_bytes; /* decoded bytes handed out since start */
    char why[128];      /* the last error, in words ("" while healthy) */
    /* private */
    void *z_;                /* z_stream (gzip, deflate) */
    void *br_;               /* BrotliDecoderState */
    unsigned char *win_;     /* zlib's output window */
    unsigned char sniff_[2]; /* deflate: the first bytes, to tell zlib from raw */
    uint8_t sniff_len_;
    bool ended_; /* the coded stream is complete */
    int err_;    /* sticky error, 0 while healthy */
} hm_content_decoder;

/* Receives decoded bytes; return 0 to go on or a negative error, which the
 * feed returns. */
typedef int (*hm_decoded_fn)(void *user, const char *p, size_t n);

/* Prepares d for one coded body (IDENTITY: no state). 0 or -ENOMEM. */
int hm_content_decoder_start(hm_content_decoder *d, hm_coding c);
/* Decodes in[0, n) and hands out what it yields, at most max_out bytes
 * (0: no bound). 0, or a negative error (see above) or the callback's. */
int hm_content_decoder_feed(hm_content_decoder *d, const char *in, size_t n, size_t max_out,
                            hm_decoded_fn fn, void *user);
/* The body ended: 0 when the coded stream is complete (or no byte came at
 * all: a HEAD, 204 or empty body), else -HM_EPROTO_HTTP (truncated). */
int hm_content_decoder_end(hm_content_decoder *d);
/* Releases the coding's state; d may be started again. */
void hm_content_decoder_free(hm_content_decoder *d);

#endif
