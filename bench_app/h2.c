/* h2.c — bench_app --http2: HTTP/2 as php-via on OpenSwoole serves it
 * (open_http2_protocol: h2 through ALPN over TLS, and h2c with prior
 * knowledge on cleartext, withH2c()), on libnghttp2.
 *
 * A connection whose TLS handshake agreed on h2, or whose first bytes on a
 * cleartext port are the client preface, leaves server.c's HTTP/1.1 loop
 * for ba_h2_serve(). Its coroutine becomes the connection's reader: socket
 * bytes into nghttp2_session_mem_recv (through the quiet TLS read, so that
 * the writer coroutine stays the TLS socket's only writer). The writer takes
 * the frames nghttp2 has ready (nghttp2_session_mem_send) into obuf and
 * writes them; anyone may move frames into obuf (h2_pull) outside nghttp2's
 * callbacks, which keeps the order in which streams handed bytes over. A
 * patch an action delivers to an SSE stream is written at once, before the
 * action's answer, as OpenSwoole sends each frame as it is made: on
 * cleartext, when no write of the writer's is in flight, the delivering
 * coroutine writes obuf itself without blocking (h2_write_through).
 *
 * Each request is a stream with a ba_conn record of its own (no socket;
 * pooled, linked into app->conns so the stop ticker reaches it) and a
 * coroutine of its own, as OpenSwoole runs one per request. Its header
 * fields and body become the HTTP/1.1 request handlers.c reads, fed to the
 * record's request parser: the request line from :method and :path, Host
 * from :authority, one Cookie line joining the cookie crumbs (RFC 9113
 * 8.2.3), Content-Length from the DATA received. The handler answers
 * through server.c's response functions: the head is recorded here
 * (ba_h2_head), the body bytes reach nghttp2 through the stream's pending
 * buffer, which a data source reads and defers on when it is empty, so an
 * SSE stream stays open with a DATA frame per event, within the client's
 * flow-control windows. A write waits until nghttp2 has taken its bytes,
 * as a socket write waits for the kernel; so a client that stops reading
 * (its windows closed) blocks the stream's writer as a full socket does
 * over HTTP/1.1. A stream the client resets, or whose connection ends, is
 * marked gone and noticed at its next write, as php-via notices a vanished
 * client.
 *
 * Limits: a header section over max_header_bytes answers 431, a body over
 * max_body_bytes 413 (both after the request's end); nghttp2 answers
 * protocol errors (RST_STREAM, GOAWAY) and refuses streams beyond 128.
 *
 * Hostile clients: what a connection may make us queue and how long it may
 * hold us are bounded. Frames nghttp2 queues for a client that does not
 * read them (refusals of streams past the 128, resets, acks) stop at
 * H2_OUTQ_MAX beyond the 64 KiB taken ahead: then the connection is no
 * longer read until the writer brings them under it, and when it has
 * not within the header timeout, it ends with GOAWAY ENHANCE_YOUR_CALM,
 * as does one past nghttp2's flood limits (PING/SETTINGS acks piling up,
 * more than 8 CONTINUATIONs, a SETTINGS of more than 32 entries). Resets
 * the client sends are nghttp2's rate limit's (rapid reset,
 * CVE-2023-44487: a burst of 1000, then 33 a second), past which the
 * connection ends with GOAWAY ENHANCE_YOUR_CALM too (before_frame_send
 * puts it in place of nghttp2's INTERNAL_ERROR), and a stream reset
 * before its handler began never runs it. Deadlines, the HTTP/1.1 ones
 * on the same read: the preface and the client's first SETTINGS,
 * and each stream's header block (CONTINUATION included), must be
 * complete header_ns after the connection's first byte / the stream's
 * HEADERS, else GOAWAY ENHANCE_YOUR_CALM; a request body that gets no
 * DATA for the idle timeout resets its stream (CANCEL); a connection with
 * no stream open for the idle timeout (PINGs do not count) ends with
 * GOAWAY NO_ERROR. The writer's writes have the idle timeout as their
 * deadline, so a GOAWAY to a client that never reads holds the
 * connection no longer than that; after a GOAWAY the connection lingers
 * (ba_linger_close) so that its close does not reset the GOAWAY away.
 *
 * Memory: a ba_h2 per HTTP/2 connection and a ba_h2s per stream, both
 * hm_alloc'd; stream states are kept for reuse on their connection (their
 * buffers keep their capacity) and freed with it. The connection's
 * coroutine frees everything once the writer and every stream coroutine
 * have ended. Everything runs on the app's loop thread. */
#include "bench_app/internal.h"
#include "proto/h2.h"

#include <stdio.h>
#include <strings.h>

