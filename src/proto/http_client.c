/* Keep-alive HTTP/1.1 client connections: connect on demand, send, parse,
 * as one state machine the loop's callbacks drive (the connect's callback,
 * the socket's reader, the deadline's timer). Over TLS the reader's
 * ciphertext goes through tls.c's filter first. A coroutine's exchange is
 * the same machine, started and then waited for. A conn whose target is
 * HTTP/2 hands each request to h2_client.c. */
#include "proto/http_client.h"

#include "proto/h2_client.h"
#include "proto/url.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* A keep-alive connection idle for longer than this is checked for a
 * server-side close before reuse, so a request is not written into a
 * connection the server already dropped. */
#define IDLE_CHECK_NS (10LL * 1000 * 1000)
/* TLS decrypts into one buffer per thread (a record at most), whose bytes
 * the parser takes before the reader returns: a connection owns no read
 * buffer, over TLS as over plain TCP. */
#define TLS_PLAIN_MAX (16 * 1024)
static _Thread_local char tls_plain[TLS_PLAIN_MAX];

void hm_http_conn_init(hm_http_conn *c, const hm_http_target *t, const hm_http_limits *lim)
{
    memset(c, 0, sizeof(*c));
    c->target = t;
    hm_http_resp_init(&c->resp, lim);
    /* Coded bodies are decoded whether or not the requests offered codings:
     * without Accept-Encoding any coding is acceptable (RFC 9110 §12.5.3),
     * and a page or stream read raw would fail later for a wrong reason. */
    hm_http_resp_set_decoding(&c->resp, true);
}

void hm_http_conn_init_shared(hm_http_conn *c, const hm_http_target *t, const hm_http_limits *lim,
                              hm_h2_conn *h2)
{
    hm_http_conn_init(c, t, lim);
    c->h2 = h2;
}

void hm_http_conn_close(hm_http_conn *c)
{
    if (c->target->http2) {
        hm_h2_conn_close(c);
        return;
    }
    if (c->tls) hm_tls_reset(c->tls);
    if (c->sock) {
        hm_sock_close(c->sock);
        c->sock = NULL;
    }
}

/* The evidence goes (made again at the next response byte). */
static void forget_head(hm_http_conn *c)
{
    hm_free(c->head);
    c->head = NULL;
    c->head_len = 0;
}

void hm_http_conn_free(hm_http_conn *c)
{
    if (c->target->http2) hm_h2_conn_release(c);
    hm_http_conn_stop(c);
    hm_http_conn_close(c);
    hm_tls_free(c->tls);
    c->tls = NULL;
    hm_http_resp_free(&c->resp);
    hm_reason_clear(&c->fail_why);
    forget_head(c);
}

void hm_http_conn_release(hm_http_conn *c)
{
    hm_http_resp_release(&c->resp);
    forget_head(c);
    if (c->tls && !c->target->http2) hm_tls_drop_buffers(c->tls);
}

char *hm_http_conn_head_room_(hm_http_conn *c)
{
    if (!c->head) c->head = hm_alloc(HM_EVIDENCE_BYTES);
    return c->head;
}

/* What a request was doing when it failed (hm_http_where). */
typedef hm_http_where phase;
#define PH_SEND HM_AT_SEND
#define PH_RECEIVE HM_AT_RECEIVE
#define PH_HEADERS HM_AT_HEADERS

/* A request begins: its evidence and byte counts start afresh. */
static void request_start(hm_http_conn *c)
{
    c->fail = HM_FAIL_NONE;
    hm_reason_clear(&c->fail_why);
    c->head_len = 0;
    c->resp_bytes = 0;
    c->body_bytes = 0;
}

/* Classifies a failure into c->fail and words it. budget_ns: the
 * deadline's span. */
static int failed(hm_http_conn *c, int rc, phase ph, int64_t budget_ns)
{
    c->fail = rc == -HM_ESTATUS ? HM_FAIL_OTHER : hm_fail_of_error(rc);
    return hm_http_conn_word(c, &(hm_http_failure){.rc = rc, .where = ph, .budget_ns = budget_ns});
}

/* The connect or the TLS handshake failed, c->fail says which. */
static int connect_failed(hm_http_conn *c, int rc, int64_t budget_ns)
{
    return hm_http_conn_word(
        c, &(hm_http_failure){.rc = rc, .where = HM_AT_CONNECT, .budget_ns = budget_ns});
}

