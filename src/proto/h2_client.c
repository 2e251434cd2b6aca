/* HTTP/2 client connections on the engine, on libnghttp2 (h2_client.h).
 *
 * A handle (hm_h2_conn) names at most one current link, the connection new
 * streams go on; a link that stops taking streams (GOAWAY, ids spent, an
 * error) leaves the handle and lives on until its last stream and its two
 * coroutines are done. A link's memory is counted: the handle's reference
 * while current, one per stream in flight, one each for the reader and the
 * writer; the last one out frees it.
 *
 * nghttp2 is called from the reader (mem_recv, and the callbacks it runs),
 * the writer (mem_send) and the streams' coroutines (submit, reset); they
 * share one thread and never nest, since a callback only records, fills
 * the response and wakes a stream, and never calls mem_send or mem_recv. */
#include "proto/h2_client.h"

#include "proto/h2.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

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
    /* Started streams (hm_h2_start) that are done, in the order they
     * finished, for hm_h2_wait_done; done_kick wakes its waiter. */
    hm_h2_stream *done_head, *done_tail;
    hm_chan *done_kick;
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
    /* HTTP/2 bytes (after TLS) read and written since a stream last took
     * them: each stream leaving the link takes them into its conn, so the
     * conns' counts add up to the connection's. */
    uint64_t bytes_read, bytes_written;
};

struct hm_h2_stream {
    hm_http_conn *c;
    h2_link *link; /* while in flight */
    hm_h2_stream *prev, *next;
    int32_t id;
    hm_chan *wake;
    bool done, got_head, refused, streaming;
    bool expired; /* its deadline passed (the sweeper failed it) */
    /* Started by hm_h2_start: when done it goes on its handle's done list
     * (nobody waits on wake); the exchange's options, kept for a re-send. */
    bool async, on_done, retried, idempotent, head;
    bool status_only; /* hm_http_xopts.status_only: fields are not passed on */
    int64_t xdeadline, budget;
    hm_h2_stream *done_next;
    /* On the thread's deadline list while a deadline bounds its wait. */
    int64_t deadline;
    bool timed;
    hm_h2_stream *tprev, *tnext;
    bool closed; /* nghttp2 closed the stream: no frame of it comes any more */
    int err;
    hm_fail_kind fail;
    char why[160]; /* in words, when the failure's origin knows more than its kind */
    int status;    /* :status of the head being received */
    /* The request, parsed once per distinct request bytes. */
    hm_http_req_parser req;
    hm_buf req_copy; /* the bytes nv was built from */
    hm_buf nvstore;  /* lower-cased names and values nv points into */
    nghttp2_nv *nv;
    size_t nnv, nv_cap;
    size_t body_off;
};

/* ---- deadlines ------------------------------------------------------------------
 *
 * A stream's wait is bounded by its deadline, but not through a timer of
 * its own: arming and disarming one per request was the costliest thing
 * hammer did per request after nghttp2 itself (a heap of hundreds of
 * timers, a cache miss at each level). The streams of a thread's loop that
 * wait with a deadline are on one list instead, and one sweeper coroutine
 * sleeps until the earliest of them and fails those whose deadline passed
 * (as timeouts; their waiters reset them). Nearly every deadline is "now +
 * --timeout", so the sweeper wakes about once per timeout; a stream whose
 * deadline is earlier than the sweeper's plan wakes it to plan again. The
 * sweeper leaves when the list empties (a loop runs until its coroutines
 * end), woken for that by the last stream off it. */
typedef struct deadline_list {
    hm_h2_stream *head, *tail;
    hm_coro *sweeper;
    hm_chan *kick;
    int64_t planned; /* when the sweeper wakes (0: it is not asleep on one) */
} deadline_list;
static _Thread_local deadline_list deadlines;

static void stream_fail(hm_h2_stream *s, int err, hm_fail_kind kind, const char *why);

static void deadline_remove(hm_h2_stream *s)
{
    if (!s->timed) return;
    deadline_list *d = &deadlines;
    if (s->tprev)
        s->tprev->tnext = s->tnext;
    else
        d->head = s->tnext;
    if (s->tnext)
        s->tnext->tprev = s->tprev;
    else
        d->tail = s->tprev;
    s->tprev = s->tnext = NULL;
    s->timed = false;
    /* The last one off: the sweeper must not hold the loop until its plan. */
    if (!d->head && d->planned) hm_chan_try_push(d->kick, d);
}

static void sweeper_main(void *arg)
{
    (void)arg;
    deadline_list *d = &deadlines;
    while (d->head) {
        int64_t now = hm_now_ns(), next = INT64_MAX;
        for (hm_h2_stream *s = d->head, *n; s; s = n) {
            n = s->tnext;
            if (s->deadline <= now) {
                deadline_remove(s);
                s->expired = true;
                stream_fail(s, -ETIMEDOUT, HM_FAIL_TIMEOUT, NULL);
            } else if (s->deadline < next) {
                next = s->deadline;
            }
        }
        if (!d->head) break;
        d->planned = next;
        void *tok;
        /* A kick (plan again), the time, or an interrupt: look again
         * either way (an abort's waiters leave, and the list empties). */
        if (hm_chan_pop(d->kick, &tok, next) == -ECANCELED) hm_coro_yield();
        d->planned = 0;
        /* Emptied: a request that follows at once (a VU's next) keeps
         * this sweeper instead of spawning another. */
        if (!d->head) hm_coro_yield();
    }
    d->sweeper = NULL;
    hm_chan_destroy(d->kick);
    d->kick = NULL;
}

/* s waits until its deadline at the latest (none: 0). 0 or -ENOMEM. */
static int deadline_add(hm_h2_stream *s, int64_t deadline)
{
    if (deadline <= 0) return 0;
    deadline_list *d = &deadlines;
    if (!d->sweeper) {
        if (!d->kick && hm_chan_create(&d->kick, 1) < 0) return -ENOMEM;
        if (hm_coro_spawn(NULL, sweeper_main, NULL, &d->sweeper) < 0) return -ENOMEM;
    } else if (d->planned && deadline < d->planned) {
        hm_chan_try_push(d->kick, d); /* -EAGAIN: already kicked */
    }
    s->deadline = deadline;
    s->timed = true;
    s->tnext = NULL;
    s->tprev = d->tail;
    if (d->tail)
        d->tail->tnext = s;
    else
        d->head = s;
    d->tail = s;
    return 0;
}

