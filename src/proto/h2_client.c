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
#include "proto/h2_internal.h"

#include "proto/h2.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

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
    hm_dlist streams;
    hm_coro *sweeper;
    hm_chan *kick;
    int64_t planned; /* when the sweeper wakes (0: it is not asleep on one) */
} deadline_list;
static _Thread_local deadline_list deadlines;

static void stream_fail(hm_h2_stream *s, int err, hm_fail_kind kind, const char *why);

void h2l_deadline_remove(hm_h2_stream *s)
{
    if (!s->timed) return;
    deadline_list *d = &deadlines;
    hm_dlist_remove(&d->streams, &s->tlink);
    s->timed = false;
    /* The last one off: the sweeper must not hold the loop until its plan. */
    if (hm_dlist_empty(&d->streams) && d->planned) hm_chan_try_push(d->kick, d);
}

static void sweeper_main(void *arg)
{
    (void)arg;
    deadline_list *d = &deadlines;
    while (!hm_dlist_empty(&d->streams)) {
        int64_t now = hm_now_ns(), next = INT64_MAX;
        for (hm_dlink *l = d->streams.head, *n; l; l = n) {
            n = l->next;
            hm_h2_stream *s = HM_CONTAINER_OF(l, hm_h2_stream, tlink);
            if (s->deadline <= now) {
                h2l_deadline_remove(s);
                s->expired = true;
                stream_fail(s, -ETIMEDOUT, HM_FAIL_TIMEOUT,
                            s->link && !s->link->spoke
                                ? "no HTTP/2 SETTINGS from the server before the deadline (it "
                                  "does not speak h2c, or said nothing)"
                                : NULL);
            } else if (s->deadline < next) {
                next = s->deadline;
            }
        }
        if (hm_dlist_empty(&d->streams)) break;
        d->planned = next;
        void *tok;
        /* A kick (plan again), the time, or an interrupt: look again
         * either way (an abort's waiters leave, and the list empties). */
        if (hm_chan_pop(d->kick, &tok, next) == -ECANCELED) hm_coro_yield();
        d->planned = 0;
        /* Emptied: a request that follows at once (a VU's next) keeps
         * this sweeper instead of spawning another. */
        if (hm_dlist_empty(&d->streams)) hm_coro_yield();
    }
    d->sweeper = NULL;
    hm_chan_destroy(d->kick);
    d->kick = NULL;
}

/* s waits until its deadline at the latest (none: 0). 0 or -ENOMEM. */
int h2l_deadline_add(hm_h2_stream *s, int64_t deadline)
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
    hm_dlist_push(&d->streams, &s->tlink);
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

void h2l_link_unref(h2_link *L)
{
    if (--L->refs == 0) link_free(L);
}

void h2l_link_kick(h2_link *L)
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
void h2l_done_unlink(hm_h2_stream *s)
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
void h2l_link_retire(h2_link *L)
{
    if (!L->current) return;
    L->current = false;
    if (L->home && L->home->link == L) L->home->link = NULL;
    h2l_link_unref(L);
}

/* The link failed or ended: its streams fail with err, its coroutines
 * leave (the one calling this leaves by itself). */
void h2l_link_die(h2_link *L, int err, hm_fail_kind kind, const char *why)
{
    if (L->dead) return;
    L->dead = true;
    /* No SETTINGS before the end: whatever answered, it was no HTTP/2. */
    if (!L->spoke && (kind == HM_FAIL_CLOSED || kind == HM_FAIL_PROTOCOL || kind == HM_FAIL_RESET))
        why = L->tls ? "the server ended the connection without speaking HTTP/2"
                     : "the server does not speak h2c: no HTTP/2 SETTINGS in answer to the "
                       "preface (an http:// URL with --http2 means h2c with prior knowledge)";
    L->refs++; /* the retire below must not free L under us */
    bool evidence = kind == HM_FAIL_PROTOCOL && L->spoke;
    for (hm_h2_stream *s = L->streams; s; s = s->next) {
        if (evidence && !s->done) {
            /* The server answered, if badly: its bytes are this stream's. */
            if (!s->c->resp_bytes) s->c->resp_bytes = L->read_total;
            h2l_frame_evidence(s->c, L->bad_lib ? &L->bad_hd : &L->last_hd);
        }
        stream_fail(s, err, kind, why);
    }
    h2l_link_retire(L);
    hm_coro *self = hm_coro_self();
    if (L->reader && L->reader != self) hm_coro_cancel(L->reader); /* -ESRCH: it sees dead */
    if (L->writer && L->writer != self) hm_coro_cancel(L->writer);
    hm_chan_close(L->kick);
    h2l_link_unref(L);
}