/* Bytes after a complete response (a and b: the two places they were
 * found, total: how many there are): the reason, and the first of them as
 * evidence. */
static void unsolicited(hm_http_conn *c, const char *a, size_t a_len, const char *b, size_t b_len,
                        size_t total)
{
    hm_reason_set(&c->fail_why, HM_HTTP_WHY_BYTES,
                  "%zu unsolicited bytes after a complete HTTP %d response", total, c->resp.status);
    char *head = hm_http_conn_head_room_(c);
    if (!head) return;
    size_t k = a_len < HM_EVIDENCE_BYTES ? a_len : HM_EVIDENCE_BYTES;
    if (k) memcpy(head, a, k);
    size_t k2 = b_len < HM_EVIDENCE_BYTES - k ? b_len : HM_EVIDENCE_BYTES - k;
    if (k2) memcpy(head + k, b, k2);
    c->head_len = (uint8_t)(k + k2);
}

const char *hm_http_conn_fail_reason(const hm_http_conn *c, int err)
{
    if (hm_reason(c->fail_why)[0]) return c->fail_why;
    const hm_tls *tls = hm_http_conn_tls(c);
    if (c->fail == HM_FAIL_TLS && tls && hm_tls_last_reason(tls)[0]) return hm_tls_last_reason(tls);
    return hm_strerror(err);
}

const hm_tls *hm_http_conn_tls(const hm_http_conn *c)
{
    return c->target->http2 ? hm_h2_conn_tls(c) : c->tls;
}

static int count_body(void *user, const char *at, size_t len)
{
    hm_http_conn *c = user;
    (void)at;
    c->body_bytes += len;
    return 0;
}

/* ---- the exchange ------------------------------------------------------------
 *
 * Its rules: the idle check before reuse, the retry rule, the words in
 * c->fail_why. States: connecting, the TLS handshake (https), waiting for the
 * response (the request is sent on entry), and a failure found inside a
 * start, reported from the loop. */

enum { AS_IDLE, AS_CONNECTING, AS_HANDSHAKE, AS_WAITING, AS_FAILING };

static void as_go(hm_http_conn *c);

/* The phase a failure while waiting is worded for. */
static phase as_phase(const hm_http_conn *c)
{
    return c->as_.stream && !c->resp.status ? PH_HEADERS : PH_RECEIVE;
}

/* Frees the exchange's own copy of its request, if it has one. */
static void as_drop_copy(hm_http_async_ *as)
{
    if (!as->req_owned) return;
    hm_free((char *)as->req);
    as->req = NULL;
    as->req_owned = false;
}

/* The exchange ends: done may start the next one on c, so nothing touches
 * c after it. */
static void as_finish(hm_http_conn *c, int rc)
{
    hm_http_async_ *as = &c->as_;
    hm_timer_disarm(&c->timer_);
    as->state = AS_IDLE;
    as_drop_copy(as);
    if (as->stream) hm_http_resp_set_callbacks(&c->resp, NULL, NULL, NULL);
    if (rc == 0) c->last_used_ns = hm_loop_now(c->loop_);
    as->done(c, rc, as->user);
}

static void as_fail(hm_http_conn *c, int rc, phase ph)
{
    hm_http_conn_close(c);
    failed(c, rc, ph, c->as_.budget);
    as_finish(c, rc);
}

/* The connect or the TLS handshake failed (c->fail says which). */
static void as_connect_fail(hm_http_conn *c, int rc)
{
    hm_http_conn_close(c);
    connect_failed(c, rc, c->as_.budget);
    as_finish(c, rc);
}

static void as_tls_fail(hm_http_conn *c, int rc)
{
    c->fail = rc == -ETIMEDOUT ? HM_FAIL_TIMEOUT : HM_FAIL_TLS;
    as_connect_fail(c, rc);
}

static void as_retry(hm_http_conn *c)
{
    hm_http_conn_close(c);
    c->as_.retried = true;
    c->retries++;
    as_go(c);
}

static void as_timer(hm_timer *t)
{
    hm_http_conn *c = HM_CONTAINER_OF(t, hm_http_conn, timer_);
    hm_http_async_ *as = &c->as_;
    switch (as->state) {
    case AS_FAILING: /* a failure found inside a start, reported from the loop */
        as_finish(c, as->rc);
        return;
    case AS_CONNECTING:
        c->fail = HM_FAIL_CONNECT;
        as_connect_fail(c, -ETIMEDOUT);
        return;
    case AS_HANDSHAKE:
        hm_tls_peer_ended(c->tls, -ETIMEDOUT);
        as_tls_fail(c, -ETIMEDOUT);
        return;
    default:
        as_fail(c, -ETIMEDOUT, as_phase(c));
    }
}

