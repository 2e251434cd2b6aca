/* http1.h — HTTP/1.1 message codec over llhttp, with no I/O.
 *
 * Parsers: hm_http_resp_parser (client side) and hm_http_req_parser (server
 * side) are push parsers. The caller reads bytes from its transport into its
 * own buffer and feeds them; a feed reports HM_HTTP_NEED_MORE (every byte was
 * taken, the caller may drop them), HM_HTTP_DONE (one message is complete and
 * *consumed says how many bytes belonged to it: the rest, e.g. a pipelined
 * next message, stays in the caller's buffer and is fed again later), or a
 * negative error (-HM_EPROTO_HTTP, -HM_ETOOBIG, -ENOMEM, or a callback's
 * value), which is sticky until hm_http_resp_begin / hm_http_req_reset. All HTTP syntax is
 * llhttp's; this module only collects what hammer needs. Results never point
 * into the caller's buffer, except the spans handed to a streaming body
 * callback, valid only during that call.
 *
 * Memory: the caller owns the parser struct; the parser owns its buffers
 * (header arena, body buffer, small index arrays, and from the first coded
 * body on a content decoder), allocated with hm_realloc,
 * grown geometrically and reused for every later message, so a connection in
 * steady state allocates nothing per message (unless its owner releases
 * them between messages: hm_http_resp_release). Every string a parser exposes
 * is NUL-terminated (lengths are still authoritative) and stays valid until
 * the next begin/feed/reset after DONE, or free. *_free() releases the
 * buffers. Not thread-safe: one parser per connection.
 *
 * Serializers write into a caller-supplied buffer, allocate nothing, and
 * return the length written or -ENOSPC (nothing usable written) or -EINVAL
 * (a CR, LF or, in the request target, a space that would split the message).
 */
#ifndef HM_PROTO_HTTP1_H
#define HM_PROTO_HTTP1_H

#include "base/hm_buf.h"
#include "proto/content_coding.h"

#include <llhttp.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* hm_http_*_feed/finish results besides negative errors. */
enum {
    HM_HTTP_NEED_MORE = 0, /* all input taken; the message is not complete yet */
    HM_HTTP_DONE = 1,      /* one message complete; see *consumed */
};

#define HM_HTTP_DEFAULT_MAX_HEADER_BYTES ((size_t)64 << 10)
#define HM_HTTP_DEFAULT_MAX_BODY_BYTES ((size_t)8 << 20)
/* Informational (1xx) responses accepted before the final one; one more is
 * -HM_EPROTO_HTTP, so a server that sends them forever is an error. */
#define HM_HTTP_MAX_INTERIM 16

/* Size limits of one message. A zero field means the default. The header
 * count is the status text or request target plus every field name and
 * value, with 4 bytes per header line for ": " and CRLF (trailers count too). */
typedef struct hm_http_limits {
    size_t max_header_bytes; /* over it: -HM_ETOOBIG; default 64 KiB */
    size_t max_body_bytes;   /* buffered body over it: -HM_ETOOBIG; default 8 MiB */
} hm_http_limits;

/* A view of a string owned by a parser; ptr is NULL (len 0) when absent,
 * otherwise NUL-terminated. */
typedef struct hm_http_str {
    const char *ptr;
    size_t len;
} hm_http_str;

/* One header for the serializers: NUL-terminated name and value. */
typedef struct hm_http_header {
    const char *name;
    const char *value;
} hm_http_header;

/* Private: one stored header as offsets into the arena, which may move while
 * it grows during the header section. */
typedef struct hm_http_hdr_ {
    uint32_t name_off, name_len, val_off, val_len;
    int id;
} hm_http_hdr_;

/* Private: the state both parsers share. */
typedef struct hm_http_core_ {
    llhttp_t llh;
    hm_http_limits lim;
    hm_buf arena;       /* start-line target, header names/values, each NUL-ended */
    hm_buf body;        /* buffered body, NUL-ended */
    hm_http_hdr_ *hdrs; /* stored headers, in arrival order */
    size_t n_hdrs, hdrs_cap;
    size_t head_bytes;    /* counted against lim.max_header_bytes */
    const char *reason;   /* why err, when it is ours rather than llhttp's */
    uint8_t state;        /* fresh / partial / done / failed */
    bool store_all;       /* request parser: keep every header, names too */
    bool msg_begun;       /* a final (non-1xx) message has started */
    bool in_headers_done; /* past the header section: further fields are trailers */
    bool in_field;        /* a header name is being accumulated */
    bool cur_store;       /* the current header's value is being stored */
    bool name_long;       /* current name outgrew name[] and matches nothing */
    bool in_finish;       /* on_message_complete runs inside llhttp_finish */
    bool done;            /* on_message_complete has run for a final message */
    bool pushed;          /* the message came through the push functions, not llhttp */
    uint16_t interim;     /* 1xx responses since hm_http_resp_begin */
    int err;              /* sticky negative error, 0 while healthy */
    int cur_id;           /* id of the current header, 0 when uninteresting */
    uint32_t cur_name_off, cur_name_len, cur_val_off;
    uint8_t name_len;
    /* response parser: the current name, only as long as it can match (the
     * longest matched name has 16 bytes; 23 ends the record on a word) */
    char name[23];
} hm_http_core_;

