/* h2_internal.h — what the HTTP/2 client's files share: h2_client.c
 * (a connection's life: deadlines, the reader and writer coroutines,
 * nghttp2's callbacks, connecting), h2_streams.c (requests as streams,
 * and the public calls of h2_client.h) and h2_errors.c (a server's
 * protocol errors in words). No other file includes it; the
 * functions below are prefixed h2l_ because they are the link layer's. */
#ifndef HM_H2_INTERNAL_H
#define HM_H2_INTERNAL_H

#include "proto/h2_client.h"

#include "base/hm_dlist.h"
#include "proto/h2.h"

/* The read buffer starts small, as http_client.c's does: a browser VU's
 * connection idles on its SSE stream for most of its life, and keeps the
 * buffer all along. A read that fills it makes it grow. */
#define RBUF_MIN 2048
#define RBUF_MAX (64 * 1024)
#define OBUF_MAX ((size_t)64 << 10) /* frames taken ahead of the socket */
/* A connection idle this long is checked for the server's close before a
 * stream goes on it (as http_client.c does before reusing one). */
#define IDLE_CHECK_NS (10LL * 1000 * 1000)
/* What Chromium announces: a stream window of 6 MiB, a connection window
 * of 15 MiB, no push, a 64 KiB header table. */
#define STREAM_WINDOW (6 * 1024 * 1024)
#define CONN_WINDOW (15 * 1024 * 1024)
#define HEADER_TABLE 65536
/* The response header list hammer takes (SETTINGS_MAX_HEADER_LIST_SIZE,
 * announced), as the parser's default limit: a header block whose frames
 * carry more bytes is over it (HPACK's literals are never larger than
 * the list), and so is one whose fields, decoded, come to more (an entry
 * of the table referenced again and again); its stream fails before the
 * block ends. */
#define HEADER_LIST_MAX (64 * 1024)

typedef struct h2_link h2_link;

struct hm_h2_conn {
    const hm_http_target *target;
    h2_link *link;  /* the current connection, NULL: connect on next use */
    h2_link *links; /* every link not yet freed (current and draining) */
    /* The TLS state the links use in turn, kept for resumption; tls_user
     * is the link using it (a second link meanwhile gets one of its own). */
    hm_tls *tls;
    h2_link *tls_user;
    bool connecting; /* a stream is making the next link; others wait */
    hm_waitgroup connect_wg;
    uint64_t connect_gen; /* connect attempts finished */
    int connect_err;      /* the last attempt's result */
    hm_fail_kind connect_fail;
    char connect_why[160];
    uint64_t connects;
    /* Started streams (hm_h2_conn_start) that are done, in the order they
     * finished, for the dispatcher; done_kick wakes it. */
    hm_h2_stream *done_head, *done_tail;
    hm_chan *done_kick;
    /* Streams that report through a done callback (hm_h2_conn_start):
     * those not yet on a link, in the order they were started, and the
     * coroutine that submits them (connecting when needed), finishes the
     * done ones and calls their callbacks; dconn is its own conn for the
     * connect (credited to the first stream waiting for it). freeing: the
     * handle was freed while the dispatcher ran; it frees it on leaving. */
    hm_h2_stream *pend_head, *pend_tail;
    hm_coro *dispatcher;
    hm_http_conn dconn;
    bool dconn_ready, freeing;
};

struct h2_link {
    hm_h2_conn *home; /* the handle, until it is freed */
    h2_link *hnext, *hprev;
    const hm_http_target *target;
    hm_sock *sock;
    hm_tls *tls;
    bool tls_own; /* its own TLS state, not the handle's */
    nghttp2_session *ng;
    hm_coro *reader, *writer;
    hm_chan *kick; /* wakes the writer */
    hm_buf obuf, wbuf;
    char *rbuf;
    size_t rcap;
    int refs;
    bool dead;            /* failed or ended: no stream goes on it, its coroutines leave */
    bool goaway;          /* the server takes no new streams */
    bool current;         /* the handle's link (holds the handle's reference) */
    bool spoke;           /* the server's SETTINGS arrived: it speaks HTTP/2 */
    uint32_t goaway_code; /* the error code of the server's GOAWAY */
    int64_t last_used_ns;
    hm_h2_stream *streams; /* in flight */
    int32_t cache_id;      /* stream_of_frame's last look-up (0: none) */
    hm_h2_stream *cache_s;
    /* What showed a protocol error of the server's, for the report: the
     * frame header last begun, the one nghttp2 found invalid (bad_lib, an
     * NGHTTP2_ERR_*, nonzero then), nghttp2's words for it (its error
     * callback, or the debug data of the GOAWAY it answered with) and that
     * GOAWAY's code (0: none sent over an error). */
    nghttp2_frame_hd last_hd, bad_hd;
    int bad_lib;
    uint32_t sent_goaway_code;
    char bad_msg[96];
    uint64_t read_total; /* every byte read: what answered, however badly */
    /* HTTP/2 bytes (after TLS) read and written since a stream last took
     * them: each stream leaving the link takes them into its conn, so the
     * conns' counts add up to the connection's. */
    uint64_t bytes_read, bytes_written;
};