#define H2_MAX_STREAMS 128             /* OpenSwoole's max_concurrent_streams */
#define H2_WINDOW ((1u << 31) - 1)     /* OpenSwoole's initial window */
#define H2_OBUF_MAX ((size_t)64 << 10) /* frames taken ahead of the socket */
#define H2_SPARE_MAX 16                /* stream states kept per connection */
#define H2_MAX_NV 24
/* Frames queued in nghttp2 beyond obuf for a client that does not read
 * them: 128 streams' answers and acks fit many times over. */
#define H2_OUTQ_MAX 4096
#define H2_DRAIN_POLL_NS (1000 * 1000) /* how often a read waiting for the writer looks */
/* nghttp2's defaults for resets received (rapid reset), set explicitly. */
#define H2_RESET_BURST 1000
#define H2_RESET_RATE 33

struct ba_h2 {
    ba_conn *c; /* the connection record: socket, TLS, read buffer */
    ba_app *app;
    nghttp2_session *ng;
    hm_coro *writer;
    hm_chan *kick;     /* wakes the writer */
    ba_buf obuf, wbuf; /* frames taken from nghttp2 / being written */
    bool closing;      /* the reader is done: the writer flushes, then ends */
    bool dead;         /* nothing more goes to the socket */
    hm_waitgroup writer_wg;
    hm_waitgroup streams_wg; /* stream coroutines */
    ba_h2s *live;            /* streams with a record, doubly linked */
    size_t n_live;
    ba_h2s *spare; /* states kept for reuse */
    size_t n_spare;
    bool resets_recv;    /* the client has reset a stream (nghttp2's limit counts them) */
    int64_t settings_by; /* the preface and first SETTINGS are due (0: they came) */
    int64_t idle_by;     /* with no stream open: the connection ends then */
};

/* One field of a response head: offsets into hstore. */
typedef struct h2_field {
    uint32_t name_off, name_len, val_off, val_len;
} h2_field;

struct ba_h2s {
    ba_h2 *h2;
    ba_conn *s; /* the stream's record */
    ba_h2s *prev, *next;
    int32_t id;
    hm_chan *wake; /* a coroutine waiting for pend to be taken */
    bool started;  /* its coroutine was spawned */
    bool closed;   /* nghttp2 closed it (reset, ended, or the connection went) */
    bool submitted;
    bool deferred;     /* the data source waits for bytes */
    bool eof;          /* the body is complete */
    bool eof_taken;    /* nghttp2 has taken the stream's end */
    bool headers_done; /* its header block is complete */
    /* Until started: when the header block (or, after it, the body's next
     * DATA) is due; 0 once the stream was reset for missing it. */
    int64_t due;
    int reject; /* 431 or 413, decided while receiving; else 0 */
    size_t head_bytes;
    /* the request */
    char method[16];
    ba_buf path, authority, fields, cookie, body;
    bool has_host;
    /* the response */
    ba_buf hstore;
    h2_field hf[H2_MAX_NV];
    size_t n_hf;
    ba_buf pend; /* body bytes handed over, pend[pend_off, len) not taken yet */
    size_t pend_off;
};

/* ---- stream states -------------------------------------------------------- */

static ba_h2s *state_get(ba_h2 *h)
{
    ba_h2s *x = h->spare;
    if (x) {
        h->spare = x->next;
        h->n_spare--;
    } else {
        x = hm_calloc(1, sizeof(*x));
        if (!x) return NULL;
        if (hm_chan_create(&x->wake, 1) < 0) {
            hm_free(x);
            return NULL;
        }
    }
    void *tok;
    while (hm_chan_try_pop(x->wake, &tok) == 0) {
    }
    x->h2 = h;
    x->s = NULL;
    x->id = 0;
    x->started = x->closed = x->submitted = x->deferred = x->eof = x->eof_taken = false;
    x->headers_done = false;
    x->due = 0;
    x->has_host = false;
    x->reject = 0;
    x->head_bytes = 0;
    x->method[0] = '\0';
    x->path.len = x->authority.len = x->fields.len = x->cookie.len = x->body.len = 0;
    x->hstore.len = 0;
    x->n_hf = 0;
    x->pend.len = x->pend_off = 0;
    x->prev = NULL;
    x->next = h->live;
    if (h->live) h->live->prev = x;
    h->live = x;
    h->n_live++;
    return x;
}

static void state_free(ba_h2s *x)
{
    hm_chan_destroy(x->wake);
    ba_buf *bufs[] = {&x->path, &x->authority, &x->fields, &x->cookie,
                      &x->body, &x->hstore,    &x->pend};
    for (size_t i = 0; i < HM_ARRAY_LEN(bufs); i++)
        ba_buf_free(bufs[i]);
    hm_free(x);
}