struct hm_http_resp_parser;

/* Streaming body callback: receives body bytes (chunked framing removed) as
 * they arrive; at points into the caller's feed buffer and is valid only
 * during the call. Return 0 to go on, or a negative error that the feed
 * returns. Must not call into the same parser except to read results. */
typedef int (*hm_http_body_fn)(void *user, const char *at, size_t len);

/* Called once per final (non-1xx) response when its headers are complete,
 * before any body byte. May call hm_http_resp_set_callbacks() to pick the body
 * mode for this response. Return 0 to go on, or a negative error. */
typedef int (*hm_http_resp_headers_fn)(void *user, struct hm_http_resp_parser *p);

/* Response parser. Public fields: status line, framing and headers are valid
 * from headers-complete (the on_headers callback) on; keep_alive, upgrade and
 * body are final at DONE. Fields ending in _ are private. */
typedef struct hm_http_resp_parser {
    int status; /* e.g. 200; never 1xx except 101 */
    uint8_t http_major, http_minor;
    bool keep_alive;         /* llhttp_should_keep_alive: connection reusable */
    bool upgrade;            /* 101 upgrade: bytes after *consumed are not HTTP */
    bool chunked;            /* Transfer-Encoding: chunked */
    bool has_content_length; /* a Content-Length header was present */
    /* (the small private fields sit here too: a browser VU holds two of
     * these, and its record's size decides its allocator bin) */
    bool decode_;            /* hm_http_resp_set_decoding */
    bool head_;              /* the current request was HEAD: no body follows */
    hm_coding coding;        /* the body's Content-Encoding, when decoding is on (else identity) */
    uint64_t content_length; /* its value (also for HEAD, where no body follows) */
    struct {                 /* first occurrence of each; ptr NULL if absent */
        hm_http_str content_type, location, x_via_worker, connection, content_encoding;
    } hdr;
    /* Every Set-Cookie value, in order (the parser's storage, room for
     * set_cookie_cap_; NULL before the first). */
    hm_http_str *set_cookie;
    uint32_t n_set_cookie, set_cookie_cap_;
    const char *body; /* buffered mode: the whole body, NUL-terminated ("" if none) */
    size_t body_len;
    /* Body bytes of coded (compressed) responses as they arrived and as
     * they decoded, added up until whoever accounts for them zeroes them. */
    uint64_t coded_in, decoded_out;

    hm_http_core_ c_;
    hm_content_decoder *dec_; /* from the first coded body on (most responses have none) */
    hm_http_resp_headers_fn on_headers_;
    hm_http_body_fn on_body_;
    void *user_;
} hm_http_resp_parser;

/* Request parser. Public fields are valid from headers-complete on (the body
 * and keep_alive final at DONE). Fields ending in _ are private. */
typedef struct hm_http_req_parser {
    int method;              /* llhttp_method_t, e.g. HTTP_GET */
    const char *method_name; /* static, e.g. "GET" */
    uint8_t http_major, http_minor;
    bool keep_alive; /* the connection may serve another request */
    bool upgrade;    /* Upgrade/CONNECT: bytes after *consumed are not HTTP */
    bool chunked;
    bool has_content_length;
    uint64_t content_length;
    hm_http_str target; /* request target as sent, e.g. "/a/b?x=1" */
    hm_http_str path;   /* target up to '?' or '#' */
    hm_http_str query;  /* after '?' up to '#' (without '?'); ptr NULL when no '?' */
    struct {            /* first occurrence of each; ptr NULL if absent */
        hm_http_str host, cookie, origin, content_type, connection, datastar_request, accept,
            upgrade;
    } hdr;
    const char *body; /* the whole body, NUL-terminated ("" if none) */
    size_t body_len;

    hm_http_core_ c_;
    uint32_t path_off_, path_len_, query_off_, query_len_;
    bool has_query_;
} hm_http_req_parser;

/* ---- response parser ---- */