/* ---- links: lifetime ------------------------------------------------------ */

static void link_free(h2_link *L)
{
    hm_h2_conn *h = L->home;
    if (h) {
        if (L->hprev)
            L->hprev->hnext = L->hnext;
        else
            h->links = L->hnext;
        if (L->hnext) L->hnext->hprev = L->hprev;
        if (h->tls_user == L) h->tls_user = NULL;
    }
    if (L->ng) nghttp2_session_del(L->ng);
    if (L->tls) hm_tls_reset(L->tls); /* the handle's keeps its session and reason */
    if (L->tls_own) hm_tls_free(L->tls);
    if (L->sock) hm_sock_close(L->sock);
    hm_chan_destroy(L->kick);
    hm_buf_free(&L->obuf);
    hm_buf_free(&L->wbuf);
    hm_free(L->rbuf);
    hm_free(L);
}

static void link_unref(h2_link *L)
{
    if (--L->refs == 0) link_free(L);
}

static void link_kick(h2_link *L)
{
    if (!L->dead) hm_chan_try_push(L->kick, L); /* -EAGAIN: already kicked */
}

static void stream_fail(hm_h2_stream *s, int err, hm_fail_kind kind, const char *why)
{
    if (s->done) return;
    s->done = true;
    s->err = err;
    s->fail = kind;
    if (why)
        snprintf(s->why, sizeof(s->why), "%s", why);
    else
        s->why[0] = 0;
    if (!s->async) {
        hm_chan_try_push(s->wake, s);
        return;
    }
    hm_h2_conn *h = s->c->h2;
    s->on_done = true;
    s->done_next = NULL;
    if (h->done_tail)
        h->done_tail->done_next = s;
    else
        h->done_head = s;
    h->done_tail = s;
    hm_chan_try_push(h->done_kick, h); /* -EAGAIN: already kicked */
}

/* s leaves its handle's done list (its conn is released unawaited). */
static void done_unlink(hm_h2_stream *s)
{
    if (!s->on_done) return;
    hm_h2_conn *h = s->c->h2;
    hm_h2_stream **pp = &h->done_head, *prev = NULL;
    while (*pp && *pp != s) {
        prev = *pp;
        pp = &(*pp)->done_next;
    }
    if (*pp) *pp = s->done_next;
    if (h->done_tail == s) h->done_tail = prev;
    s->on_done = false;
}

/* The handle lets its current link go: new streams make another. */
static void link_retire(h2_link *L)
{
    if (!L->current) return;
    L->current = false;
    if (L->home && L->home->link == L) L->home->link = NULL;
    link_unref(L);
}

/* The link failed or ended: its streams fail with err, its coroutines
 * leave (the one calling this leaves by itself). */
static void link_die(h2_link *L, int err, hm_fail_kind kind, const char *why)
{
    if (L->dead) return;
    L->dead = true;
    /* No SETTINGS before the end: whatever answered, it was no HTTP/2. */
    if (!L->spoke && (kind == HM_FAIL_CLOSED || kind == HM_FAIL_PROTOCOL || kind == HM_FAIL_RESET))
        why = L->tls ? "the server ended the connection without speaking HTTP/2"
                     : "the server does not speak h2c: no HTTP/2 SETTINGS in answer to the "
                       "preface (an http:// URL with --http2 means h2c with prior knowledge)";
    L->refs++; /* the retire below must not free L under us */
    for (hm_h2_stream *s = L->streams; s; s = s->next)
        stream_fail(s, err, kind, why);
    link_retire(L);
    hm_coro *self = hm_coro_self();
    if (L->reader && L->reader != self) hm_coro_cancel(L->reader); /* -ESRCH: it sees dead */
    if (L->writer && L->writer != self) hm_coro_cancel(L->writer);
    hm_chan_close(L->kick);
    link_unref(L);
}

/* ---- links: I/O ------------------------------------------------------------- */

/* nghttp2 reads no more, yet streams may wait. After the server's GOAWAY
 * that is the server's doing: streams it will never answer (requests
 * still queued when the GOAWAY came, say) end as the connection's close,
 * named by the GOAWAY. Otherwise nghttp2 ended the session over a protocol
 * error of the server's. */
static void link_reads_done(h2_link *L)
{
    if (!L->goaway) {
        link_die(L, -HM_EPROTO_HTTP, HM_FAIL_PROTOCOL,
                 "HTTP/2 protocol error: the server sent what HTTP/2 does not allow");
        return;
    }
    char why[160];
    if (L->goaway_code != NGHTTP2_NO_ERROR)
        snprintf(why, sizeof(why), "the server ended the HTTP/2 connection (GOAWAY %s)",
                 nghttp2_http2_strerror(L->goaway_code));
    else
        snprintf(why, sizeof(why), "the server ended the HTTP/2 connection (GOAWAY)");
    link_die(L, -HM_ECLOSED, HM_FAIL_CLOSED, why);
}

static void reader_main(void *arg)
{
    h2_link *L = arg;
    while (!L->dead) {
        ssize_t n = L->tls ? hm_tls_read_quiet(L->tls, L->sock, L->rbuf, L->rcap, 0)
                           : hm_sock_read(L->sock, L->rbuf, L->rcap, 0);
        if (L->dead) break;
        if (n == -ECANCELED) continue;
        if (n <= 0) {
            int err = n == 0 ? -HM_ECLOSED : (int)n;
            char why[160];
            if (L->goaway && L->goaway_code != NGHTTP2_NO_ERROR)
                snprintf(why, sizeof(why), "the server ended the HTTP/2 connection (GOAWAY %s)",
                         nghttp2_http2_strerror(L->goaway_code));
            else
                snprintf(why, sizeof(why), "the server closed the HTTP/2 connection%s",
                         L->goaway ? " after its GOAWAY" : "");
            link_die(L, err, hm_fail_of_error(err), n == 0 || L->goaway ? why : NULL);
            break;
        }
        L->bytes_read += (uint64_t)n;
        ssize_t k = nghttp2_session_mem_recv(L->ng, (const uint8_t *)L->rbuf, (size_t)n);
        /* nghttp2 keeps nothing of the buffer: it may move. */
        if ((size_t)n == L->rcap && L->rcap < RBUF_MAX) {
            char *bigger = hm_realloc(L->rbuf, L->rcap * 4);
            if (bigger) {
                L->rbuf = bigger;
                L->rcap *= 4;
            }
        }
        if (k < 0) {
            link_die(L, -HM_EPROTO_HTTP, HM_FAIL_PROTOCOL, nghttp2_strerror((int)k));
            break;
        }
        if (nghttp2_session_want_write(L->ng)) link_kick(L);
        /* nghttp2 reads no more: the server's GOAWAY and every stream done,
         * or nghttp2 ended the session over a protocol error of the
         * server's (then streams are still waiting). */
        if (!nghttp2_session_want_read(L->ng)) {
            link_reads_done(L);
            break;
        }
    }
    L->reader = NULL;
    link_unref(L);
}