/* Gives the stream's record back to the pool and its state to the spares. */
static void stream_release(ba_h2s *x)
{
    ba_h2 *h = x->h2;
    ba_conn *s = x->s;
    /* No callback may reach the record any more. */
    if (!x->closed && !h->dead) nghttp2_session_set_stream_user_data(h->ng, x->id, NULL);
    if (x->prev)
        x->prev->next = x->next;
    else
        h->live = x->next;
    if (x->next) x->next->prev = x->prev;
    if (--h->n_live == 0) h->idle_by = ba_deadline(h->app);
    if (s) {
        s->h2s = NULL;
        ba_conn_unlink(h->app, s);
        ba_conn_put(h->app, s);
    }
    if (h->n_spare < H2_SPARE_MAX && x->body.cap <= ((size_t)256 << 10) &&
        x->pend.cap <= ((size_t)256 << 10)) {
        x->next = h->spare;
        h->spare = x;
        h->n_spare++;
    } else {
        state_free(x);
    }
}

static bool conn_gone(const ba_h2 *h)
{
    return h->dead || h->closing;
}

/* ---- output --------------------------------------------------------------- */

/* Moves the frames nghttp2 has ready into obuf, up to H2_OBUF_MAX ahead of
 * the socket. Never from inside an nghttp2 callback. */
static void h2_pull(ba_h2 *h)
{
    while (!h->dead && h->obuf.len < H2_OBUF_MAX) {
        const uint8_t *data;
        ssize_t n = nghttp2_session_mem_send(h->ng, &data);
        if (n <= 0) {
            if (n < 0) h->closing = true; /* nghttp2 gave up on the session */
            return;
        }
        if (ba_buf_append(&h->obuf, data, (size_t)n) < 0) {
            h->dead = true;
            return;
        }
    }
}

/* OpenSwoole writes a stream's bytes to the socket as they are handed over,
 * so the patch an action pushes leaves before the action's answer: this
 * does too, without blocking, when the writer has no write in flight (it
 * would be out of order) and the connection is not TLS (its SSL is the
 * writer's). What the socket does not take stays in obuf for the writer. */
static void h2_write_through(ba_h2 *h)
{
    if (h->dead || h->c->tls || h->wbuf.len || !h->obuf.len) return;
    (void)ba_send_now(h->c, &h->obuf); /* a failure: the writer's own write meets it */
}

static void h2_kick(ba_h2 *h)
{
    hm_chan_try_push(h->kick, h); /* -EAGAIN: already kicked */
}

static void writer_main(void *arg)
{
    ba_h2 *h = arg;
    for (;;) {
        if (h->dead) break;
        h2_pull(h);
        if (!h->obuf.len) {
            /* nghttp2 is done once its GOAWAY is out (a client's protocol
             * error): the reader, waiting for bytes, must hear it. Out
             * means written, not just taken from nghttp2, which marks it
             * sent as it hands it over: another coroutine's h2_pull may
             * have taken it into obuf while our last write was in flight
             * (an io_uring write always waits for its completion), so
             * only an empty obuf says it went. */
            if (!nghttp2_session_want_read(h->ng) && !nghttp2_session_want_write(h->ng)) {
                h->closing = true;
                if (h->c->co) hm_coro_cancel(h->c->co); /* -ESRCH: it runs and sees closing */
                break;
            }
            if (h->closing) break;
            void *tok;
            if (hm_chan_pop(h->kick, &tok, 0) == -EPIPE) h->closing = true;
            continue;
        }
        ba_buf t = h->obuf;
        h->obuf = h->wbuf;
        h->wbuf = t;
        ssize_t w = ba_write(h->c, h->wbuf.data, h->wbuf.len, ba_deadline(h->app));
        h->wbuf.len = 0;
        if (w < 0) {
            h->dead = true;
            break;
        }
    }
    h->writer = NULL;
    hm_wg_done(&h->writer_wg);
}

/* What a stream's body source gives nghttp2: its pending bytes, the end
 * once the body is complete, else a deferral until more is handed over. */
static ssize_t read_body(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *user)
{
    (void)src, (void)user;
    ba_conn *s = nghttp2_session_get_stream_user_data(ng, id);
    if (!s) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* its record is gone: reset */
    ba_h2s *x = s->h2s;
    size_t avail = x->pend.len - x->pend_off;
    if (avail == 0 && !x->eof) {
        x->deferred = true;
        return NGHTTP2_ERR_DEFERRED;
    }
    size_t k = avail < length ? avail : length;
    if (k) memcpy(buf, x->pend.data + x->pend_off, k);
    x->pend_off += k;
    if (x->pend_off == x->pend.len) {
        x->pend.len = x->pend_off = 0;
        if (x->eof) {
            *flags |= NGHTTP2_DATA_FLAG_EOF;
            x->eof_taken = true;
        }
        hm_chan_try_push(x->wake, x);
    }
    return (ssize_t)k;
}

/* Gives nghttp2 what changed on the stream: the head with a body source
 * (or alone, ending the stream, when the body is empty and complete), or
 * more body for a deferred source; then frames it. 0 or -EPIPE. */