/* Prepares p (lim NULL = defaults); allocates nothing and cannot fail. */
void hm_http_resp_init(hm_http_resp_parser *p, const hm_http_limits *lim);

/* Starts waiting for the response to the next request; head_request says it
 * was a HEAD (no body follows whatever the headers say). Clears the previous
 * results and any error; continues the same llhttp stream after a keep-alive
 * DONE, otherwise restarts llhttp as for a new connection. */
void hm_http_resp_begin(hm_http_resp_parser *p, bool head_request);

/* Selects the body mode and callbacks for the coming responses, until changed:
 * on_body NULL = buffered (p->body, limited by max_body_bytes), else streaming
 * (unlimited; p->body stays empty). Either callback may be NULL. */
/* Lean: the coming responses keep no headers (hdr, set_cookie stay empty;
 * status, framing, keep_alive and the body as before, the header section
 * still limited), which saves matching and storing each one. */
void hm_http_resp_set_lean(hm_http_resp_parser *p, bool lean);

void hm_http_resp_set_callbacks(hm_http_resp_parser *p, hm_http_resp_headers_fn on_headers,
                                hm_http_body_fn on_body, void *user);

/* Decoding on: a body with a Content-Encoding of gzip, deflate or br is
 * decoded as it arrives (content_coding.h), and the buffer or the body
 * callback gets the decoded bytes; the body limit applies to them, and so
 * does it to what one feed decodes to in streaming mode (a decompression
 * bomb fails with -HM_ETOOBIG). A coding hammer does not decode, a corrupt
 * or truncated coded body: -HM_EPROTO_HTTP with the reason. Off (the
 * default): bodies pass as they came. Stays until changed. */
void hm_http_resp_set_decoding(hm_http_resp_parser *p, bool on);

/* After a complete response: the connection may carry the next request.
 * Not when the server closes it, nor after a 101, which hands it to
 * another protocol. */
static inline bool hm_http_resp_reusable(const hm_http_resp_parser *p)
{
    return p->keep_alive && !p->upgrade && p->status != 101;
}

/* Feeds len bytes. Returns HM_HTTP_NEED_MORE (*consumed = len), HM_HTTP_DONE
 * (*consumed = bytes of this response; 1xx responses before it are skipped
 * and counted in, up to HM_HTTP_MAX_INTERIM of them) or a negative error. A feed after a keep-alive
 * DONE without begin first does begin(p, false); after a DONE that ended the connection (not
 * keep-alive, upgrade) it is -HM_EPROTO_HTTP: call begin first. */
int hm_http_resp_feed(hm_http_resp_parser *p, const char *data, size_t len, size_t *consumed);

/* The peer closed. Returns HM_HTTP_DONE if that completes a close-delimited
 * body (keep_alive is then false), -HM_ECLOSED if the response is incomplete
 * or never started, or the sticky error. */
int hm_http_resp_finish(hm_http_resp_parser *p);

/* Why the parser failed (llhttp's reason or ours); NULL while healthy. */
const char *hm_http_resp_error_reason(const hm_http_resp_parser *p);

/* A response that arrives as fields rather than bytes (HTTP/2: nghttp2
 * decodes the frames) fills the same results through these, in order,
 * after hm_http_resp_begin: push_field for each field of the head,
 * push_head once they are complete, push_body for each piece of body,
 * push_end at its end. The same limits (header bytes counted as HTTP/1.1
 * counts them), the same callbacks (on_headers runs in push_head,
 * on_body in push_body), the same results; keep_alive is true (the stream
 * ends, not the connection). Each returns 0 (push_end HM_HTTP_DONE) or a
 * negative error, sticky as a feed's: -HM_ETOOBIG, -HM_EPROTO_HTTP (bad
 * status or content-length, a push out of order), -ENOMEM, or a
 * callback's value. An informational (1xx) head drops its fields and the
 * next head follows. A parser is either fed bytes or pushed fields for the
 * life of its connection, not both. */
int hm_http_resp_push_field(hm_http_resp_parser *p, const char *name, size_t nlen,
                            const char *value, size_t vlen);
int hm_http_resp_push_head(hm_http_resp_parser *p, int status, uint8_t http_major);
int hm_http_resp_push_body(hm_http_resp_parser *p, const char *data, size_t len);
int hm_http_resp_push_end(hm_http_resp_parser *p);

/* Releases the buffers of the response p holds, keeping the connection's
 * parse state: hdr, set_cookie and body become empty, status and framing
 * stay, and the next response on the connection parses as it would have,
 * growing the buffers again. For an owner that reads a response once and
 * then idles (a browser VU thinking), so it holds no body or headers
 * meanwhile. Not while a message is being parsed: after DONE, a failure,
 * or before any. */