/* ---- links: I/O ------------------------------------------------------------- */

/* nghttp2 reads no more, yet streams may wait. After the server's GOAWAY
 * that is the server's doing: streams it will never answer (requests
 * still queued when the GOAWAY came, say) end as the connection's close,
 * named by the GOAWAY. Otherwise nghttp2 ended the session over a protocol
 * error of the server's. */
static void link_reads_done(h2_link *L)
{
    char why[160];
    if (!L->goaway || L->sent_goaway_code) {
        h2l_proto_why(L, why, sizeof(why));
        h2l_link_die(L, -HM_EPROTO_HTTP, HM_FAIL_PROTOCOL, why);
        return;
    }
    if (L->goaway_code != NGHTTP2_NO_ERROR)
        snprintf(why, sizeof(why), "the server ended the HTTP/2 connection (GOAWAY %s)",
                 nghttp2_http2_strerror(L->goaway_code));
    else
        snprintf(why, sizeof(why), "the server ended the HTTP/2 connection (GOAWAY)");
    h2l_link_die(L, -HM_ECLOSED, HM_FAIL_CLOSED, why);
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
            h2l_link_die(L, err, hm_fail_of_error(err), n == 0 || L->goaway ? why : NULL);
            break;
        }
        L->bytes_read += (uint64_t)n;
        L->read_total += (uint64_t)n;
        ssize_t k = nghttp2_session_mem_recv(L->ng, (const uint8_t *)L->rbuf, (size_t)n);
        /* nghttp2 keeps nothing of the buffer: it may move. */
        if ((size_t)n == L->rcap && L->rcap < RBUF_MAX) {
            char *bigger = hm_realloc(L->rbuf, L->rcap * 4);
            if (bigger) {
                L->rbuf = bigger;
                L->rcap *= 4;
            }
        }
        if (k == NGHTTP2_ERR_NOMEM) {
            h2l_link_die(L, -ENOMEM, HM_FAIL_OTHER, NULL);
            break;
        }
        if (k < 0) { /* fatal: a flood, or bytes that are no HTTP/2 */
            char why[160];
            L->bad_lib = (int)k;
            L->bad_hd = L->last_hd;
            L->bad_msg[0] = 0;
            h2l_proto_why(L, why, sizeof(why));
            h2l_link_die(L, -HM_EPROTO_HTTP, HM_FAIL_PROTOCOL, why);
            break;
        }
        if (nghttp2_session_want_write(L->ng)) h2l_link_kick(L);
        /* nghttp2 reads no more: the server's GOAWAY and every stream done,
         * or nghttp2 ended the session over a protocol error of the
         * server's (then streams are still waiting). */
        if (!nghttp2_session_want_read(L->ng)) {
            link_reads_done(L);
            break;
        }
    }
    L->reader = NULL;
    h2l_link_unref(L);
}