static int stream_push(ba_conn *s)
{
    ba_h2s *x = s->h2s;
    ba_h2 *h = x->h2;
    if (x->closed || conn_gone(h)) return -EPIPE;
    if (!x->submitted) {
        nghttp2_nv nv[H2_MAX_NV];
        for (size_t i = 0; i < x->n_hf; i++)
            nv[i] = (nghttp2_nv){
                .name = (uint8_t *)x->hstore.data + x->hf[i].name_off,
                .value = (uint8_t *)x->hstore.data + x->hf[i].val_off,
                .namelen = x->hf[i].name_len,
                .valuelen = x->hf[i].val_len,
                .flags = NGHTTP2_NV_FLAG_NONE,
            };
        bool body = x->pend.len > x->pend_off || !x->eof;
        nghttp2_data_provider dp = {.read_callback = read_body};
        if (nghttp2_submit_response(h->ng, x->id, nv, x->n_hf, body ? &dp : NULL) != 0)
            return -EPIPE;
        x->submitted = true;
        if (!body) x->eof_taken = true;
    } else if (x->deferred) {
        x->deferred = false;
        nghttp2_session_resume_data(h->ng, x->id);
    }
    h2_pull(h);
    h2_kick(h);
    return 0;
}

size_t ba_h2_unsent(const ba_conn *s)
{
    const ba_h2s *x = s->h2s;
    return x->pend.len - x->pend_off;
}

/* Resets the stream (a write timed out, or the handler dropped it). */
static void stream_reset(ba_h2s *x, uint32_t code)
{
    ba_h2 *h = x->h2;
    if (x->closed || conn_gone(h)) return;
    nghttp2_submit_rst_stream(h->ng, NGHTTP2_FLAG_NONE, x->id, code);
    h2_pull(h);
    h2_kick(h);
}

int ba_h2_drain(ba_conn *s, int64_t deadline)
{
    ba_h2s *x = s->h2s;
    while (!x->closed && !conn_gone(x->h2) &&
           (x->pend.len > x->pend_off || (x->eof && !x->eof_taken))) {
        void *tok;
        int rc = hm_chan_pop(x->wake, &tok, deadline);
        if (rc == -ETIMEDOUT) {
            stream_reset(x, NGHTTP2_CANCEL);
            return rc;
        }
        if (rc < 0) return rc;
    }
    return x->closed || conn_gone(x->h2) ? -EPIPE : 0;
}

ssize_t ba_h2_write(ba_conn *s, const void *buf, size_t len, int64_t deadline)
{
    ba_h2s *x = s->h2s;
    if (x->closed || conn_gone(x->h2)) return -EPIPE;
    if (len && ba_buf_append(&x->pend, buf, len) < 0) return -ENOMEM;
    int rc = stream_push(s);
    if (rc == 0) rc = ba_h2_drain(s, deadline);
    return rc < 0 ? rc : (ssize_t)len;
}

bool ba_h2_write_now(ba_conn *s)
{
    ba_h2s *x = s->h2s;
    if (x->closed || conn_gone(x->h2)) return false;
    /* The stream's own write, or bytes waiting for the window, go first. */
    if (s->ev.len || ba_h2_unsent(s) || !s->out.len) return true;
    if (ba_buf_append(&x->pend, s->out.data, s->out.len) < 0) return false;
    s->out.len = 0;
    if (stream_push(s) < 0) return false;
    h2_write_through(x->h2);
    return true;
}

static int hstore_add(ba_h2s *x, const char *name, size_t nlen, const char *val, size_t vlen)
{
    if (x->n_hf == H2_MAX_NV) return -EINVAL;
    if (ba_buf_reserve(&x->hstore, nlen + vlen + 2) < 0) return -ENOMEM;
    h2_field *f = &x->hf[x->n_hf++];
    f->name_off = (uint32_t)x->hstore.len;
    f->name_len = (uint32_t)nlen;
    hm_h2_lower(x->hstore.data + x->hstore.len, name, nlen);
    x->hstore.len += nlen;
    x->hstore.data[x->hstore.len++] = '\0';
    f->val_off = (uint32_t)x->hstore.len;
    f->val_len = (uint32_t)vlen;
    memcpy(x->hstore.data + x->hstore.len, val, vlen);
    x->hstore.len += vlen;
    x->hstore.data[x->hstore.len++] = '\0';
    return 0;
}

int ba_h2_head(ba_conn *s, int status, const hm_http_header *h, size_t n, long long content_length)
{
    ba_h2s *x = s->h2s;
    if (x->submitted) return -EINVAL; /* one head per stream */
    x->hstore.len = 0;
    x->n_hf = 0;
    char num[24];
    int k = snprintf(num, sizeof(num), "%d", status);
    int rc = hstore_add(x, ":status", 7, num, (size_t)k);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        size_t nl = strlen(h[i].name);
        if (hm_h2_dropped_field(h[i].name, nl)) continue;
        rc = hstore_add(x, h[i].name, nl, h[i].value, strlen(h[i].value));
    }
    if (rc == 0 && content_length >= 0) {
        k = snprintf(num, sizeof(num), "%lld", content_length);
        rc = hstore_add(x, "content-length", 14, num, (size_t)k);
    }
    return rc;
}