/* Bytes a complete response left behind in the transport (we never
 * pipeline, so they answer nothing we sent): their count, the first of
 * them copied to first (*first_len of them). *reusable false: the
 * transport ended or failed behind the response. */
static size_t as_leftover(hm_http_conn *c, char *first, size_t cap, size_t *first_len,
                          bool *reusable)
{
    *first_len = 0;
    if (!c->tls) return hm_sock_queued(c->sock, first, cap, first_len);
    if (!hm_tls_has_input(c->tls)) return 0;
    /* A record in the same arrival: a ticket (taken, nothing to show), a
     * close_notify, or bytes of an answer nobody asked for. */
    ssize_t n = hm_tls_take(c->tls, first, cap);
    if (n > 0) {
        *first_len = (size_t)n;
        return (size_t)n + hm_tls_plain_pending(c->tls);
    }
    if (n != -EAGAIN) *reusable = false;
    return 0;
}

/* Response bytes (plaintext) for the parser. True while the response goes
 * on; false once the exchange ended (c may be in the next one). */
static bool as_bytes(hm_http_conn *c, const char *data, size_t n)
{
    hm_http_async_ *as = &c->as_;
    c->bytes_read += n;
    c->resp_bytes += n;
    if (c->head_len < HM_EVIDENCE_BYTES && hm_http_conn_head_room_(c)) {
        size_t k = HM_EVIDENCE_BYTES - c->head_len;
        if (k > n) k = n;
        memcpy(c->head + c->head_len, data, k);
        c->head_len = (uint8_t)(c->head_len + k);
    }
    as->got_bytes = true;
    size_t consumed = 0;
    int rc = hm_http_resp_feed(&c->resp, data, n, &consumed);
    if (rc < 0) {
        as_fail(c, rc, as_phase(c));
        return false;
    }
    if (rc == HM_HTTP_NEED_MORE) {
        /* a stream's deadline covers the headers only */
        if (as->stream && c->resp.status) hm_timer_disarm(&c->timer_);
        return true;
    }
    bool reusable = hm_http_resp_reusable(&c->resp);
    if (!as->stream) {
        char later_copy[HM_EVIDENCE_BYTES];
        size_t later_len = 0;
        size_t later = as_leftover(c, later_copy, sizeof(later_copy), &later_len, &reusable);
        if (consumed < n || later) {
            /* These bytes answer nothing we sent (later: the rest of the
             * same arrival, in a later piece or record): the connection
             * cannot tell answers apart any more. */
            unsolicited(c, data + consumed, n - consumed, later_copy, later_len,
                        n - consumed + later);
            as_fail(c, -HM_EPROTO_HTTP, PH_RECEIVE);
            return false;
        }
    }
    if (as->stream || !reusable) hm_http_conn_close(c);
    as_finish(c, 0);
    return false;
}

/* The transport ended while waiting: rc 0 at EOF (or a TLS close_notify),
 * else its negative error. */
static void as_end(hm_http_conn *c, int rc)
{
    hm_http_async_ *as = &c->as_;
    if (rc == 0) {
        rc = hm_http_resp_finish(&c->resp);
        hm_http_conn_close(c);
        if (rc == HM_HTTP_DONE) {
            as_finish(c, 0);
            return;
        }
        if (rc >= 0) rc = -HM_ECLOSED;
    } else {
        bool none = false;
        bool send_failed = hm_sock_send_error(c->sock, &none) == rc;
        hm_http_conn_close(c);
        if (send_failed && none && !as->got_bytes && !as->retried && !as->stream) {
            /* The detached send failed before any byte left: as a failed
             * write with nothing sent, it may go again. */
            c->bytes_written -= as->len;
            as_retry(c);
            return;
        }
    }
    /* A reused connection that closed before answering: the server dropped
     * it; only a request safe to repeat goes again (a TLS failure is no
     * idle close). */
    if (as->reused && !as->got_bytes && as->idempotent && !as->retried && !as->stream &&
        rc != -HM_ETLS) {
        as_retry(c);
        return;
    }
    as_fail(c, rc, as_phase(c));
}

static void as_send(hm_http_conn *c);