static void writer_main(void *arg)
{
    h2_link *L = arg;
    while (!L->dead) {
        while (L->obuf.len < OBUF_MAX) {
            const uint8_t *data;
            ssize_t n = nghttp2_session_mem_send(L->ng, &data);
            if (n < 0) {
                h2l_link_die(L, -HM_EPROTO_HTTP, HM_FAIL_PROTOCOL, nghttp2_strerror((int)n));
                break;
            }
            if (n == 0) break;
            if (hm_buf_append(&L->obuf, data, (size_t)n) < 0) {
                h2l_link_die(L, -ENOMEM, HM_FAIL_OTHER, NULL);
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
        if (w < 0 && !L->dead) h2l_link_die(L, (int)w, hm_fail_of_error((int)w), NULL);
        /* nghttp2 reads no more once its GOAWAY over a protocol error is
         * out: the reader, waiting for bytes, would not notice. */
        if (!L->dead && !nghttp2_session_want_read(L->ng) && !nghttp2_session_want_write(L->ng))
            link_reads_done(L);
    }
    L->writer = NULL;
    h2l_link_unref(L);
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
 * stream is reset and its waiter learns why, with the frame that did it. */
static void stream_abort(nghttp2_session *ng, h2_link *L, hm_h2_stream *s, int err)
{
    if (s->done) return;
    nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_CANCEL);
    const char *parser = hm_http_resp_error_reason(&s->c->resp);
    char why[160] = "";
    if (err == -HM_ETOOBIG && !s->got_head)
        snprintf(why, sizeof(why),
                 "HTTP/2 header list over the size limit (the response's HEADERS and "
                 "CONTINUATION frames)");
    else if (parser)
        snprintf(why, sizeof(why), "%s", parser);
    h2l_frame_evidence(s->c, &L->last_hd);
    stream_fail(s, err, hm_fail_of_error(err), why[0] ? why : NULL);
}

/* Counts a field into s's header list: true once it is over the limit. */
static inline bool list_over(hm_h2_stream *s, size_t nlen, size_t vlen)
{
    s->head_list += nlen + vlen + 32;
    return s->head_list > HEADER_LIST_MAX;
}

static __attribute__((noinline)) int on_field(nghttp2_session *ng, const nghttp2_frame *f,
                                              const uint8_t *name, size_t nlen, const uint8_t *val,
                                              size_t vlen, h2_link *L)
{
    hm_h2_stream *s = stream_of_frame(L, ng, f->hd.stream_id);
    if (!s || s->got_head) return 0; /* trailers are not kept */
    if (list_over(s, nlen, vlen)) {
        stream_abort(ng, L, s, -HM_ETOOBIG);
        return 0;
    }
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
    if (rc < 0) stream_abort(ng, L, s, rc);
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
    hm_h2_stream *s = L->cache_id == f->hd.stream_id ? L->cache_s : NULL;
    if (name[0] != ':' && s && s->status_only && (s->got_head || !list_over(s, nlen, vlen)))
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
        h2l_link_retire(L);
        return 0;
    }
    if (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA) return 0;
    hm_h2_stream *s = stream_of_frame(user, ng, f->hd.stream_id);
    if (!s) return 0;
    if (f->hd.type == NGHTTP2_HEADERS && !s->got_head) {
        int rc = hm_http_resp_push_head(&s->c->resp, s->status, 2);
        if (rc < 0) {
            stream_abort(ng, L, s, rc);
            return 0;
        }
        if (s->status >= 200) {
            s->got_head = true;
            /* Evidence as HTTP/1.1 keeps its status line: the frames are binary. */
            _Static_assert(HM_EVIDENCE_BYTES >= 12, "room for HTTP/2 NNN");
            hm_http_conn *c = s->c;
            char *head = hm_http_conn_head_room_(c);
            if (head) {
                memcpy(head, "HTTP/2 000\r\n", 12);
                head[7] = (char)('0' + s->status / 100 % 10);
                head[8] = (char)('0' + s->status / 10 % 10);
                head[9] = (char)('0' + s->status % 10);
                c->head_len = 12;
            }
            if (s->streaming) h2l_deadline_remove(s); /* the header deadline is met */
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
    if (rc < 0) stream_abort(ng, user, s, rc);
    return 0;
}

static int on_stream_close(nghttp2_session *ng, int32_t id, uint32_t code, void *user)
{
    h2_link *L = user;
    hm_h2_stream *s = nghttp2_session_get_stream_user_data(ng, id);
    if (L->cache_id == id) h2l_cache_forget(L);
    if (s) s->closed = true;
    if (!s || s->done) return 0;
    char why[160];
    if (code != NGHTTP2_NO_ERROR && s->bad_lib) {
        /* Not the server's reset: nghttp2's, over a frame of the server's
         * that broke HTTP/2 on this stream. */
        if (s->bad_hd.type == NGHTTP2_HEADERS && !s->got_head && !s->status)
            snprintf(why, sizeof(why),
                     "HTTP/2 protocol error by the server: a response HEADERS without :status "
                     "(RFC 9113 section 8.3.2)");
        else
            snprintf(why, sizeof(why), "HTTP/2 protocol error by the server: %s",
                     s->bad_msg[0] ? s->bad_msg : h2l_lib_words(s->bad_lib));
        h2l_frame_evidence(s->c, &s->bad_hd);
        stream_fail(s, -HM_EPROTO_HTTP, HM_FAIL_PROTOCOL, why);
    } else if (code == NGHTTP2_REFUSED_STREAM) {
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

static int on_begin_frame(nghttp2_session *ng, const nghttp2_frame_hd *hd, void *user)
{
    h2_link *L = user;
    L->last_hd = *hd;
    /* nghttp2's words are for the frame they came with (a stream keeps
     * its own copy); after its GOAWAY over an error, that GOAWAY's. */
    if (!L->sent_goaway_code) L->bad_msg[0] = 0;
    /* A SETTINGS first: the server speaks HTTP/2, even if what it says is wrong. */
    if (hd->type == NGHTTP2_SETTINGS && !(hd->flags & NGHTTP2_FLAG_ACK)) L->spoke = true;
    if (hd->type == NGHTTP2_HEADERS || hd->type == NGHTTP2_CONTINUATION) {
        /* A head's bytes (9 of frame header each) are an answer too: the
         * probe's "something answered". */
        hm_h2_stream *s = stream_of_frame(L, ng, hd->stream_id);
        if (!s) return 0;
        s->c->resp_bytes += 9 + hd->length;
        if (hd->type == NGHTTP2_HEADERS) s->head_block = s->head_list = 0;
        s->head_block += hd->length;
        if (s->head_block > HEADER_LIST_MAX && !s->got_head) stream_abort(ng, L, s, -HM_ETOOBIG);
    }
    return 0;
}

static int on_frame_not_send(nghttp2_session *ng, const nghttp2_frame *f, int lib_error, void *user)
{
    (void)lib_error;
    h2_link *L = user;
    if (f->hd.type != NGHTTP2_HEADERS) return 0;
    hm_h2_stream *s = stream_of_frame(L, ng, f->hd.stream_id);
    if (!s) return 0;
    /* Not allowed (NGHTTP2_ERR_START_STREAM_NOT_ALLOWED) with no GOAWAY of
     * the server's: nghttp2 is ending the connection over its error. */
    if (L->bad_lib && !L->goaway) {
        char why[160];
        h2l_proto_why(L, why, sizeof(why));
        if (!s->c->resp_bytes) s->c->resp_bytes = L->read_total;
        h2l_frame_evidence(s->c, &L->bad_hd);
        stream_fail(s, -HM_EPROTO_HTTP, HM_FAIL_PROTOCOL, why);
        return 0;
    }
    s->refused = true; /* the request never left */
    stream_fail(s, -HM_ECLOSED, HM_FAIL_CLOSED, "the HTTP/2 connection took no more streams");
    return 0;
}

ssize_t h2l_read_req_body(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
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

/* ---- failures in words (c->fail_why): hm_http_conn_word ------------------------------ */

/* A stream that failed with rc (c->fail set): why, when its origin said,
 * else words from the kind. Returns rc. */
int h2l_stream_words(hm_http_conn *c, int rc, const char *why, int64_t budget_ns, bool got_head)
{
    return hm_http_conn_word(c,
                             &(hm_http_failure){.rc = rc,
                                                .where = got_head ? HM_AT_RECEIVE : HM_AT_HEADERS,
                                                .budget_ns = budget_ns,
                                                .h2 = true,
                                                .why = why});
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
    nghttp2_session_callbacks_set_on_begin_frame_callback(cb, on_begin_frame);
    h2l_set_error_callbacks(cb);
    nghttp2_session *ng = NULL;
    int rc = nghttp2_session_client_new3(&ng, cb, L, NULL, hm_h2_mem());
    nghttp2_session_callbacks_del(cb);
    if (rc != 0) return NULL;
    const nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, HEADER_TABLE},
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, HEADER_LIST_MAX},
    };
    if (nghttp2_submit_settings(ng, NGHTTP2_FLAG_NONE, iv, HM_ARRAY_LEN(iv)) != 0 ||
        nghttp2_session_set_local_window_size(ng, NGHTTP2_FLAG_NONE, 0, CONN_WINDOW) != 0) {
        nghttp2_session_del(ng);
        return NULL;
    }
    return ng;
}

/* A new link for h, made by c's request (its connect and handshake are
 * c's to report). 0, or a negative error with c->fail (and c->fail_why when it knows more). */
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
        if (!hm_tls_selected_h2(L->tls)) {
            c->fail = HM_FAIL_PROTOCOL;
            hm_reason_set(
                &c->fail_why, HM_HTTP_WHY_BYTES,
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
        h2l_link_die(L, -ENOMEM, HM_FAIL_OTHER, NULL);
        h2l_link_unref(L);
        c->fail = HM_FAIL_OTHER;
        return -ENOMEM;
    }
    L->current = true;
    L->last_used_ns = hm_now_ns();
    h2l_link_kick(L); /* the preface and our SETTINGS */
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

h2_link *h2l_ready_link(hm_h2_conn *h)
{
    h2_link *L = h->link;
    if (!L || L->dead || L->goaway || !nghttp2_session_check_request_allowed(L->ng)) return NULL;
    if (!link_closed_by_peer(L)) return L;
    h2l_link_die(L, -HM_ECLOSED, HM_FAIL_CLOSED, "the server closed the HTTP/2 connection");
    return NULL;
}

/* The link c's next stream goes on, connecting one when there is none. */
int h2l_get_link(hm_http_conn *c, int64_t deadline, h2_link **out)
{
    hm_h2_conn *h = c->h2;
    for (;;) {
        h2_link *L = h2l_ready_link(h);
        if (L) {
            *out = L;
            return 0;
        }
        if (h->link) h2l_link_retire(h->link);
        if (h->connecting) {
            uint64_t gen = h->connect_gen;
            int rc = hm_wg_wait(&h->connect_wg, deadline);
            if (rc < 0) {
                c->fail = rc == -ETIMEDOUT ? HM_FAIL_TIMEOUT : HM_FAIL_OTHER;
                hm_reason_set(&c->fail_why, HM_HTTP_WHY_BYTES, "%s",
                              rc == -ETIMEDOUT ? "HTTP/2 connection not ready before the deadline"
                                               : "cancelled (the run was interrupted)");
                return rc;
            }
            if (h->connect_gen != gen && !h->link && h->connect_err < 0) {
                c->fail = h->connect_fail; /* the attempt it waited for failed */
                hm_reason_set(&c->fail_why, HM_HTTP_WHY_BYTES, "%s", h->connect_why);
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
        if (rc < 0)
            hm_http_conn_word(
                c, &(hm_http_failure){
                       .rc = rc, .where = HM_AT_CONNECT, .budget_ns = budget, .h2 = true});
        h->connect_fail = c->fail;
        snprintf(h->connect_why, sizeof(h->connect_why), "%s", hm_reason(c->fail_why));
        if (rc == 0) h->link = L;
        h->connecting = false;
        hm_wg_done(&h->connect_wg);
        if (rc < 0) return rc;
        *out = L;
        return 0;
    }
}