void hm_http_resp_release(hm_http_resp_parser *p);

/* Frees the response's head (the hdr strings, the Set-Cookie list, the
 * header arena and index) while its body goes on: for a body read as it
 * comes whose headers were read in on_headers (an SSE stream that stays
 * open for minutes), called from on_headers or later. Status and framing
 * stay. */
void hm_http_resp_drop_head(hm_http_resp_parser *p);

/* Releases p's buffers (hm_http_resp_release) and clears its results; p
 * may be initialised again afterwards. */
void hm_http_resp_free(hm_http_resp_parser *p);

/* ---- request parser ---- */

/* Prepares p for a new connection (lim NULL = defaults); allocates nothing. */
void hm_http_req_init(hm_http_req_parser *p, const hm_http_limits *lim);

/* Feeds len bytes. Returns HM_HTTP_NEED_MORE (*consumed = len), HM_HTTP_DONE
 * (*consumed = bytes of this request) or a negative error; a feed after DONE
 * starts the next request on the same connection (after a non-keep-alive or
 * upgrade request, any further bytes are -HM_EPROTO_HTTP). */
int hm_http_req_feed(hm_http_req_parser *p, const char *data, size_t len, size_t *consumed);

/* Value of the first header named name (case-insensitive) of the current
 * request, NUL-terminated, or NULL. Valid from headers-complete on. */
const char *hm_http_req_header(const hm_http_req_parser *p, const char *name);

/* Number of headers of the current request (trailers not included). */
size_t hm_http_req_header_count(const hm_http_req_parser *p);

/* The i-th header in arrival order; returns 0 or -ERANGE. */
int hm_http_req_header_at(const hm_http_req_parser *p, size_t i, hm_http_str *name,
                          hm_http_str *value);

/* Why the parser failed (llhttp's reason or ours); NULL while healthy. */
const char *hm_http_req_error_reason(const hm_http_req_parser *p);

/* Forgets the connection's state (for reuse on a new connection); keeps buffers. */
void hm_http_req_reset(hm_http_req_parser *p);

/* Releases p's buffers; p may be initialised again afterwards. */
void hm_http_req_free(hm_http_req_parser *p);

/* ---- serializers ---- */

/* content_length values of hm_http_write_response_head without a length. */
#define HM_HTTP_LEN_CHUNKED (-1LL) /* Transfer-Encoding: chunked */
#define HM_HTTP_LEN_NONE (-2LL)    /* no framing header (no body, or close-delimited) */

/* "METHOD target HTTP/1.1", Host (omitted if host_header is NULL), extra, then
 * Content-Length when body is non-NULL or non-empty or the method is POST,
 * PUT or PATCH (unless extra already has Content-Length or
 * Transfer-Encoding), the blank line and the body. No Connection header:
 * keep-alive. Returns the length, -ENOSPC or -EINVAL. */
ssize_t hm_http_write_request(char *buf, size_t cap, const char *method, const char *path_and_query,
                              const char *host_header, const hm_http_header *extra, size_t n_extra,
                              const char *body, size_t body_len);

/* "HTTP/1.1 status reason" (reason NULL = hm_http_reason(status)), headers,
 * Content-Length (content_length >= 0) or Transfer-Encoding: chunked
 * (HM_HTTP_LEN_CHUNKED) or neither (HM_HTTP_LEN_NONE), "Connection: close"
 * when !keep_alive, and the blank line. Returns the length, -ENOSPC or -EINVAL. */
ssize_t hm_http_write_response_head(char *buf, size_t cap, int status, const char *reason,
                                    const hm_http_header *headers, size_t n,
                                    long long content_length, bool keep_alive);

/* One chunk: hex size, CRLF, data, CRLF. len 0 writes nothing (returns 0), since
 * an empty chunk would end the body. Returns the length or -ENOSPC. */
ssize_t hm_http_write_chunk(char *buf, size_t cap, const char *data, size_t len);

/* Just the chunk-size line ("1a\r\n") of a len-byte chunk, for callers that
 * send the data from elsewhere and then "\r\n". Returns the length or -ENOSPC. */
ssize_t hm_http_write_chunk_head(char *buf, size_t cap, size_t len);

/* The last chunk with no trailers: "0\r\n\r\n". Returns 5 or -ENOSPC. */
ssize_t hm_http_write_last_chunk(char *buf, size_t cap);

/* Standard reason phrase of a status code; "Unknown" when not a common one. */
const char *hm_http_reason(int status);

#endif