/* One step of the TLS handshake, after the connect or the server's bytes. */
static void as_handshake(hm_http_conn *c)
{
    int rc = hm_tls_handshake_step(c->tls);
    if (rc == 0) { /* our flight out, then the server's answer */
        rc = hm_tls_send_pending(c->tls, c->sock);
        if (rc < 0) as_tls_fail(c, hm_tls_peer_ended(c->tls, rc));
        return;
    }
    if (rc < 0) {
        as_tls_fail(c, rc);
        return;
    }
    c->tls_ns = hm_now_ns() - c->as_.t_phase;
    hm_tls_turn_end(c->tls);
    as_send(c); /* the handshake's last flight leaves with the request */
}

/* The socket's reader over TLS: ciphertext into the filter, plaintext out
 * to the parser, as the plain reader's bytes are. */
static void as_tls_data(hm_http_conn *c, const char *data, ssize_t n)
{
    hm_http_async_ *as = &c->as_;
    int rc = n > 0 ? hm_tls_feed(c->tls, data, (size_t)n) : hm_tls_peer_ended(c->tls, (int)n);
    if (as->state == AS_HANDSHAKE) {
        if (rc < 0)
            as_tls_fail(c, rc);
        else
            as_handshake(c);
        return;
    }
    if (rc < 0 || n <= 0) {
        if (as->state == AS_WAITING)
            as_end(c, rc);
        else
            hm_http_conn_close(c); /* an idle connection ended */
        return;
    }
    for (;;) {
        ssize_t k = hm_tls_take(c->tls, tls_plain, sizeof(tls_plain));
        if (k == -EAGAIN) return; /* a record's rest, or only a ticket came */
        if (as->state != AS_WAITING) {
            /* Plaintext, an end or a failure on an idle connection: the
             * next request starts afresh. */
            hm_http_conn_close(c);
            return;
        }
        if (k <= 0) {
            as_end(c, (int)k);
            return;
        }
        if (!as_bytes(c, tls_plain, (size_t)k)) return;
    }
}

static void as_data(void *user, hm_sock *s, const char *data, ssize_t n)
{
    (void)s;
    hm_http_conn *c = user;
    hm_http_async_ *as = &c->as_;
    if (c->tls) {
        as_tls_data(c, data, n);
        return;
    }
    if (as->state != AS_WAITING) {
        /* Bytes or an end on an idle keep-alive connection: the server
         * closed it or sent what nobody asked for; the next request
         * starts afresh. */
        hm_http_conn_close(c);
        return;
    }
    if (n > 0)
        as_bytes(c, data, (size_t)n);
    else
        as_end(c, (int)n);
}

/* Sends the request on a connected socket and waits for the answer. */
static void as_send(hm_http_conn *c)
{
    hm_http_async_ *as = &c->as_;
    hm_http_resp_begin(&c->resp, as->head);
    int rc;
    if (c->tls) {
        rc = hm_tls_seal(c->tls, as->req, as->len);
        if (rc == 0) rc = hm_tls_send_pending(c->tls, c->sock);
    } else {
        rc = as->detach ? hm_sock_send_detached(c->sock, as->req, as->len)
                        : hm_sock_send_copy(c->sock, as->req, as->len);
    }
    if (rc < 0) {
        hm_http_conn_close(c);
        if (!as->retried && !as->stream) {
            as_retry(c);
            return;
        }
        failed(c, rc, PH_SEND, as->budget);
        as_finish(c, rc);
        return;
    }
    as_drop_copy(as); /* sent, or copied by the engine or into a TLS record */
    c->bytes_written += as->len;
    as->state = AS_WAITING;
}

/* The handshake's turn came (at once, or when another one ended). */
static void as_turn(hm_tls *t, void *user)
{
    hm_http_conn *c = user;
    int rc = hm_tls_client_begin(t);
    if (rc < 0) {
        c->fail = HM_FAIL_OTHER;
        as_connect_fail(c, rc);
        return;
    }
    as_handshake(c);
}