/* ---- a stream's life -------------------------------------------------------- */

/* After the handler: the rest of the answer with the stream's end, and the
 * wait until nghttp2 has taken it (the record holds the bytes); or, for a
 * dropped stream (an SSE stream that ended, a handler that failed), a
 * reset unless its end went out already. */
static void stream_finish(ba_conn *s, int end)
{
    ba_h2s *x = s->h2s;
    if (x->closed || conn_gone(x->h2)) return;
    if (end == BA_DROP) {
        if (!x->eof_taken) stream_reset(x, NGHTTP2_INTERNAL_ERROR);
        return;
    }
    if (!x->n_hf && ba_respond(s, 500, NULL, 0, "Internal Server Error", 21, false) < 0) {
        stream_reset(x, NGHTTP2_INTERNAL_ERROR);
        return;
    }
    if (s->out.len && ba_buf_append(&x->pend, s->out.data, s->out.len) < 0) {
        stream_reset(x, NGHTTP2_INTERNAL_ERROR);
        return;
    }
    s->out.len = 0;
    x->eof = true;
    if (stream_push(s) == 0) ba_h2_drain(s, ba_deadline(s->app));
}

static void stream_main(void *arg)
{
    ba_conn *s = arg;
    ba_h2s *x = s->h2s;
    ba_h2 *h = x->h2;
    ba_app *app = s->app;
    int end;
    if (x->closed) {
        /* Reset before its handler began (a rapid reset): no work for it. */
        end = BA_DROP;
    } else if (x->reject) {
        const char *text = hm_http_reason(x->reject);
        const hm_http_header ct[] = {{"Content-Type", "text/plain; charset=utf-8"}};
        end = ba_respond(s, x->reject, ct, 1, text, strlen(text), false) < 0 ? BA_DROP : BA_NEXT;
    } else {
        if (app->ws) atomic_fetch_add_explicit(&app->ws->requests, 1, memory_order_relaxed);
        end = app->handle(s);
    }
    stream_finish(s, end);
    stream_release(x);
    hm_wg_done(&h->streams_wg);
}

/* The request as HTTP/1.1 into s->raw, fed to the record's parser; a
 * request llhttp refuses answers 400 (431, 413 for its limits). */
static void compose_request(ba_h2s *x)
{
    ba_conn *s = x->s;
    ba_buf *r = &s->raw;
    r->len = 0;
    char num[32];
    int rc = ba_buf_lit(r, x->method);
    if (!rc) rc = ba_buf_lit(r, " ");
    if (!rc) rc = ba_buf_append(r, x->path.data, x->path.len);
    if (!rc) rc = ba_buf_lit(r, " HTTP/1.1\r\n");
    if (!rc && x->authority.len && !x->has_host) {
        rc = ba_buf_lit(r, "Host: ");
        if (!rc) rc = ba_buf_append(r, x->authority.data, x->authority.len);
        if (!rc) rc = ba_buf_lit(r, "\r\n");
    }
    if (!rc) rc = ba_buf_append(r, x->fields.data, x->fields.len);
    if (!rc && x->cookie.len) {
        rc = ba_buf_lit(r, "Cookie: ");
        if (!rc) rc = ba_buf_append(r, x->cookie.data, x->cookie.len);
        if (!rc) rc = ba_buf_lit(r, "\r\n");
    }
    snprintf(num, sizeof(num), "Content-Length: %zu\r\n\r\n", x->body.len);
    if (!rc) rc = ba_buf_lit(r, num);
    if (!rc) rc = ba_buf_append(r, x->body.data, x->body.len);
    if (rc) {
        x->reject = 500;
        return;
    }
    size_t consumed = 0, total = r->len;
    int prc = hm_http_req_feed(&s->req, r->data, total, &consumed);
    r->len = 0;
    if (prc == HM_HTTP_DONE && consumed == total) {
        s->keep_alive = true;
        if (s->req.body_len > ((size_t)256 << 10)) s->fat = true;
        return;
    }
    x->reject = prc == -HM_ETOOBIG ? (s->req.method_name[0] ? 413 : 431) : 400;
}

static void stream_start(ba_h2 *h, ba_h2s *x)
{
    if (x->started) return;
    x->started = true;
    if (!x->reject) {
        if (!x->method[0] || !x->path.len)
            x->reject = 400;
        else
            compose_request(x);
    }
    hm_wg_add(&h->streams_wg, 1);
    if (hm_coro_spawn(h->app->loop, stream_main, x->s, &x->s->co) < 0) {
        hm_wg_done(&h->streams_wg);
        stream_reset(x, NGHTTP2_INTERNAL_ERROR);
        x->started = false;
    }
}