static void writer_main(void *arg)
{
    h2_link *L = arg;
    while (!L->dead) {
        while (L->obuf.len < OBUF_MAX) {
            const uint8_t *data;
            ssize_t n = nghttp2_session_mem_send(L->ng, &data);
            if (n < 0) {
                link_die(L, -HM_EPROTO_HTTP, HM_FAIL_PROTOCOL, nghttp2_strerror((int)n));
                break;
            }
            if (n == 0) break;
            if (hm_buf_append(&L->obuf, data, (size_t)n) < 0) {
                link_die(L, -ENOMEM, HM_FAIL_OTHER, NULL);
                break;
            }
        }
        if (L->dead) break;
        if (!L->obuf.len) {
            void *tok;
            hm_chan_pop(L->kick, &tok, 0); /* a kick, a cancel, or the close at death */
            continue;
        }
        hm_buf t = L->obuf;
        L->obuf = L->wbuf;
        L->wbuf = t;
        size_t done = 0;
        ssize_t w = L->tls ? hm_tls_write(L->tls, L->sock, L->wbuf.data, L->wbuf.len, 0, &done)
                           : hm_sock_write(L->sock, L->wbuf.data, L->wbuf.len, 0, &done);
        L->bytes_written += done;
        L->wbuf.len = 0;
        if (w < 0 && !L->dead) link_die(L, (int)w, hm_fail_of_error((int)w), NULL);
        /* nghttp2 reads no more once its GOAWAY over a protocol error is
         * out: the reader, waiting for bytes, would not notice. */
        if (!L->dead && !nghttp2_session_want_read(L->ng) && !nghttp2_session_want_write(L->ng))
            link_reads_done(L);
    }
    L->writer = NULL;
    link_unref(L);
}

/* ---- nghttp2's callbacks ------------------------------------------------------ */

/* The stream a frame is for, while it waits for one. The last one looked
 * up is kept: a HEADERS frame calls back once per field. */
static hm_h2_stream *stream_of_frame(h2_link *L, nghttp2_session *ng, int32_t id)
{
    hm_h2_stream *s;
    if (L->cache_id == id) {
        s = L->cache_s;
    } else {
        s = nghttp2_session_get_stream_user_data(ng, id);
        L->cache_id = id;
        L->cache_s = s;
    }
    return s && !s->done ? s : NULL;
}

/* The response failed while arriving (a limit, a callback's no): the
 * stream is reset and its waiter learns why. */
static void stream_abort(nghttp2_session *ng, hm_h2_stream *s, int err)
{
    nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_CANCEL);
    stream_fail(s, err, hm_fail_of_error(err), NULL);
}

static __attribute__((noinline)) int on_field(nghttp2_session *ng, const nghttp2_frame *f,
                                              const uint8_t *name, size_t nlen, const uint8_t *val,
                                              size_t vlen, h2_link *L)
{
    hm_h2_stream *s = stream_of_frame(L, ng, f->hd.stream_id);
    if (!s || s->got_head) return 0;                /* trailers are not kept */
    if (s->status_only && name[0] != ':') return 0; /* nghttp2 checked it already */
    if (nlen == 7 && memcmp(name, ":status", 7) == 0) {
        int st = 0;
        for (size_t i = 0; i < vlen && i < 3; i++)
            st = st * 10 + (val[i] - '0');
        s->status = vlen == 3 ? st : -1;
        return 0;
    }
    int rc =
        hm_http_resp_push_field(&s->c->resp, (const char *)name, nlen, (const char *)val, vlen);
    if (rc < 0) stream_abort(ng, s, rc);
    return 0;
}

/* Called for every field of every answer: a stream that keeps none
 * (status_only, get's) skips its fields here, in a leaf function that
 * saves no registers; the rest goes to on_field. */
static int on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
                     const uint8_t *val, size_t vlen, uint8_t flags, void *user)
{
    (void)flags;
    h2_link *L = user;
    if (f->hd.type != NGHTTP2_HEADERS) return 0;
    if (name[0] != ':' && L->cache_id == f->hd.stream_id && L->cache_s && L->cache_s->status_only)
        return 0;
    return on_field(ng, f, name, nlen, val, vlen, L);
}

static void stream_end(hm_h2_stream *s)
{
    int rc = hm_http_resp_push_end(&s->c->resp);
    if (rc < 0)
        stream_fail(s, rc, hm_fail_of_error(rc), NULL);
    else
        stream_fail(s, 0, HM_FAIL_NONE, NULL); /* done, and nothing failed */
}