static void as_connected(void *user, hm_sock *s, int res)
{
    hm_http_conn *c = user;
    hm_http_async_ *as = &c->as_;
    if (res < 0) {
        c->fail = HM_FAIL_CONNECT;
        as_connect_fail(c, res);
        return;
    }
    c->connect_ns = hm_now_ns() - as->t_phase;
    if (c->connects++) c->reconnects++;
    hm_sock_set_reader(s, as_data, c);
    if (!c->target->tls) {
        as_send(c);
        return;
    }
    int rc = c->tls ? 0 : hm_tls_create(&c->tls, c->target->tls_cfg, c->target->host);
    if (rc < 0) {
        c->fail = HM_FAIL_OTHER;
        as_connect_fail(c, rc);
        return;
    }
    /* The handshake's time counts from here, its wait for a turn too. */
    as->state = AS_HANDSHAKE;
    as->t_phase = hm_now_ns();
    if (hm_tls_turn_wait(c->tls, as_turn, c)) as_turn(c->tls, c);
}

/* (Re)starts the exchange: the idle check, a connect when needed, then
 * the send. */
static void as_go(hm_http_conn *c)
{
    hm_http_async_ *as = &c->as_;
    request_start(c);
    c->connect_ns = 0;
    c->tls_ns = 0;
    as->got_bytes = false;
    /* Peek only after a long idle: a server's keep-alive timeout closes
     * idle connections, and finding that out after writing a POST would
     * make it unsafe to re-send. Over TLS, bytes waiting may be a session
     * ticket, not junk. */
    if (c->sock && hm_loop_now(c->loop_) - c->last_used_ns >= IDLE_CHECK_NS) {
        int spoke = hm_sock_peer_spoke(c->sock);
        if (spoke < 0 || (spoke > 0 && !c->tls))
            hm_http_conn_close(c); /* EOF, error or unsolicited bytes: start fresh */
    }
    if (c->sock) {
        as->reused = true;
        as_send(c);
        return;
    }
    as->reused = false;
    as->state = AS_CONNECTING;
    as->t_phase = hm_now_ns();
    int rc = hm_sock_connect_start(c->loop_, &c->sock, (const struct sockaddr *)&c->target->addr,
                                   c->target->addrlen, as_connected, c);
    if (rc < 0) {
        c->sock = NULL;
        c->fail = HM_FAIL_CONNECT;
        connect_failed(c, rc, as->budget);
        /* Reported from the loop, never inside the start. */
        as->rc = rc;
        as->state = AS_FAILING;
        hm_timer_arm(c->loop_, &c->timer_, hm_now_ns());
    }
}

/* What every start does: the exchange's state, its deadline armed. */
static int as_begin(hm_http_conn *c, hm_loop *loop, hm_http_async_ init, int64_t deadline,
                    hm_timeq *timeq)
{
    if (c->target->http2) return -EPROTONOSUPPORT; /* streams: h2_client.h */
    if (c->as_.state != AS_IDLE) return -EBUSY;
    c->as_ = init;
    c->loop_ = loop;
    if (!c->timer_.fn) hm_timer_init(&c->timer_, as_timer);
    if (timeq)
        hm_timeq_arm(timeq, &c->timer_);
    else if (deadline > 0)
        hm_timer_arm(loop, &c->timer_, deadline);
    return 0;
}

int hm_http_conn_start(hm_http_conn *c, hm_loop *loop, const char *req, size_t len,
                       const hm_http_xopts *o, hm_http_done_fn done, void *user)
{
    if (c->target->http2) return hm_h2_conn_start(c, loop, req, len, o, done, user);
    int64_t budget = o->timeq          ? o->timeq->duration
                     : o->deadline > 0 ? o->deadline - hm_now_ns()
                                       : 0;
    int rc = as_begin(c, loop,
                      (hm_http_async_){.done = done,
                                       .user = user,
                                       .req = req,
                                       .len = len,
                                       .idempotent = o->idempotent,
                                       .head = o->head,
                                       .detach = o->req_outlives,
                                       .budget = budget},
                      o->deadline, o->timeq);
    if (rc < 0) return rc;
    hm_http_resp_set_callbacks(&c->resp, NULL, o->discard_body ? count_body : NULL, c);
    hm_http_resp_set_lean(&c->resp, o->no_headers);
    as_go(c);
    return 0;
}