/* ---- nghttp2's callbacks (they only record and wake; nothing blocks) --------- */

static int on_begin_headers(nghttp2_session *ng, const nghttp2_frame *f, void *user)
{
    ba_h2 *h = user;
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    ba_h2s *x = state_get(h);
    ba_conn *s = x ? ba_conn_get(h->app, false) : NULL;
    if (!s) {
        if (x) {
            x->closed = true; /* nothing of it reached nghttp2 */
            stream_release(x);
        }
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* the stream is reset */
    }
    s->id = h->c->id;
    s->h2s = x;
    s->keep_alive = true;
    ba_conn_link(h->app, s);
    x->s = s;
    x->id = f->hd.stream_id;
    x->due = hm_now_ns() + h->app->header_ns;
    nghttp2_session_set_stream_user_data(ng, x->id, s);
    return 0;
}

static int append_field(ba_h2s *x, const uint8_t *name, size_t nlen, const uint8_t *val,
                        size_t vlen)
{
    int rc = ba_buf_append(&x->fields, name, nlen);
    if (!rc) rc = ba_buf_lit(&x->fields, ": ");
    if (!rc) rc = ba_buf_append(&x->fields, val, vlen);
    if (!rc) rc = ba_buf_lit(&x->fields, "\r\n");
    return rc;
}

static int on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
                     const uint8_t *val, size_t vlen, uint8_t flags, void *user)
{
    (void)flags, (void)user;
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    ba_conn *s = nghttp2_session_get_stream_user_data(ng, f->hd.stream_id);
    if (!s) return 0;
    ba_h2s *x = s->h2s;
    /* Counted as HTTP/1.1 counts a header line. */
    x->head_bytes += nlen + vlen + 4;
    if (x->head_bytes > s->app->limits.max_header_bytes) x->reject = 431;
    if (x->reject) return 0;
    const char *n = (const char *)name;
    int rc = 0;
    if (nlen && n[0] == ':') {
        if (ba_str_eq(n, nlen, ":method")) {
            if (vlen >= sizeof(x->method)) {
                x->reject = 400;
                return 0;
            }
            memcpy(x->method, val, vlen);
            x->method[vlen] = '\0';
        } else if (ba_str_eq(n, nlen, ":path")) {
            x->path.len = 0;
            rc = ba_buf_append(&x->path, val, vlen);
        } else if (ba_str_eq(n, nlen, ":authority")) {
            x->authority.len = 0;
            rc = ba_buf_append(&x->authority, val, vlen);
        }
    } else if (ba_str_eq(n, nlen, "cookie")) {
        if (x->cookie.len) rc = ba_buf_lit(&x->cookie, "; ");
        if (!rc) rc = ba_buf_append(&x->cookie, val, vlen);
    } else if (ba_str_eq(n, nlen, "content-length")) {
        /* the DATA received says it (nghttp2 checks they agree) */
    } else {
        if (ba_str_eq(n, nlen, "host")) x->has_host = true;
        rc = append_field(x, name, nlen, val, vlen);
    }
    if (rc) x->reject = 500;
    return 0;
}

static int on_data_chunk(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data,
                         size_t len, void *user)
{
    (void)flags, (void)user;
    ba_conn *s = nghttp2_session_get_stream_user_data(ng, id);
    if (!s || s->h2s->reject) return 0;
    ba_h2s *x = s->h2s;
    if (len > s->app->limits.max_body_bytes - x->body.len) {
        x->reject = 413;
        return 0;
    }
    if (ba_buf_append(&x->body, data, len) < 0) x->reject = 500;
    return 0;
}

static int on_frame_recv(nghttp2_session *ng, const nghttp2_frame *f, void *user)
{
    ba_h2 *h = user;
    if (f->hd.type == NGHTTP2_SETTINGS && !(f->hd.flags & NGHTTP2_FLAG_ACK)) h->settings_by = 0;
    if (f->hd.type == NGHTTP2_RST_STREAM) h->resets_recv = true;
    if (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA) return 0;
    ba_conn *s = nghttp2_session_get_stream_user_data(ng, f->hd.stream_id);
    if (!s) return 0;
    ba_h2s *x = s->h2s;
    if (f->hd.flags & NGHTTP2_FLAG_END_STREAM) {
        stream_start(h, x);
    } else if (!x->started) {
        /* The header block is complete (or a DATA came): the body's next
         * DATA is due within the idle timeout, as a socket read is. */
        x->headers_done = true;
        if (x->due) x->due = hm_now_ns() + h->app->idle_ns;
    }
    return 0;
}

