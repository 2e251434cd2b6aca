/* HTTP/2 requests as streams on a link (h2_internal.h), and the public
 * calls of h2_client.h: an exchange on a coroutine, and streams that
 * report through a done callback (hm_h2_conn_start), which one dispatcher
 * coroutine per handle submits and finishes. */
#include "proto/h2_client.h"
#include "proto/h2_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

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
    s->bad_lib = 0;
    s->body_off = 0;
    void *tok;
    while (hm_chan_len(s->wake) && hm_chan_try_pop(s->wake, &tok) == 0) {
    }
    nghttp2_data_provider dp = {.read_callback = h2l_read_req_body};
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
    h2l_link_kick(L);
    return 0;
}

/* The stream leaves its link; reset first when it is still open there
 * (its waiter gave up). */
static void stream_detach(hm_h2_stream *s, bool reset)
{
    h2_link *L = s->link;
    if (!L) return;
    if (L->cache_id == s->id) h2l_cache_forget(L);
    if (!L->dead && !s->closed) {
        if (reset) nghttp2_submit_rst_stream(L->ng, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_CANCEL);
        /* No frame of it reaches s any more. */
        nghttp2_session_set_stream_user_data(L->ng, s->id, NULL);
        if (reset) h2l_link_kick(L);
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
    h2l_link_unref(L);
}

/* One request as a stream: connect when needed, submit, wait until the
 * response is complete (or, streaming, until the body ends), within the
 * deadline (streaming: the header deadline only). */
static int run_stream(hm_http_conn *c, const char *req, size_t len, bool idempotent, bool head,
                      int64_t deadline, bool streaming)
{
    c->fail = HM_FAIL_NONE;
    hm_reason_clear(&c->fail_why);
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
        hm_reason_set(&c->fail_why, HM_HTTP_WHY_BYTES, "the request cannot be sent over HTTP/2");
        return -EINVAL;
    }
    s->streaming = streaming;
    s->async = false;
    s->status_only = false;
    bool retried = false;
again:;
    hm_http_resp_begin(&c->resp, head);
    h2_link *L = NULL;
    int rc = h2l_get_link(c, deadline, &L);
    if (rc < 0) return rc; /* h2l_get_link said why */
    rc = stream_submit(L, s);
    if (rc == -EAGAIN && !retried) { /* the link is spent: the next one takes it */
        retried = true;
        h2l_link_retire(L);
        goto again;
    }
    if (rc < 0) {
        c->fail = HM_FAIL_OTHER;
        return rc;
    }
    if (h2l_deadline_add(s, deadline) < 0) {
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
            h2l_deadline_remove(s);
            stream_detach(s, true); /* cancelled: the stream is reset */
            c->fail = hm_fail_of_error(rc);
            return h2l_stream_words(c, rc, NULL, budget, s->got_head);
        }
    }
    h2l_deadline_remove(s);
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
        return h2l_stream_words(c, s->err, s->why, budget, s->got_head);
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

/* The outcome of c's done stream once it has left its link: 0, a
 * negative error worded in c, or -EINPROGRESS when it is to be sent once
 * more (refused, or idempotent and its connection died before any
 * answer), as run_stream decides. */
static int stream_outcome(hm_http_conn *c)
{
    hm_h2_stream *s = c->h2s;
    h2l_deadline_remove(s);
    stream_detach(s, s->expired);
    if (!s->err) return 0;
    bool again_ok =
        !s->retried && (s->refused || (s->idempotent && !s->got_head &&
                                       (s->fail == HM_FAIL_CLOSED || s->fail == HM_FAIL_RESET)));
    if (again_ok) {
        s->retried = true;
        c->retries++;
        return -EINPROGRESS;
    }
    c->fail = s->fail;
    return h2l_stream_words(c, s->err, s->why, s->budget, s->got_head);
}

/* ---- streams that report through a done callback --------------------------------- */

static void pend_push(hm_h2_conn *h, hm_h2_stream *s)
{
    s->pending = true;
    s->pend_next = NULL;
    if (h->pend_tail)
        h->pend_tail->pend_next = s;
    else
        h->pend_head = s;
    h->pend_tail = s;
}

static hm_h2_stream *pend_pop(hm_h2_conn *h)
{
    hm_h2_stream *s = h->pend_head;
    if (!s) return NULL;
    h->pend_head = s->pend_next;
    if (!h->pend_head) h->pend_tail = NULL;
    s->pending = false;
    return s;
}

static void pend_unlink(hm_h2_conn *h, hm_h2_stream *s)
{
    if (!s->pending) return;
    hm_h2_stream **pp = &h->pend_head, *prev = NULL;
    while (*pp && *pp != s) {
        prev = *pp;
        pp = &(*pp)->pend_next;
    }
    if (*pp) *pp = s->pend_next;
    if (h->pend_tail == s) h->pend_tail = prev;
    s->pending = false;
}

/* Tells whoever started s how it ended; s's conn may be freed by then. */
static void report(hm_h2_stream *s, int rc)
{
    s->cb_busy = false;
    if (s->streaming) hm_http_resp_set_callbacks(&s->c->resp, NULL, NULL, NULL);
    s->done_fn(s->c, rc, s->done_user);
}