/* Forgets stream_of_frame's last look-up, whose stream may be freed next:
 * the pointer too, since a frame on stream 0 (HEADERS there is a
 * protocol error, but its frame header is seen first) matches the id 0
 * that means "none". */
static inline void h2l_cache_forget(h2_link *L)
{
    L->cache_id = 0;
    L->cache_s = NULL;
}

struct hm_h2_stream {
    hm_http_conn *c;
    h2_link *link; /* while in flight */
    hm_h2_stream *prev, *next;
    int32_t id;
    hm_chan *wake;
    bool done, got_head, refused, streaming;
    bool expired; /* its deadline passed (the sweeper failed it) */
    /* Started by hm_h2_conn_start: when done it goes on its handle's done list
     * (nobody waits on wake); the exchange's options, kept for a re-send. */
    bool async, on_done, retried, idempotent, head;
    bool status_only; /* hm_http_xopts.status_only: fields are not passed on */
    int64_t xdeadline, budget;
    hm_h2_stream *done_next;
    /* hm_h2_conn_start: its done callback, whether it is waiting for it
     * (cb_busy), queued for the dispatcher (pending), a failure found at
     * the start for it to report, and the request bytes last parsed (a
     * request that outlives the loop is not compared again). */
    hm_http_done_fn done_fn;
    void *done_user;
    bool cb_busy, pending;
    int start_err;
    hm_h2_stream *pend_next;
    const char *req_src;
    /* On the thread's deadline list while a deadline bounds its wait. */
    int64_t deadline;
    bool timed;
    hm_dlink tlink;
    bool closed; /* nghttp2 closed the stream: no frame of it comes any more */
    int err;
    hm_fail_kind fail;
    char why[160];     /* in words, when the failure's origin knows more than its kind */
    int status;        /* :status of the head being received */
    size_t head_block; /* bytes of the header block being received (frames' payloads) */
    /* Its header list so far, decoded, as SETTINGS_MAX_HEADER_LIST_SIZE
     * counts it (name + value + 32 per field): HPACK's references to its
     * table make it far larger than the frames. */
    size_t head_list;
    /* A frame of it nghttp2 found invalid (bad_lib nonzero): nghttp2's
     * RST_STREAM follows, which is not the server's. */
    nghttp2_frame_hd bad_hd;
    int bad_lib;
    char bad_msg[96];
    /* The request, parsed once per distinct request bytes. */
    hm_http_req_parser req;
    hm_buf req_copy; /* the bytes nv was built from */
    hm_buf nvstore;  /* lower-cased names and values nv points into */
    nghttp2_nv *nv;
    size_t nnv, nv_cap;
    size_t body_off;
};

void h2l_deadline_remove(hm_h2_stream *s);
int h2l_deadline_add(hm_h2_stream *s, int64_t deadline);
void h2l_link_unref(h2_link *L);
void h2l_link_kick(h2_link *L);
void h2l_done_unlink(hm_h2_stream *s);
void h2l_link_retire(h2_link *L);
void h2l_link_die(h2_link *L, int err, hm_fail_kind kind, const char *why);
ssize_t h2l_read_req_body(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
                          uint32_t *flags, nghttp2_data_source *src, void *user);
int h2l_stream_words(hm_http_conn *c, int rc, const char *why, int64_t budget_ns, bool got_head);
int h2l_get_link(hm_http_conn *c, int64_t deadline, h2_link **out);
/* h's current link when a stream can go on it without waiting, else NULL. */
h2_link *h2l_ready_link(hm_h2_conn *h);

/* h2_errors.c: a server's protocol errors in words. */
/* nghttp2's error code (NGHTTP2_ERR_*) as what the server did; static text. */
const char *h2l_lib_words(int lib);
/* L's protocol error (bad_lib, bad_msg, sent_goaway_code) into why. */
void h2l_proto_why(const h2_link *L, char *why, size_t cap);
/* hd as c's evidence bytes ("HEADERS frame (stream 1, ...)"), after its
 * status line when one came. */
void h2l_frame_evidence(hm_http_conn *c, const nghttp2_frame_hd *hd);
/* The callbacks that fill a link's bad_* fields (user data: the link). */
void h2l_set_error_callbacks(nghttp2_session_callbacks *cb);

#endif