static int on_stream_close(nghttp2_session *ng, int32_t id, uint32_t code, void *user)
{
    (void)code, (void)user;
    ba_conn *s = nghttp2_session_get_stream_user_data(ng, id);
    if (!s) return 0;
    ba_h2s *x = s->h2s;
    x->closed = true;
    if (!x->started) {
        stream_release(x); /* reset before its request was complete */
        return 0;
    }
    if (!x->eof_taken) s->peer_gone = true;
    hm_chan_try_push(x->wake, x);
    return 0;
}

/* nghttp2's reset rate limit, passed (a rapid reset), queues a GOAWAY
 * INTERNAL_ERROR of its own and reads on until the streams below it end.
 * The only other GOAWAY INTERNAL_ERROR nghttp2 sends is over a response
 * head it cannot compress, and conn_end never sends one. That GOAWAY is
 * cancelled as it goes out, and the connection ends as the other floods
 * do: GOAWAY ENHANCE_YOUR_CALM, with the same last stream, nothing more
 * read. */
static int before_frame_send(nghttp2_session *ng, const nghttp2_frame *f, void *user)
{
    const ba_h2 *h = user;
    if (f->hd.type != NGHTTP2_GOAWAY || f->goaway.error_code != NGHTTP2_INTERNAL_ERROR ||
        !h->resets_recv)
        return 0;
    if (nghttp2_session_terminate_session2(ng, f->goaway.last_stream_id,
                                           NGHTTP2_ENHANCE_YOUR_CALM) != 0)
        return 0; /* out of memory: its own GOAWAY goes instead */
    return NGHTTP2_ERR_CANCEL;
}

/* ---- the connection ------------------------------------------------------------ */

/* The connection ended: every stream still alive is gone, and a writer or
 * a drain waiting for it wakes. */
static void mark_streams_gone(ba_h2 *h)
{
    for (ba_h2s *x = h->live; x; x = x->next) {
        x->closed = true;
        if (x->s && !x->eof_taken) x->s->peer_gone = true;
        hm_chan_try_push(x->wake, x);
    }
}

static nghttp2_session *new_session(ba_h2 *h)
{
    nghttp2_session_callbacks *cb;
    if (nghttp2_session_callbacks_new(&cb) != 0) return NULL;
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    nghttp2_session_callbacks_set_before_frame_send_callback(cb, before_frame_send);
    nghttp2_option *opt;
    if (nghttp2_option_new(&opt) != 0) {
        nghttp2_session_callbacks_del(cb);
        return NULL;
    }
    nghttp2_option_set_stream_reset_rate_limit(opt, H2_RESET_BURST, H2_RESET_RATE);
    nghttp2_session *ng = NULL;
    int rc = nghttp2_session_server_new3(&ng, cb, h, opt, hm_h2_mem());
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cb);
    if (rc != 0) return NULL;
    const nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2_MAX_STREAMS},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_WINDOW},
    };
    if (nghttp2_submit_settings(ng, NGHTTP2_FLAG_NONE, iv, HM_ARRAY_LEN(iv)) != 0 ||
        nghttp2_session_set_local_window_size(ng, NGHTTP2_FLAG_NONE, 0, (int32_t)H2_WINDOW) != 0) {
        nghttp2_session_del(ng);
        return NULL;
    }
    return ng;
}

/* Ends the session with GOAWAY code: nothing more is read, the writer
 * sends what is queued (the GOAWAY first) and closes. */
static void conn_end(ba_h2 *h, uint32_t code)
{
    nghttp2_session_terminate_session(h->ng, code);
    h2_pull(h);
    h2_kick(h);
}

/* Feeds received bytes; false when the session cannot go on. */
static bool feed(ba_h2 *h, const char *p, size_t n)
{
    ssize_t k = nghttp2_session_mem_recv(h->ng, (const uint8_t *)p, n);
    /* Past one of nghttp2's flood limits (acks not read, a CONTINUATION
     * flood, a SETTINGS of too many entries), nghttp2 just stops: say why. */
    if (k == NGHTTP2_ERR_FLOODED || k == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS ||
        k == NGHTTP2_ERR_TOO_MANY_SETTINGS)
        conn_end(h, NGHTTP2_ENHANCE_YOUR_CALM);
    if (k < 0) return false;
    h2_pull(h);
    /* The client does not read what it makes us send: stop reading it.
     * The writer may only be behind (a TLS read hands over record after
     * record before it gets a turn; an io_uring write is in flight while
     * the socket still has room): reading waits for it to bring the queue
     * under the bound, and the connection ends when it has not within the
     * header timeout. */
    int64_t drain_by = hm_now_ns() + h->app->header_ns;
    while (nghttp2_session_get_outbound_queue_size(h->ng) > H2_OUTQ_MAX) {
        if (!h->writer || conn_gone(h) || hm_now_ns() >= drain_by ||
            hm_coro_sleep(H2_DRAIN_POLL_NS) < 0) {
            conn_end(h, NGHTTP2_ENHANCE_YOUR_CALM);
            return false;
        }
        h2_pull(h);
        h2_kick(h);
    }
    if (h->obuf.len || nghttp2_session_want_write(h->ng)) h2_kick(h);
    return nghttp2_session_want_read(h->ng) || nghttp2_session_want_write(h->ng);
}