/* The connect the dispatcher made on dconn counts for c, the conn whose
 * stream waited for it (as a coroutine's stream counts its own). */
static void credit_connect(hm_http_conn *c, hm_http_conn *d)
{
    c->connect_ns = d->connect_ns;
    c->tls_ns = d->tls_ns;
    c->connects += d->connects;
    c->reconnects += d->reconnects;
    c->bytes_read += d->bytes_read;
    c->bytes_written += d->bytes_written;
    d->connect_ns = d->tls_ns = 0;
    d->connects = d->reconnects = 0;
    d->bytes_read = d->bytes_written = 0;
}

/* Puts the waiting streams on a link, connecting one first when there is
 * none (the one wait of the dispatcher besides its kick). */
static void submit_pending(hm_h2_conn *h)
{
    h2_link *L = h2l_ready_link(h);
    if (!L) {
        hm_http_conn *d = &h->dconn;
        d->fail = HM_FAIL_NONE;
        hm_reason_clear(&d->fail_why);
        d->resp_bytes = 0;
        int rc = h2l_get_link(d, h->pend_head->xdeadline, &L);
        if (h->freeing) return;
        if (h->pend_head) credit_connect(h->pend_head->c, d);
        if (rc < 0) { /* every stream waiting for it fails as it did */
            for (hm_h2_stream *s; (s = pend_pop(h));) {
                s->c->fail = d->fail;
                hm_reason_set(&s->c->fail_why, HM_HTTP_WHY_BYTES, "%s", hm_reason(d->fail_why));
                report(s, rc);
            }
            return;
        }
    }
    while (h->pend_head && (L = h2l_ready_link(h))) {
        hm_h2_stream *s = pend_pop(h);
        hm_http_conn *c = s->c;
        int rc = s->start_err;
        s->start_err = 0;
        if (rc == 0) {
            hm_http_resp_begin(&c->resp, s->head);
            rc = stream_submit(L, s);
            if (rc == -EAGAIN && !s->retried) { /* the link is spent: the next one takes it */
                s->retried = true;
                h2l_link_retire(L);
                s->pend_next = h->pend_head;
                s->pending = true;
                h->pend_head = s;
                if (!h->pend_tail) h->pend_tail = s;
                return;
            }
            if (rc == 0) rc = h2l_deadline_add(s, s->xdeadline);
            if (rc < 0) {
                stream_detach(s, true);
                c->fail = HM_FAIL_OTHER;
                hm_reason_set(&c->fail_why, HM_HTTP_WHY_BYTES, "%s", hm_strerror(rc));
            }
        }
        if (rc < 0) report(s, rc);
    }
}

/* The done stream first in line: reported, or queued to go again. */
static void finish_done(hm_h2_conn *h)
{
    hm_h2_stream *s = h->done_head;
    h->done_head = s->done_next;
    if (!h->done_head) h->done_tail = NULL;
    s->on_done = false;
    int rc = stream_outcome(s->c);
    if (rc == -EINPROGRESS) {
        pend_push(h, s);
        return;
    }
    report(s, rc);
}

static void handle_free_now(hm_h2_conn *h);

/* One per handle with callback streams, on the loop: streams wait on
 * lists, not on stacks of their own. */
static void dispatch_main(void *p)
{
    hm_h2_conn *h = p;
    bool stop_seen = false;
    while (!h->freeing) {
        if (h->pend_head) {
            submit_pending(h);
            continue;
        }
        if (h->done_head) {
            finish_done(h);
            continue;
        }
        void *tok;
        int rc = hm_chan_pop(h->done_kick, &tok, 0); /* the sweeper keeps the deadlines */
        /* The first Ctrl-C lets the streams in flight finish (see run_stream);
         * after that, or on an abort, their owners stop them. */
        if (rc == -ECANCELED && !stop_seen && hm_interrupt_current() == HM_INTERRUPT_STOP) {
            stop_seen = true;
            continue;
        }
        if (rc < 0) break;
    }
    h->dispatcher = NULL;
    if (h->freeing) handle_free_now(h);
}

/* hm_h2_conn_start, and with on_body (a stream's callbacks) set
 * hm_h2_conn_stream_start. */
