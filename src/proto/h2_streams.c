/* HTTP/2 requests as streams on a link (h2_internal.h), and the public
 * calls of h2_client.h: an exchange on a coroutine, and streams started
 * many to a coroutine (hm_h2_start / hm_h2_wait_done / hm_h2_finish). */
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
    if (L->cache_id == s->id) L->cache_id = 0;
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

/* ---- started streams: many on one coroutine ------------------------------------ */

/* One attempt of s's exchange: a link, the stream on it, its deadline. */
static int start_attempt(hm_http_conn *c, hm_h2_stream *s)
{
    for (;;) {
        hm_http_resp_begin(&c->resp, s->head);
        h2_link *L = NULL;
        int rc = h2l_get_link(c, s->xdeadline, &L);
        if (rc < 0) return rc; /* h2l_get_link said why */
        rc = stream_submit(L, s);
        if (rc == -EAGAIN && !s->retried) { /* the link is spent: the next one takes it */
            s->retried = true;
            h2l_link_retire(L);
            continue;
        }
        if (rc == 0) rc = h2l_deadline_add(s, s->xdeadline);
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
    h2l_deadline_remove(s);
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
    return h2l_stream_words(c, s->err, s->why, s->budget, s->got_head);
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
        if (c->h2) h2l_done_unlink(s);
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