/* The deadline of the next read: the preface's, the idle one when no
 * stream is open, each incomplete request's; 0 (none) when every open
 * stream is being answered (an SSE stream may live as long as it likes). */
static int64_t read_deadline(const ba_h2 *h)
{
    int64_t d = ba_earlier(h->settings_by, h->n_live ? 0 : h->idle_by);
    for (const ba_h2s *x = h->live; x; x = x->next)
        if (!x->started) d = ba_earlier(d, x->due);
    return d;
}

/* A read's deadline passed: the connection ends when its preface or a
 * header block is late (ENHANCE_YOUR_CALM) or it stayed idle (NO_ERROR);
 * a request whose body stalled is reset. False when the connection ends. */
static bool expire(ba_h2 *h)
{
    int64_t now = hm_now_ns();
    if (h->settings_by && now >= h->settings_by) {
        conn_end(h, NGHTTP2_ENHANCE_YOUR_CALM);
        return false;
    }
    if (!h->n_live && h->idle_by && now >= h->idle_by) {
        conn_end(h, NGHTTP2_NO_ERROR);
        return false;
    }
    for (ba_h2s *x = h->live, *next; x; x = next) {
        next = x->next;
        if (x->started || !x->due || now < x->due) continue;
        if (!x->headers_done) {
            conn_end(h, NGHTTP2_ENHANCE_YOUR_CALM);
            return false;
        }
        x->due = 0; /* once: it is released when nghttp2 closes it */
        stream_reset(x, NGHTTP2_CANCEL);
    }
    return true;
}

void ba_h2_serve(ba_conn *c, const char *pre, size_t n, int64_t preface_by)
{
    ba_app *app = c->app;
    ba_h2 *h = hm_calloc(1, sizeof(*h));
    if (!h) return;
    h->c = c;
    h->app = app;
    h->settings_by = preface_by;
    h->idle_by = ba_deadline(app);
    hm_wg_init(&h->writer_wg);
    hm_wg_init(&h->streams_wg);
    h->ng = new_session(h);
    if (!h->ng || hm_chan_create(&h->kick, 1) < 0) goto out;
    c->h2 = h;
    hm_wg_add(&h->writer_wg, 1);
    if (hm_coro_spawn(app->loop, writer_main, h, &h->writer) < 0) {
        hm_wg_done(&h->writer_wg);
        goto out;
    }
    h2_kick(h); /* our SETTINGS */
    bool go = n == 0 || feed(h, pre, n);
    while (go && !app->stopping && !h->dead && !h->closing) {
        ssize_t r = ba_read_quiet(c, c->rbuf, sizeof(c->rbuf), read_deadline(h));
        if (r == -ECANCELED) continue; /* the stop ticker; the loop decides */
        if (r == -ETIMEDOUT) {
            go = expire(h);
            continue;
        }
        if (r <= 0) break; /* EOF, reset */
        go = feed(h, c->rbuf, (size_t)r);
    }
    /* When nghttp2 ended the session (a GOAWAY, its verdict on bad input),
     * what it queued goes out first; when the peer left or the server
     * stops, nothing more does. */
    if (go || app->stopping) h->dead = true;
    h->closing = true;
    hm_chan_close(h->kick);
    while (h->writer_wg.count > 0) {
        if ((h->dead || app->stopping) && h->writer) {
            h->dead = true;
            hm_coro_cancel(h->writer); /* -ESRCH: it is runnable and sees dead */
        }
        hm_wg_wait(&h->writer_wg, 0);
    }
    /* The writer sent nghttp2's last frames (a GOAWAY): let them reach a
     * client whose bytes we no longer read (a flood) before the close. */
    if (!h->dead && !app->stopping) ba_linger_close(c, SIZE_MAX);
    h->dead = true;
    mark_streams_gone(h);
    /* Streams end at their next write, as php-via's do; the stop ticker
     * cancels them (and this wait) each tick while stopping. */
    while (h->streams_wg.count > 0)
        hm_wg_wait(&h->streams_wg, 0);
    while (h->live) /* streams reset before their request was complete */
        stream_release(h->live);
out:
    c->h2 = NULL;
    if (h->ng) nghttp2_session_del(h->ng);
    hm_chan_destroy(h->kick);
    while (h->spare) {
        ba_h2s *x = h->spare;
        h->spare = x->next;
        state_free(x);
    }
    ba_buf_free(&h->obuf);
    ba_buf_free(&h->wbuf);
    hm_free(h);
}