static int on_frame_recv(nghttp2_session *ng, const nghttp2_frame *f, void *user)
{
    h2_link *L = user;
    if (f->hd.type == NGHTTP2_SETTINGS) L->spoke = true;
    if (f->hd.type == NGHTTP2_GOAWAY) {
        /* Streams past last_stream_id are closed as refused by nghttp2;
         * the rest may finish here, new ones go on a new link. */
        L->goaway = true;
        L->goaway_code = f->goaway.error_code;
        link_retire(L);
        return 0;
    }
    if (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA) return 0;
    hm_h2_stream *s = stream_of_frame(user, ng, f->hd.stream_id);
    if (!s) return 0;
    if (f->hd.type == NGHTTP2_HEADERS && !s->got_head) {
        int rc = hm_http_resp_push_head(&s->c->resp, s->status, 2);
        if (rc < 0) {
            stream_abort(ng, s, rc);
            return 0;
        }
        if (s->status >= 200) {
            s->got_head = true;
            /* Evidence as HTTP/1.1 keeps its status line: the frames are binary. */
            _Static_assert(HM_EVIDENCE_BYTES >= 12, "room for HTTP/2 NNN");
            hm_http_conn *c = s->c;
            memcpy(c->head, "HTTP/2 000\r\n", 12);
            c->head[7] = (char)('0' + s->status / 100 % 10);
            c->head[8] = (char)('0' + s->status / 10 % 10);
            c->head[9] = (char)('0' + s->status % 10);
            c->head_len = 12;
            if (s->streaming) deadline_remove(s); /* the header deadline is met */
        } else {
            s->status = 0; /* informational: the answer follows */
        }
    }
    if ((f->hd.flags & NGHTTP2_FLAG_END_STREAM) && s->got_head) stream_end(s);
    return 0;
}

static int on_data(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
                   void *user)
{
    (void)flags, (void)user;
    hm_h2_stream *s = stream_of_frame(user, ng, id);
    if (!s) return 0;
    s->c->resp_bytes += len;
    int rc = hm_http_resp_push_body(&s->c->resp, (const char *)data, len);
    if (rc < 0) stream_abort(ng, s, rc);
    return 0;
}

static int on_stream_close(nghttp2_session *ng, int32_t id, uint32_t code, void *user)
{
    h2_link *L = user;
    hm_h2_stream *s = nghttp2_session_get_stream_user_data(ng, id);
    if (L->cache_id == id) L->cache_id = 0;
    if (s) s->closed = true;
    if (!s || s->done) return 0;
    char why[160];
    if (code == NGHTTP2_REFUSED_STREAM) {
        s->refused = true; /* never processed: safe to send again */
        stream_fail(s, -ECONNRESET, HM_FAIL_RESET,
                    L->goaway ? "the server's GOAWAY refused the HTTP/2 stream"
                              : "the server refused the HTTP/2 stream (RST_STREAM REFUSED_STREAM)");
    } else if (code != NGHTTP2_NO_ERROR) {
        if (L->goaway && L->goaway_code != NGHTTP2_NO_ERROR)
            snprintf(why, sizeof(why), "the server ended the HTTP/2 connection (GOAWAY %s)",
                     nghttp2_http2_strerror(L->goaway_code));
        else
            snprintf(why, sizeof(why), "the server reset the HTTP/2 stream (RST_STREAM %s)",
                     nghttp2_http2_strerror(code));
        stream_fail(s, -ECONNRESET, HM_FAIL_RESET, why);
    } else {
        stream_fail(s, -HM_ECLOSED, HM_FAIL_CLOSED,
                    "the HTTP/2 stream ended before a complete response");
    }
    return 0;
}

static int on_frame_not_send(nghttp2_session *ng, const nghttp2_frame *f, int lib_error, void *user)
{
    (void)lib_error, (void)user;
    if (f->hd.type != NGHTTP2_HEADERS) return 0;
    hm_h2_stream *s = stream_of_frame(user, ng, f->hd.stream_id);
    if (!s) return 0;
    s->refused = true; /* the request never left */
    stream_fail(s, -HM_ECLOSED, HM_FAIL_CLOSED, "the HTTP/2 connection took no more streams");
    return 0;
}

static ssize_t read_req_body(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
                             uint32_t *flags, nghttp2_data_source *src, void *user)
{
    (void)src, (void)user;
    hm_h2_stream *s = nghttp2_session_get_stream_user_data(ng, id);
    if (!s) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* detached: reset */
    size_t left = s->req.body_len - s->body_off;
    size_t k = left < length ? left : length;
    if (k) memcpy(buf, s->req.body + s->body_off, k);
    s->body_off += k;
    if (s->body_off == s->req.body_len) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)k;
}

/* ---- failures in words (c->why), as http_client.c says them ---------------------- */

/* A connect or handshake that failed: link_connect set c->fail (and
 * c->why when it knew more). */
static void connect_words(hm_http_conn *c, int rc, int64_t budget_ns)
{
    if (c->why[0]) return;
    double secs = (double)budget_ns / 1e9;
    const hm_tls *tls = c->h2 ? c->h2->tls : NULL;
    if (c->fail == HM_FAIL_CONNECT && rc == -ETIMEDOUT)
        snprintf(c->why, sizeof(c->why), "connect not done within %.3g s", secs);
    else if (c->fail == HM_FAIL_CONNECT)
        snprintf(c->why, sizeof(c->why), "connect failed: %s", hm_strerror(rc));
    else if (c->fail == HM_FAIL_TIMEOUT)
        snprintf(c->why, sizeof(c->why), "TLS handshake not done within %.3g s", secs);
    else if (c->fail == HM_FAIL_TLS)
        snprintf(c->why, sizeof(c->why), "TLS handshake failed: %s",
                 tls && hm_tls_last_reason(tls)[0] ? hm_tls_last_reason(tls) : hm_strerror(rc));
    else
        snprintf(c->why, sizeof(c->why), "cannot open an HTTP/2 connection: %s", hm_strerror(rc));
}

/* A stream that failed with rc (c->fail set): why, when its origin said,
 * else words from the kind. Returns rc. */
static int stream_words(hm_http_conn *c, int rc, const char *why, int64_t budget_ns, bool got_head)
{
    if (c->why[0]) return rc;
    if (why && why[0]) {
        snprintf(c->why, sizeof(c->why), "%s", why);
        return rc;
    }
    double secs = (double)budget_ns / 1e9;
    const char *parser = hm_http_resp_error_reason(&c->resp);
    const hm_tls *tls = c->h2 ? c->h2->tls : NULL;
    switch (c->fail) {
    case HM_FAIL_TIMEOUT:
        snprintf(c->why, sizeof(c->why), "no %s within %.3g s (HTTP/2 stream reset)",
                 got_head ? "complete response" : "response head", secs);
        break;
    case HM_FAIL_RESET:
        snprintf(c->why, sizeof(c->why), "HTTP/2 connection reset by the server");
        break;
    case HM_FAIL_CLOSED:
        snprintf(c->why, sizeof(c->why),
                 "HTTP/2 connection closed before the response was complete");
        break;
    case HM_FAIL_TLS:
        snprintf(c->why, sizeof(c->why), "%s",
                 tls && hm_tls_last_reason(tls)[0] ? hm_tls_last_reason(tls) : hm_strerror(rc));
        break;
    default:
        if (rc == -ECANCELED)
            snprintf(c->why, sizeof(c->why), "cancelled (the run was interrupted)");
        else
            snprintf(c->why, sizeof(c->why), "%s", parser ? parser : hm_strerror(rc));
    }
    return rc;
}