static int start_stream(hm_http_conn *c, hm_loop *loop, const char *req, size_t len,
                        const hm_http_xopts *o, hm_http_done_fn done, void *user,
                        hm_http_resp_headers_fn on_headers, hm_http_body_fn on_body, void *cb_user)
{
    if (!c->h2) {
        int rc = hm_h2_conn_create(&c->h2, c->target);
        if (rc < 0) return rc;
        c->h2_own = true;
    }
    hm_h2_conn *h = c->h2;
    hm_h2_stream *s = stream_state(c);
    if (!s) return -ENOMEM;
    if (s->cb_busy || s->link) return -EBUSY;
    if (!h->done_kick && hm_chan_create(&h->done_kick, 1) < 0) return -ENOMEM;
    if (!h->dconn_ready) {
        hm_http_conn_init_shared(&h->dconn, h->target, NULL, h);
        h->dconn_ready = true;
    }
    if (!h->dispatcher) {
        int rc = hm_coro_spawn(loop, dispatch_main, h, &h->dispatcher);
        if (rc < 0) return rc;
    }
    c->fail = HM_FAIL_NONE;
    hm_reason_clear(&c->fail_why);
    c->head_len = 0;
    c->resp_bytes = 0;
    c->body_bytes = 0;
    c->connect_ns = 0;
    c->tls_ns = 0;
    s->start_err = 0;
    /* A request that outlives the loop and was parsed last time is the same. */
    if (!(o->req_outlives && req == s->req_src && s->req_copy.len == len)) {
        s->req_src = NULL;
        if (prepare_request(s, c->target, req, len) < 0) {
            c->fail = HM_FAIL_OTHER;
            hm_reason_set(&c->fail_why, HM_HTTP_WHY_BYTES,
                          "the request cannot be sent over HTTP/2");
            s->start_err = -EINVAL; /* reported from the loop, never inside the start */
        } else if (o->req_outlives) {
            s->req_src = req;
        }
    }
    if (on_body)
        hm_http_resp_set_callbacks(&c->resp, on_headers, on_body, cb_user);
    else
        hm_http_resp_set_callbacks(&c->resp, NULL, o->discard_body ? count_body : NULL, c);
    s->async = true;
    s->status_only = o->status_only || o->no_headers;
    s->streaming = on_body != NULL;
    s->retried = false;
    s->idempotent = o->idempotent;
    s->head = o->head;
    /* A FIFO of deadlines (timeq) is HTTP/1.1's; a stream's is its own. */
    int64_t span = o->timeq ? o->timeq->duration : o->span_ns;
    s->xdeadline = o->timeq ? hm_now_ns() + span : o->deadline;
    s->budget = span ? span : o->deadline > 0 ? o->deadline - hm_now_ns() : 0;
    s->done_fn = done;
    s->done_user = user;
    s->cb_busy = true;
    pend_push(h, s);
    hm_chan_try_push(h->done_kick, h); /* -EAGAIN: already kicked */
    return 0;
}

int hm_h2_conn_start(hm_http_conn *c, hm_loop *loop, const char *req, size_t len,
                     const hm_http_xopts *o, hm_http_done_fn done, void *user)
{
    return start_stream(c, loop, req, len, o, done, user, NULL, NULL, NULL);
}

int hm_h2_conn_stream_start(hm_http_conn *c, hm_loop *loop, const char *req, size_t len,
                            int64_t header_deadline, hm_http_resp_headers_fn on_headers,
                            hm_http_body_fn on_body, void *user, hm_http_done_fn done,
                            void *done_user)
{
    /* Sent again only when refused, as hm_h2_exchange_stream's (not
     * idempotent here: a stream is not re-sent because its connection died). */
    const hm_http_xopts o = {.deadline = header_deadline};
    return start_stream(c, loop, req, len, &o, done, done_user, on_headers, on_body, user);
}

bool hm_h2_busy(const hm_http_conn *c)
{
    return c->h2s && c->h2s->cb_busy;
}

void hm_h2_stop(hm_http_conn *c)
{
    hm_h2_stream *s = c->h2s;
    if (!s || !s->cb_busy) return;
    s->cb_busy = false;
    pend_unlink(c->h2, s);
    h2l_deadline_remove(s);
    h2l_done_unlink(s);
    stream_detach(s, true);
    if (s->streaming) hm_http_resp_set_callbacks(&c->resp, NULL, NULL, NULL);
}

const hm_tls *hm_h2_conn_tls(const hm_http_conn *c)
{
    return c->h2 ? c->h2->tls : NULL;
}

void hm_h2_conn_close(hm_http_conn *c)
{
    if (c->h2s) stream_detach(c->h2s, true);
    if (!c->h2 || !c->h2_own || !c->h2->link) return;
    h2l_link_die(c->h2->link, -HM_ECLOSED, HM_FAIL_CLOSED, "the connection was closed");
}

void hm_h2_conn_release(hm_http_conn *c)
{
    hm_h2_stream *s = c->h2s;
    if (s) {
        h2l_deadline_remove(s);
        if (c->h2) {
            h2l_done_unlink(s);
            pend_unlink(c->h2, s);
        }
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
    if (h->dispatcher) { /* it may be inside a connect: it frees h on leaving */
        h->freeing = true;
        if (h->link)
            h2l_link_die(h->link, -HM_ECLOSED, HM_FAIL_CLOSED, "the connection was closed");
        hm_coro_cancel(h->dispatcher);
        return;
    }
    handle_free_now(h);
}

static void handle_free_now(hm_h2_conn *h)
{
    if (h->dconn_ready) hm_http_conn_free(&h->dconn);
    if (h->link) h2l_link_die(h->link, -HM_ECLOSED, HM_FAIL_CLOSED, "the connection was closed");
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