int hm_http_conn_stream_start(hm_http_conn *c, hm_loop *loop, const char *req, size_t len,
                              int64_t header_deadline, hm_http_resp_headers_fn on_headers,
                              hm_http_body_fn on_body, void *user, hm_http_done_fn done,
                              void *done_user)
{
    if (c->target->http2)
        return hm_h2_conn_stream_start(c, loop, req, len, header_deadline, on_headers, on_body,
                                       user, done, done_user);
    if (c->as_.state != AS_IDLE) return -EBUSY;
    char *copy = hm_alloc(len);
    if (!copy) return -ENOMEM;
    memcpy(copy, req, len);
    int rc = as_begin(
        c, loop,
        (hm_http_async_){.done = done,
                         .user = done_user,
                         .req = copy,
                         .req_owned = true,
                         .len = len,
                         .stream = true,
                         .budget = header_deadline > 0 ? header_deadline - hm_now_ns() : 0},
        header_deadline, NULL);
    if (rc < 0) {
        hm_free(copy);
        return rc;
    }
    hm_http_resp_set_callbacks(&c->resp, on_headers, on_body, user);
    /* A stream always gets a connection of its own. */
    hm_http_conn_close(c);
    as_go(c);
    return 0;
}

bool hm_http_conn_busy(const hm_http_conn *c)
{
    return c->as_.state != AS_IDLE || (c->target->http2 && hm_h2_busy(c));
}

void hm_http_conn_stop(hm_http_conn *c)
{
    if (c->target->http2) hm_h2_stop(c);
    hm_http_async_ *as = &c->as_;
    if (as->state == AS_IDLE) return;
    hm_timer_disarm(&c->timer_);
    as->state = AS_IDLE;
    as_drop_copy(as);
    if (as->stream) hm_http_resp_set_callbacks(&c->resp, NULL, NULL, NULL);
    hm_http_conn_close(c);
}

/* ---- from a coroutine: start, then wait ---------------------------------------- */

typedef struct waiter {
    hm_event ev;
    bool done;
    int rc;
} waiter;

static void waiter_done(hm_http_conn *c, int rc, void *user)
{
    (void)c;
    waiter *w = user;
    w->done = true;
    w->rc = rc;
    hm_event_notify(&w->ev);
}

/* Waits for what c started to call waiter_done. A cancelled coroutine
 * (or an aborted run) stops the exchange: -ECANCELED, worded. */
static int wait_done(hm_http_conn *c, waiter *w)
{
    while (!w->done) {
        int rc = hm_event_wait_io(&w->ev, 0);
        if (rc < 0 && !w->done) {
            phase ph = c->as_.state == AS_WAITING ? as_phase(c) : PH_SEND;
            int64_t budget = c->as_.budget;
            hm_http_conn_stop(c);
            return failed(c, rc, ph, budget);
        }
    }
    return w->rc;
}

int hm_http_conn_exchange(hm_http_conn *c, const char *req, size_t len, const hm_http_xopts *o)
{
    if (c->target->http2) return hm_h2_exchange(c, req, len, o);
    waiter w = {0};
    hm_event_init(&w.ev);
    int rc = hm_http_conn_start(c, hm_loop_current(), req, len, o, waiter_done, &w);
    return rc < 0 ? rc : wait_done(c, &w);
}

int hm_http_conn_stream(hm_http_conn *c, const char *req, size_t len, int64_t header_deadline,
                        hm_http_resp_headers_fn on_headers, hm_http_body_fn on_body, void *user)
{
    if (c->target->http2)
        return hm_h2_exchange_stream(c, req, len, header_deadline, on_headers, on_body, user);
    waiter w = {0};
    hm_event_init(&w.ev);
    int rc = hm_http_conn_stream_start(c, hm_loop_current(), req, len, header_deadline, on_headers,
                                       on_body, user, waiter_done, &w);
    return rc < 0 ? rc : wait_done(c, &w);
}

int hm_http_target_from_url(const char *text, hm_http_target *t, char **path_out)
{
    hm_url u;
    int rc = hm_url_parse(text, &u);
    if (rc < 0) return rc;
    memset(t, 0, sizeof(*t));
    t->tls = u.tls;
    snprintf(t->host, sizeof(t->host), "%s", u.host);
    rc = hm_url_resolve(&u, &t->addr, &t->addrlen);
    if (rc >= 0) rc = hm_url_host_header(&u, t->host_header, sizeof(t->host_header));
    if (rc >= 0) rc = hm_url_origin(&u, t->origin, sizeof(t->origin));
    if (rc >= 0 && path_out) {
        char buf[4096];
        rc = hm_url_request_target(&u, buf, sizeof(buf));
        if (rc >= 0) {
            *path_out = hm_strdup(buf);
            if (!*path_out) rc = -ENOMEM;
        }
    }
    hm_url_free(&u);
    return rc < 0 ? rc : 0;
}