/* ---- connecting ------------------------------------------------------------------ */

static nghttp2_session *new_session(h2_link *L)
{
    nghttp2_session_callbacks *cb;
    if (nghttp2_session_callbacks_new(&cb) != 0) return NULL;
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    nghttp2_session_callbacks_set_on_frame_not_send_callback(cb, on_frame_not_send);
    nghttp2_session *ng = NULL;
    int rc = nghttp2_session_client_new3(&ng, cb, L, NULL, hm_h2_mem());
    nghttp2_session_callbacks_del(cb);
    if (rc != 0) return NULL;
    const nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, HEADER_TABLE},
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW},
    };
    if (nghttp2_submit_settings(ng, NGHTTP2_FLAG_NONE, iv, HM_ARRAY_LEN(iv)) != 0 ||
        nghttp2_session_set_local_window_size(ng, NGHTTP2_FLAG_NONE, 0, CONN_WINDOW) != 0) {
        nghttp2_session_del(ng);
        return NULL;
    }
    return ng;
}

/* A new link for h, made by c's request (its connect and handshake are
 * c's to report). 0, or a negative error with c->fail (and c->why when it knows more). */
static int link_connect(hm_h2_conn *h, hm_http_conn *c, int64_t deadline, h2_link **out)
{
    const hm_http_target *t = h->target;
    h2_link *L = hm_calloc(1, sizeof(*L));
    if (!L) {
        c->fail = HM_FAIL_OTHER;
        return -ENOMEM;
    }
    L->home = h;
    L->hnext = h->links;
    if (h->links) h->links->hprev = L;
    h->links = L;
    L->target = t;
    L->refs = 1;
    int64_t t0 = hm_now_ns();
    int rc = hm_sock_connect(&L->sock, (const struct sockaddr *)&t->addr, t->addrlen, deadline);
    if (rc < 0) {
        c->fail = HM_FAIL_CONNECT;
        goto fail;
    }
    c->connect_ns = hm_now_ns() - t0;
    c->connects++;
    if (h->connects++) c->reconnects++;
    if (t->tls) {
        if (!h->tls_user) {
            if (!h->tls && (rc = hm_tls_create(&h->tls, t->tls_cfg, t->host)) < 0) {
                c->fail = HM_FAIL_OTHER;
                goto fail;
            }
            L->tls = h->tls;
            h->tls_user = L;
        } else { /* the handle's is busy on a draining link */
            if ((rc = hm_tls_create(&L->tls, t->tls_cfg, t->host)) < 0) {
                c->fail = HM_FAIL_OTHER;
                goto fail;
            }
            L->tls_own = true;
        }
        int64_t h0 = hm_now_ns();
        rc = hm_tls_handshake(L->tls, L->sock, deadline);
        if (rc < 0) {
            c->fail = rc == -ETIMEDOUT ? HM_FAIL_TIMEOUT : HM_FAIL_TLS;
            goto fail;
        }
        c->tls_ns = hm_now_ns() - h0;
        if (hm_tls_resumed(L->tls))
            c->tls_resumed++;
        else
            c->tls_full++;
        if (!hm_tls_selected_h2(L->tls)) {
            c->fail = HM_FAIL_PROTOCOL;
            snprintf(c->why, sizeof(c->why),
                     "the server did not agree on h2 through ALPN (it speaks no HTTP/2 over TLS, "
                     "or only HTTP/1.1)");
            rc = -HM_EPROTO_HTTP;
            goto fail;
        }
    }
    L->rbuf = hm_alloc(RBUF_MIN);
    L->rcap = RBUF_MIN;
    L->ng = L->rbuf ? new_session(L) : NULL;
    if (!L->ng || hm_chan_create(&L->kick, 1) < 0) {
        c->fail = HM_FAIL_OTHER;
        rc = -ENOMEM;
        goto fail;
    }
    L->refs += 2; /* the reader and the writer */
    if (hm_coro_spawn(NULL, reader_main, L, &L->reader) < 0) {
        L->refs -= 2;
        c->fail = HM_FAIL_OTHER;
        rc = -ENOMEM;
        goto fail;
    }
    if (hm_coro_spawn(NULL, writer_main, L, &L->writer) < 0) {
        L->refs--;
        link_die(L, -ENOMEM, HM_FAIL_OTHER, NULL);
        link_unref(L);
        c->fail = HM_FAIL_OTHER;
        return -ENOMEM;
    }
    L->current = true;
    L->last_used_ns = hm_now_ns();
    link_kick(L); /* the preface and our SETTINGS */
    *out = L;
    return 0;
fail:
    link_free(L);
    return rc;
}

/* The server closed an idle link (its keep-alive timeout) and the reader
 * has not seen it yet: a request must not go there. */
static bool link_closed_by_peer(h2_link *L)
{
    /* Streams in flight: the reader hears a close at once and fails them. */
    if (L->streams || hm_now_ns() - L->last_used_ns < IDLE_CHECK_NS) return false;
    char b;
    return recv(hm_sock_fd(L->sock), &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/* The link c's next stream goes on, connecting one when there is none. */
static int get_link(hm_http_conn *c, int64_t deadline, h2_link **out)
{
    hm_h2_conn *h = c->h2;
    for (;;) {
        h2_link *L = h->link;
        if (L && !L->dead && !L->goaway && nghttp2_session_check_request_allowed(L->ng)) {
            if (!link_closed_by_peer(L)) {
                *out = L;
                return 0;
            }
            link_die(L, -HM_ECLOSED, HM_FAIL_CLOSED, "the server closed the HTTP/2 connection");
            continue;
        }
        if (L) link_retire(L);
        if (h->connecting) {
            uint64_t gen = h->connect_gen;
            int rc = hm_wg_wait(&h->connect_wg, deadline);
            if (rc < 0) {
                c->fail = rc == -ETIMEDOUT ? HM_FAIL_TIMEOUT : HM_FAIL_OTHER;
                snprintf(c->why, sizeof(c->why), "%s",
                         rc == -ETIMEDOUT ? "HTTP/2 connection not ready before the deadline"
                                          : "cancelled (the run was interrupted)");
                return rc;
            }
            if (h->connect_gen != gen && !h->link && h->connect_err < 0) {
                c->fail = h->connect_fail; /* the attempt it waited for failed */
                snprintf(c->why, sizeof(c->why), "%s", h->connect_why);
                return h->connect_err;
            }
            continue;
        }
        h->connecting = true;
        hm_wg_add(&h->connect_wg, 1);
        int64_t budget = deadline > 0 ? deadline - hm_now_ns() : 0;
        int rc = link_connect(h, c, deadline, &L);
        h->connect_gen++;
        h->connect_err = rc;
        if (rc < 0) connect_words(c, rc, budget);
        h->connect_fail = c->fail;
        snprintf(h->connect_why, sizeof(h->connect_why), "%s", c->why);
        if (rc == 0) h->link = L;
        h->connecting = false;
        hm_wg_done(&h->connect_wg);
        if (rc < 0) return rc;
        *out = L;
        return 0;
    }
}

/* ---- streams -------------------------------------------------------------------- */

static hm_h2_stream *stream_state(hm_http_conn *c)
{
    if (c->h2s) return c->h2s;
    hm_h2_stream *s = hm_calloc(1, sizeof(*s));
    if (!s) return NULL;
    if (hm_chan_create(&s->wake, 1) < 0) {
        hm_free(s);
        return NULL;
    }
    s->c = c;
    hm_http_req_init(&s->req, NULL);
    c->h2s = s;
    return s;
}

static int nv_add(hm_h2_stream *s, const char *name, size_t nlen, const char *val, size_t vlen,
                  bool lower)
{
    if (s->nnv == s->nv_cap) {
        size_t ncap = s->nv_cap ? s->nv_cap * 2 : 16;
        nghttp2_nv *nv = hm_realloc(s->nv, ncap * sizeof(*nv));
        if (!nv) return -ENOMEM;
        s->nv = nv;
        s->nv_cap = ncap;
    }
    if (hm_buf_reserve(&s->nvstore, nlen + vlen + 2) < 0) return -ENOMEM;
    char *p = s->nvstore.data + s->nvstore.len;
    if (lower)
        hm_h2_lower(p, name, nlen);
    else
        memcpy(p, name, nlen);
    p[nlen] = '\0';
    memcpy(p + nlen + 1, val, vlen);
    p[nlen + 1 + vlen] = '\0';
    /* Offsets now, pointers once nvstore stops moving. */
    s->nv[s->nnv++] = (nghttp2_nv){
        .name = (uint8_t *)(uintptr_t)s->nvstore.len,
        .value = (uint8_t *)(uintptr_t)(s->nvstore.len + nlen + 1),
        .namelen = nlen,
        .valuelen = vlen,
        /* nvstore outlives the HEADERS (it changes only for a later
         * request): nghttp2 need not copy it. */
        .flags = NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE,
    };
    s->nvstore.len += nlen + vlen + 2;
    return 0;
}

/* The HEADERS for the request bytes req[0, len): parsed (llhttp) once for
 * each distinct request, so a request sent again and again costs a
 * comparison. 0, or -EINVAL for bytes that are not one whole request. */
static int prepare_request(hm_h2_stream *s, const hm_http_target *t, const char *req, size_t len)
{
    if (len && s->req_copy.len == len && memcmp(s->req_copy.data, req, len) == 0) return 0;
    s->req_copy.len = 0;
    s->nnv = 0;
    s->nvstore.len = 0;
    hm_http_req_reset(&s->req);
    size_t consumed = 0;
    int rc = hm_http_req_feed(&s->req, req, len, &consumed);
    if (rc != HM_HTTP_DONE || consumed != len) return -EINVAL;
    const hm_http_req_parser *r = &s->req;
    const char *scheme = t->tls ? "https" : "http";
    const hm_http_str *host = &r->hdr.host;
    rc = nv_add(s, ":method", 7, r->method_name, strlen(r->method_name), false);
    if (!rc) rc = nv_add(s, ":scheme", 7, scheme, strlen(scheme), false);
    if (!rc)
        rc = host->ptr ? nv_add(s, ":authority", 10, host->ptr, host->len, false)
                       : nv_add(s, ":authority", 10, t->host_header, strlen(t->host_header), false);
    if (!rc) rc = nv_add(s, ":path", 5, r->target.ptr, r->target.len, false);
    size_t n = hm_http_req_header_count(r);
    for (size_t i = 0; !rc && i < n; i++) {
        hm_http_str name, value;
        hm_http_req_header_at(r, i, &name, &value);
        if (hm_h2_dropped_field(name.ptr, name.len)) continue;
        rc = nv_add(s, name.ptr, name.len, value.ptr, value.len, true);
    }
    if (rc) return rc;
    for (size_t i = 0; i < s->nnv; i++) {
        s->nv[i].name = (uint8_t *)s->nvstore.data + (uintptr_t)s->nv[i].name;
        s->nv[i].value = (uint8_t *)s->nvstore.data + (uintptr_t)s->nv[i].value;
    }
    return hm_buf_set(&s->req_copy, req, len);
}

/* s's request goes on L as a new stream. 0, -EAGAIN when L takes no more
 * streams (ids spent, a GOAWAY in between), -ENOMEM. */
static int stream_submit(h2_link *L, hm_h2_stream *s)
{
    s->done = s->got_head = s->refused = s->closed = s->expired = false;
    s->err = 0;
    s->fail = HM_FAIL_NONE;
    s->why[0] = 0;
    s->status = 0;
    s->body_off = 0;
    void *tok;
    while (hm_chan_len(s->wake) && hm_chan_try_pop(s->wake, &tok) == 0) {
    }
    nghttp2_data_provider dp = {.read_callback = read_req_body};
    int32_t id =
        nghttp2_submit_request(L->ng, NULL, s->nv, s->nnv, s->req.body_len ? &dp : NULL, s);
    if (id < 0) return id == NGHTTP2_ERR_NOMEM ? -ENOMEM : -EAGAIN;
    s->id = id;
    s->link = L;
    L->refs++;
    s->prev = NULL;
    s->next = L->streams;
    if (L->streams) L->streams->prev = s;
    L->streams = s;
    link_kick(L);
    return 0;
}

/* The stream leaves its link; reset first when it is still open there
 * (its waiter gave up). */
static void stream_detach(hm_h2_stream *s, bool reset)
{
    h2_link *L = s->link;
    if (!L) return;
    if (L->cache_id == s->id) L->cache_id = 0;
    if (!L->dead && !s->closed) {
        if (reset) nghttp2_submit_rst_stream(L->ng, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_CANCEL);
        /* No frame of it reaches s any more. */
        nghttp2_session_set_stream_user_data(L->ng, s->id, NULL);
        if (reset) link_kick(L);
    }
    if (s->prev)
        s->prev->next = s->next;
    else
        L->streams = s->next;
    if (s->next) s->next->prev = s->prev;
    s->prev = s->next = NULL;
    s->link = NULL;
    s->c->bytes_read += L->bytes_read;
    s->c->bytes_written += L->bytes_written;
    L->bytes_read = L->bytes_written = 0;
    if (!L->streams) L->last_used_ns = hm_now_ns(); /* idle from now */
    link_unref(L);
}

/* One request as a stream: connect when needed, submit, wait until the
 * response is complete (or, streaming, until the body ends), within the
 * deadline (streaming: the header deadline only). */
static int run_stream(hm_http_conn *c, const char *req, size_t len, bool idempotent, bool head,
                      int64_t deadline, bool streaming)
{
    c->fail = HM_FAIL_NONE;
    c->why[0] = 0;
    c->head_len = 0;
    c->resp_bytes = 0;
    c->body_bytes = 0;
    int64_t budget = deadline > 0 ? deadline - hm_now_ns() : 0;
    c->connect_ns = 0;
    c->tls_ns = 0;
    if (!c->h2) {
        int rc = hm_h2_conn_create(&c->h2, c->target);
        if (rc < 0) {
            c->fail = HM_FAIL_OTHER;
            return rc;
        }
        c->h2_own = true;
    }
    hm_h2_stream *s = stream_state(c);
    if (!s) {
        c->fail = HM_FAIL_OTHER;
        return -ENOMEM;
    }
    if (prepare_request(s, c->target, req, len) < 0) {
        c->fail = HM_FAIL_OTHER;
        snprintf(c->why, sizeof(c->why), "the request cannot be sent over HTTP/2");
        return -EINVAL;
    }
    s->streaming = streaming;
    s->async = false;
    s->status_only = false;
    bool retried = false;
again:;
    hm_http_resp_begin(&c->resp, head);
    h2_link *L = NULL;
    int rc = get_link(c, deadline, &L);
    if (rc < 0) return rc; /* get_link said why */
    rc = stream_submit(L, s);
    if (rc == -EAGAIN && !retried) { /* the link is spent: the next one takes it */
        retried = true;
        link_retire(L);
        goto again;
    }
    if (rc < 0) {
        c->fail = HM_FAIL_OTHER;
        return rc;
    }
    if (deadline_add(s, deadline) < 0) {
        stream_detach(s, true);
        c->fail = HM_FAIL_OTHER;
        return -ENOMEM;
    }
    bool stop_seen = false;
    while (!s->done) {
        void *tok;
        rc = hm_chan_pop(s->wake, &tok, 0); /* the sweeper keeps the deadline */
        if (rc < 0 && !s->done) {
            /* The first Ctrl-C (STOP) lets a request in flight finish
             * within its deadline, as a socket operation would; a second
             * cancel (abort, or a cancel of the coroutine) ends it. */
            if (rc == -ECANCELED && !streaming && deadline > 0 && !stop_seen &&
                hm_interrupt_current() == HM_INTERRUPT_STOP) {
                stop_seen = true;
                continue;
            }
            deadline_remove(s);
            stream_detach(s, true); /* cancelled: the stream is reset */
            c->fail = hm_fail_of_error(rc);
            return stream_words(c, rc, NULL, budget, s->got_head);
        }
    }
    deadline_remove(s);
    stream_detach(s, s->expired); /* expired: reset, as its waiter gave up */
    if (s->err) {
        /* Never processed (refused), or an idempotent request whose
         * connection died before any answer: once more, on a fresh link. */
        bool again_ok =
            !retried && (s->refused || (idempotent && !streaming && !s->got_head &&
                                        (s->fail == HM_FAIL_CLOSED || s->fail == HM_FAIL_RESET)));
        if (again_ok) {
            retried = true;
            c->retries++;
            goto again;
        }
        c->fail = s->fail;
        return stream_words(c, s->err, s->why, budget, s->got_head);
    }
    return 0;
}

static int count_body(void *user, const char *at, size_t len)
{
    hm_http_conn *c = user;
    (void)at;
    c->body_bytes += len;
    return 0;
}

int hm_h2_exchange(hm_http_conn *c, const char *req, size_t len, const hm_http_xopts *o)
{
    hm_http_resp_set_callbacks(&c->resp, NULL, o->discard_body ? count_body : NULL, c);
    return run_stream(c, req, len, o->idempotent, o->head, o->deadline, false);
}

int hm_h2_exchange_stream(hm_http_conn *c, const char *req, size_t len, int64_t header_deadline,
                          hm_http_resp_headers_fn on_headers, hm_http_body_fn on_body, void *user)
{
    hm_http_resp_set_callbacks(&c->resp, on_headers, on_body, user);
    int rc = run_stream(c, req, len, true, false, header_deadline, true);
    hm_http_resp_set_callbacks(&c->resp, NULL, NULL, NULL);
    return rc;
}

/* ---- started streams: many on one coroutine ------------------------------------ */

/* One attempt of s's exchange: a link, the stream on it, its deadline. */
static int start_attempt(hm_http_conn *c, hm_h2_stream *s)
{
    for (;;) {
        hm_http_resp_begin(&c->resp, s->head);
        h2_link *L = NULL;
        int rc = get_link(c, s->xdeadline, &L);
        if (rc < 0) return rc; /* get_link said why */
        rc = stream_submit(L, s);
        if (rc == -EAGAIN && !s->retried) { /* the link is spent: the next one takes it */
            s->retried = true;
            link_retire(L);
            continue;
        }
        if (rc == 0) rc = deadline_add(s, s->xdeadline);
        if (rc < 0) {
            stream_detach(s, true);
            c->fail = HM_FAIL_OTHER;
            snprintf(c->why, sizeof(c->why), "%s", hm_strerror(rc));
        }
        return rc;
    }
}

int hm_h2_start(hm_http_conn *c, const char *req, size_t len, const hm_http_xopts *o)
{
    c->fail = HM_FAIL_NONE;
    c->why[0] = 0;
    c->head_len = 0;
    c->resp_bytes = 0;
    c->body_bytes = 0;
    c->connect_ns = 0;
    c->tls_ns = 0;
    hm_h2_conn *h = c->h2;
    hm_h2_stream *s = stream_state(c);
    if (!h || !s || (!h->done_kick && hm_chan_create(&h->done_kick, 1) < 0)) {
        c->fail = HM_FAIL_OTHER;
        snprintf(c->why, sizeof(c->why), "%s", h ? "out of memory" : "no shared HTTP/2 connection");
        return h ? -ENOMEM : -EINVAL;
    }
    /* req NULL: the conn's previous request again, not even compared. */
    if (req ? prepare_request(s, c->target, req, len) < 0 : !s->req_copy.len) {
        c->fail = HM_FAIL_OTHER;
        snprintf(c->why, sizeof(c->why), "the request cannot be sent over HTTP/2");
        return -EINVAL;
    }
    hm_http_resp_set_callbacks(&c->resp, NULL, o->discard_body ? count_body : NULL, c);
    s->async = true;
    s->status_only = o->status_only;
    s->streaming = false;
    s->retried = false;
    s->idempotent = o->idempotent;
    s->head = o->head;
    s->xdeadline = o->deadline;
    /* The caller's span: what is left now is less by however long this
     * thread was kept from running since the deadline was set. */
    s->budget = o->span_ns ? o->span_ns : o->deadline > 0 ? o->deadline - hm_now_ns() : 0;
    return start_attempt(c, s);
}

int hm_h2_wait_done(hm_h2_conn *h, hm_http_conn **out)
{
    bool stop_seen = false;
    while (!h->done_head) {
        void *tok;
        int rc = hm_chan_pop(h->done_kick, &tok, 0); /* the sweeper keeps the deadlines */
        /* The first Ctrl-C lets the streams in flight finish (see run_stream). */
        if (rc == -ECANCELED && !stop_seen && hm_interrupt_current() == HM_INTERRUPT_STOP) {
            stop_seen = true;
            continue;
        }
        if (rc < 0) return rc;
    }
    hm_h2_stream *s = h->done_head;
    h->done_head = s->done_next;
    if (!h->done_head) h->done_tail = NULL;
    s->on_done = false;
    *out = s->c;
    return 0;
}

int hm_h2_finish(hm_http_conn *c)
{
    hm_h2_stream *s = c->h2s;
    deadline_remove(s);
    stream_detach(s, s->expired);
    if (!s->err) return 0;
    /* As run_stream: refused, or idempotent and its connection died
     * before any answer: once more, on a fresh link. */
    bool again_ok =
        !s->retried && (s->refused || (s->idempotent && !s->got_head &&
                                       (s->fail == HM_FAIL_CLOSED || s->fail == HM_FAIL_RESET)));
    if (again_ok) {
        s->retried = true;
        c->retries++;
        int rc = start_attempt(c, s);
        return rc < 0 ? rc : -EINPROGRESS;
    }
    c->fail = s->fail;
    return stream_words(c, s->err, s->why, s->budget, s->got_head);
}

const hm_tls *hm_h2_conn_tls(const hm_http_conn *c)
{
    return c->h2 ? c->h2->tls : NULL;
}

void hm_h2_conn_close(hm_http_conn *c)
{
    if (c->h2s) stream_detach(c->h2s, true);
    if (!c->h2 || !c->h2_own || !c->h2->link) return;
    link_die(c->h2->link, -HM_ECLOSED, HM_FAIL_CLOSED, "the connection was closed");
}

void hm_h2_conn_release(hm_http_conn *c)
{
    hm_h2_stream *s = c->h2s;
    if (s) {
        deadline_remove(s);
        if (c->h2) done_unlink(s);
        stream_detach(s, true);
        hm_chan_destroy(s->wake);
        hm_http_req_free(&s->req);
        hm_buf_free(&s->req_copy);
        hm_buf_free(&s->nvstore);
        hm_free(s->nv);
        hm_free(s);
        c->h2s = NULL;
    }
    if (c->h2_own) hm_h2_conn_free(c->h2);
    c->h2 = NULL;
    c->h2_own = false;
}

/* ---- the handle ------------------------------------------------------------------ */

int hm_h2_conn_create(hm_h2_conn **out, const hm_http_target *t)
{
    hm_h2_conn *h = hm_calloc(1, sizeof(*h));
    if (!h) return -ENOMEM;
    h->target = t;
    hm_wg_init(&h->connect_wg);
    *out = h;
    return 0;
}

void hm_h2_conn_free(hm_h2_conn *h)
{
    if (!h) return;
    if (h->link) link_die(h->link, -HM_ECLOSED, HM_FAIL_CLOSED, "the connection was closed");
    /* Draining links outlive the handle: the one using its TLS state takes
     * it over. */
    for (h2_link *L = h->links; L; L = L->hnext) {
        L->home = NULL;
        if (L == h->tls_user) {
            L->tls_own = true;
            h->tls = NULL;
        }
    }
    hm_tls_free(h->tls);
    hm_chan_destroy(h->done_kick);
    hm_free(h);
}

uint64_t hm_h2_conn_connects(const hm_h2_conn *h)
{
    return h->connects;
}
