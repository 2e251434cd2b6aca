/* Keep-alive HTTP/1.1 client connections: connect on demand, send, parse.
 * A conn whose target is HTTP/2 hands each request to h2_client.c. */
#include "proto/http_client.h"

#include "proto/h2_client.h"
#include "proto/url.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* Plain HTTP reads the engine's buffers (hm_sock_peek): a connection owns
 * no read buffer. TLS decrypts into one of the connection's, which starts
 * small (an idle connection keeps its touched pages resident) and grows
 * once a read fills it. */
#define RBUF_MIN 2048
#define RBUF_MAX (64 * 1024)
/* A keep-alive connection idle for longer than this is checked for a
 * server-side close before reuse, so a request is not written into a
 * connection the server already dropped. */
#define IDLE_CHECK_NS (10LL * 1000 * 1000)

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

void hm_http_conn_free(hm_http_conn *c)
{
    if (c->target->http2) hm_h2_conn_release(c);
    hm_http_conn_stop(c);
    hm_http_conn_close(c);
    hm_tls_free(c->tls);
    c->tls = NULL;
    hm_http_resp_free(&c->resp);
    hm_free(c->rbuf);
    c->rbuf = NULL;
}

/* What a request was doing when it failed, for the words in c->why. */
typedef enum { PH_SEND, PH_RECEIVE, PH_HEADERS } phase;

/* A request begins: its evidence and byte counts start afresh. */
static void request_start(hm_http_conn *c)
{
    c->fail = HM_FAIL_NONE;
    c->why[0] = 0;
    c->head_len = 0;
    c->resp_bytes = 0;
    c->body_bytes = 0;
}

static bool past(int64_t deadline)
{
    return deadline > 0 && hm_now_ns() >= deadline;
}

/* True when the bytes look like an event stream (optionally behind a chunk
 * size line): "event:", "data:", "id:", "retry:" or a ":" comment. */
static bool looks_like_sse(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n &&
           ((p[i] >= '0' && p[i] <= '9') || ((p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'f')))
        i++;
    if (i > 0 && i + 1 < n && p[i] == '\r' && p[i + 1] == '\n') p += i + 2, n -= i + 2;
    static const char *const fields[] = {"event:", "data:", "id:", "retry:", ":"};
    for (size_t f = 0; f < HM_ARRAY_LEN(fields); f++) {
        size_t fl = strlen(fields[f]);
        if (n >= fl && memcmp(p, fields[f], fl) == 0) return true;
    }
    return false;
}

/* Classifies a failure into c->fail and says in c->why what happened,
 * unless c->why says it already. budget_ns: the deadline's span. */
static int failed(hm_http_conn *c, int rc, phase ph, int64_t budget_ns)
{
    c->fail = hm_fail_of_error(rc);
    if (rc == -HM_ESTATUS) c->fail = HM_FAIL_OTHER;
    if (c->why[0]) return rc;
    double secs = (double)budget_ns / 1e9;
    size_t got = c->resp_bytes;
    const char *parser = hm_http_resp_error_reason(&c->resp);
    switch (c->fail) {
    case HM_FAIL_TIMEOUT:
        if (ph == PH_SEND)
            snprintf(c->why, sizeof(c->why), "request not sent within %.3g s", secs);
        else if (!got)
            snprintf(c->why, sizeof(c->why), "no response within %.3g s (not a byte)", secs);
        else
            snprintf(c->why, sizeof(c->why),
                     "no complete response %swithin %.3g s (%zu bytes received)",
                     ph == PH_HEADERS ? "header section " : "", secs, got);
        break;
    case HM_FAIL_RESET:
        snprintf(c->why, sizeof(c->why), "connection reset %s (%zu response bytes received)",
                 ph == PH_SEND ? "while sending the request" : "by the server", got);
        break;
    case HM_FAIL_CLOSED:
        if (!got)
            snprintf(c->why, sizeof(c->why), "connection closed before any response byte");
        else
            snprintf(c->why, sizeof(c->why),
                     "connection closed before the response was complete (%zu bytes received)",
                     got);
        break;
    case HM_FAIL_PROTOCOL:
        if (looks_like_sse(c->head, c->head_len))
            snprintf(c->why, sizeof(c->why),
                     "response starts with SSE data: bytes of another stream");
        else
            snprintf(c->why, sizeof(c->why), "%s", parser ? parser : hm_strerror(rc));
        break;
    case HM_FAIL_TLS:
        snprintf(c->why, sizeof(c->why), "%s",
                 c->tls && hm_tls_last_reason(c->tls)[0] ? hm_tls_last_reason(c->tls)
                                                         : hm_strerror(rc));
        break;
    default:
        if (rc == -HM_ESTATUS)
            snprintf(c->why, sizeof(c->why), "answered HTTP %d", c->resp.status);
        else if (rc == -ECANCELED)
            snprintf(c->why, sizeof(c->why), "cancelled (the run was interrupted)");
        else
            snprintf(c->why, sizeof(c->why), "%s", parser ? parser : hm_strerror(rc));
    }
    return rc;
}

static int ensure_connected(hm_http_conn *c, int64_t deadline)
{
    c->connect_ns = 0;
    c->tls_ns = 0;
    if (c->sock) {
        /* Peek only after a long idle: a server's keep-alive timeout closes
         * idle connections, and finding that out after writing a POST would
         * make it unsafe to re-send. */
        if (hm_now_ns() - c->last_used_ns < IDLE_CHECK_NS) return 0;
        /* The engine also sees bytes or an EOF a multishot receive took
         * off the socket already. */
        int spoke = hm_sock_peer_spoke(c->sock);
        if (spoke == 0) return 0;
        /* Over TLS, bytes waiting may be a session ticket, not junk. */
        if (spoke > 0 && c->tls) return 0;
        hm_http_conn_close(c); /* EOF, error or unsolicited bytes: start fresh */
    }
    if (c->target->tls && !c->rbuf) {
        c->rbuf = hm_alloc(RBUF_MIN);
        if (!c->rbuf) return -ENOMEM;
        c->rcap = RBUF_MIN;
    }
    int64_t t0 = hm_now_ns();
    int rc = hm_sock_connect(&c->sock, (const struct sockaddr *)&c->target->addr,
                             c->target->addrlen, deadline);
    if (rc < 0) {
        c->fail = HM_FAIL_CONNECT;
        return rc;
    }
    c->connect_ns = hm_now_ns() - t0;
    if (c->connects++) c->reconnects++;
    if (c->target->tls) {
        if (!c->tls && (rc = hm_tls_create(&c->tls, c->target->tls_cfg, c->target->host)) < 0)
            return rc;
        int64_t h0 = hm_now_ns();
        rc = hm_tls_handshake(c->tls, c->sock, deadline);
        if (rc < 0) {
            hm_http_conn_close(c);
            c->fail = rc == -ETIMEDOUT ? HM_FAIL_TIMEOUT : HM_FAIL_TLS;
            return rc;
        }
        c->tls_ns = hm_now_ns() - h0;
        if (hm_tls_resumed(c->tls))
            c->tls_resumed++;
        else
            c->tls_full++;
    }
    return 0;
}

/* After ensure_connected failed: it set c->fail for connect and TLS
 * failures; c->resp still holds the previous response, so no parser
 * reason applies. */
static int connect_failed(hm_http_conn *c, int rc, int64_t budget_ns)
{
    double secs = (double)budget_ns / 1e9;
    if (rc == -ECANCELED) {
        c->fail = HM_FAIL_OTHER;
        snprintf(c->why, sizeof(c->why), "cancelled (the run was interrupted)");
    } else if (c->fail == HM_FAIL_CONNECT && rc == -ETIMEDOUT) {
        snprintf(c->why, sizeof(c->why), "connect not done within %.3g s", secs);
    } else if (c->fail == HM_FAIL_CONNECT) {
        snprintf(c->why, sizeof(c->why), "connect failed: %s", hm_strerror(rc));
    } else if (c->fail == HM_FAIL_TIMEOUT) {
        snprintf(c->why, sizeof(c->why), "TLS handshake not done within %.3g s", secs);
    } else if (c->fail == HM_FAIL_TLS) {
        snprintf(c->why, sizeof(c->why), "TLS handshake failed: %s",
                 c->tls && hm_tls_last_reason(c->tls)[0] ? hm_tls_last_reason(c->tls)
                                                         : hm_strerror(rc));
    } else {
        c->fail = HM_FAIL_OTHER;
        snprintf(c->why, sizeof(c->why), "cannot open a connection: %s", hm_strerror(rc));
    }
    return rc;
}

/* The transport: plain socket or TLS over it. Points *data at the bytes
 * received (the engine's, or the TLS buffer), which stay valid until
 * conn_consumed; the caller feeds them all before it can suspend again.
 * Keeps the response's first bytes as evidence and counts every byte. */
static ssize_t conn_read(hm_http_conn *c, const char **data, int64_t deadline)
{
    /* TLS may serve buffered bytes without touching the socket, so the
     * deadline is checked here too. */
    if (past(deadline)) return -ETIMEDOUT;
    ssize_t n;
    if (c->tls) {
        n = hm_tls_read(c->tls, c->sock, c->rbuf, c->rcap, deadline);
        *data = c->rbuf;
    } else {
        n = hm_sock_peek(c->sock, data, deadline);
    }
    if (n <= 0) return n;
    c->bytes_read += (uint64_t)n;
    c->resp_bytes += (size_t)n;
    if (c->head_len < sizeof(c->head)) {
        size_t k = sizeof(c->head) - c->head_len;
        if (k > (size_t)n) k = (size_t)n;
        memcpy(c->head + c->head_len, *data, k);
        c->head_len += k;
    }
    if (!c->tls) return n;
    /* A full buffer means more was waiting: read bigger pieces next time.
     * The bytes just read are the caller's to feed, so grow by copying. */
    if (n == (ssize_t)c->rcap && c->rcap < RBUF_MAX) {
        char *bigger = hm_realloc(c->rbuf, c->rcap * 4);
        if (bigger) {
            c->rbuf = bigger;
            c->rcap *= 4;
            *data = bigger;
        }
    }
    return n;
}

static void conn_consumed(hm_http_conn *c, size_t n)
{
    if (!c->tls) hm_sock_skip(c->sock, n);
}

/* Bytes after a complete response (a and b: the two places they were
 * found, total: how many there are): the reason, and the first of them as
 * evidence. */
static void unsolicited(hm_http_conn *c, const char *a, size_t a_len, const char *b, size_t b_len,
                        size_t total)
{
    snprintf(c->why, sizeof(c->why), "%zu unsolicited bytes after a complete HTTP %d response",
             total, c->resp.status);
    size_t k = a_len < sizeof(c->head) ? a_len : sizeof(c->head);
    if (k) memcpy(c->head, a, k);
    size_t k2 = b_len < sizeof(c->head) - k ? b_len : sizeof(c->head) - k;
    if (k2) memcpy(c->head + k, b, k2);
    c->head_len = k + k2;
}

static ssize_t conn_write(hm_http_conn *c, const char *buf, size_t len, int64_t deadline,
                          size_t *sent)
{
    size_t done = 0;
    ssize_t w = c->tls ? hm_tls_write(c->tls, c->sock, buf, len, deadline, &done)
                       : hm_sock_write(c->sock, buf, len, deadline, &done);
    c->bytes_written += done;
    if (sent) *sent = done;
    return w;
}

const char *hm_http_conn_fail_reason(const hm_http_conn *c, int err)
{
    if (c->why[0]) return c->why;
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

int hm_http_conn_exchange(hm_http_conn *c, const char *req, size_t len, const hm_http_xopts *o)
{
    if (c->target->http2) return hm_h2_exchange(c, req, len, o);
    bool retried = false;
    int64_t budget = o->deadline > 0 ? o->deadline - hm_now_ns() : 0;
    hm_http_resp_set_callbacks(&c->resp, NULL, o->discard_body ? count_body : NULL, c);
again:
    request_start(c);
    bool reused = c->sock != NULL;
    int rc = ensure_connected(c, o->deadline);
    if (rc < 0) return connect_failed(c, rc, budget);
    reused = reused && c->sock && c->connect_ns == 0;
    hm_http_resp_begin(&c->resp, o->head);

    size_t sent = 0;
    ssize_t w;
    bool detached = o->req_outlives && !c->tls;
    if (detached) {
        /* The request outlives the exchange: the engine sends it without
         * suspending us, and a failure shows in the read that follows. */
        w = hm_sock_send_detached(c->sock, req, len);
        if (w == 0) {
            w = (ssize_t)len;
            c->bytes_written += len;
        }
    } else {
        w = conn_write(c, req, len, o->deadline, &sent);
    }
    if (w < 0) {
        hm_http_conn_close(c);
        if (sent == 0 && !retried && w != -ETIMEDOUT && w != -ECANCELED) {
            retried = true;
            c->retries++;
            goto again;
        }
        return failed(c, (int)w, PH_SEND, budget);
    }

    bool got_bytes = false;
    for (;;) {
        const char *data;
        ssize_t n = conn_read(c, &data, o->deadline);
        if (n <= 0) {
            bool none = false;
            if (n < 0 && detached && !got_bytes && !retried && n != -ETIMEDOUT && n != -ECANCELED &&
                hm_sock_send_error(c->sock, &none) == n && none) {
                /* The detached send failed before any byte left: as a
                 * failed write with nothing sent, it may go again. */
                hm_http_conn_close(c);
                c->bytes_written -= len;
                retried = true;
                c->retries++;
                goto again;
            }
            if (n == 0) {
                rc = hm_http_resp_finish(&c->resp);
                hm_http_conn_close(c);
                if (rc == HM_HTTP_DONE) break;
            } else {
                rc = (int)n;
                hm_http_conn_close(c);
            }
            /* A reused connection that closed before answering: the server
             * dropped it; only a request safe to repeat goes again. */
            if (reused && !got_bytes && o->idempotent && !retried && rc != -ETIMEDOUT &&
                rc != -ECANCELED && rc != -HM_ETLS) { /* a TLS failure is no idle close */
                retried = true;
                c->retries++;
                goto again;
            }
            if (n == 0) rc = -HM_ECLOSED;
            return failed(c, rc, PH_RECEIVE, budget);
        }
        got_bytes = true;
        size_t consumed = 0;
        rc = hm_http_resp_feed(&c->resp, data, (size_t)n, &consumed);
        if (rc < 0) {
            conn_consumed(c, (size_t)n);
            hm_http_conn_close(c);
            return failed(c, rc, PH_RECEIVE, budget);
        }
        if (rc == HM_HTTP_DONE) {
            /* Bytes past the response: in this piece, or (plain TCP) in a
             * later piece of the same arrival the engine holds already. */
            size_t here = (size_t)n - consumed;
            char here_copy[sizeof(c->head)], later_copy[sizeof(c->head)];
            size_t keep = here < sizeof(here_copy) ? here : sizeof(here_copy);
            if (keep) memcpy(here_copy, data + consumed, keep);
            conn_consumed(c, (size_t)n);
            size_t later_len = 0;
            size_t later =
                c->tls ? 0 : hm_sock_queued(c->sock, later_copy, sizeof(later_copy), &later_len);
            if (here || later) {
                /* We never pipeline, so these bytes answer nothing we sent:
                 * the connection cannot tell answers apart any more. */
                unsolicited(c, here_copy, keep, later_copy, later_len, here + later);
                hm_http_conn_close(c);
                return failed(c, -HM_EPROTO_HTTP, PH_RECEIVE, budget);
            }
            if (!hm_http_resp_reusable(&c->resp)) hm_http_conn_close(c);
            break;
        }
        conn_consumed(c, (size_t)n);
    }
    c->last_used_ns = hm_now_ns();
    return 0;
}

int hm_http_conn_stream(hm_http_conn *c, const char *req, size_t len, int64_t header_deadline,
                        hm_http_resp_headers_fn on_headers, hm_http_body_fn on_body, void *user)
{
    if (c->target->http2)
        return hm_h2_exchange_stream(c, req, len, header_deadline, on_headers, on_body, user);
    request_start(c);
    int64_t budget = header_deadline > 0 ? header_deadline - hm_now_ns() : 0;
    int rc = ensure_connected(c, header_deadline);
    if (rc < 0) return connect_failed(c, rc, budget);
    hm_http_resp_begin(&c->resp, false);
    hm_http_resp_set_callbacks(&c->resp, on_headers, on_body, user);
    phase ph = PH_SEND;
    ssize_t w = conn_write(c, req, len, header_deadline, NULL);
    if (w < 0) {
        rc = (int)w;
        goto fail;
    }
    ph = PH_HEADERS;
    for (;;) {
        /* The deadline covers the headers; a live stream may stay silent. */
        int64_t deadline = c->resp.status ? 0 : header_deadline;
        if (c->resp.status) ph = PH_RECEIVE;
        const char *data;
        ssize_t n = conn_read(c, &data, deadline);
        if (n == 0) {
            rc = hm_http_resp_finish(&c->resp);
            if (rc == HM_HTTP_DONE)
                rc = 0;
            else if (rc >= 0)
                rc = -HM_ECLOSED;
            break;
        }
        if (n < 0) {
            rc = (int)n;
            break;
        }
        size_t consumed;
        rc = hm_http_resp_feed(&c->resp, data, (size_t)n, &consumed);
        conn_consumed(c, (size_t)n);
        if (rc < 0) break;
        if (rc == HM_HTTP_DONE) {
            rc = 0;
            break;
        }
    }
fail:
    hm_http_conn_close(c);
    hm_http_resp_set_callbacks(&c->resp, NULL, NULL, NULL);
    if (rc < 0) failed(c, rc, ph, budget);
    return rc;
}

/* ---- without a coroutine ---------------------------------------------------
 *
 * The exchange above as a state machine the loop's callbacks drive: the
 * connect's callback, the socket's reader (bytes straight from the
 * completion or the loop's buffer) and the deadline's timer. Its rules are
 * the same as hm_http_conn_exchange's, step for step: the idle check before
 * reuse, the retry rule, the words in c->why. */

enum { AS_IDLE, AS_CONNECTING, AS_WAITING, AS_FAILING };

static void as_go(hm_http_conn *c);

/* The exchange ends: done may start the next one on c, so nothing touches
 * c after it. */
static void as_finish(hm_http_conn *c, int rc)
{
    hm_http_async_ *as = &c->as_;
    hm_timer_disarm(&c->timer_);
    as->state = AS_IDLE;
    if (as->req_copy) {
        hm_free(as->req_copy);
        as->req_copy = NULL;
    }
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
    if (as->state == AS_FAILING) { /* a failure found inside a start, reported from the loop */
        as_finish(c, as->rc);
        return;
    }
    if (as->state == AS_CONNECTING) {
        hm_http_conn_close(c);
        c->fail = HM_FAIL_CONNECT;
        connect_failed(c, -ETIMEDOUT, as->budget);
        as_finish(c, -ETIMEDOUT);
        return;
    }
    as_fail(c, -ETIMEDOUT, as->stream && !c->resp.status ? PH_HEADERS : PH_RECEIVE);
}

static void as_data(void *user, hm_sock *s, const char *data, ssize_t n)
{
    hm_http_conn *c = user;
    hm_http_async_ *as = &c->as_;
    if (as->state != AS_WAITING) {
        /* Bytes or an end on an idle keep-alive connection: the server
         * closed it or sent what nobody asked for; the next request
         * starts afresh. */
        hm_http_conn_close(c);
        return;
    }
    if (n > 0) {
        c->bytes_read += (uint64_t)n;
        c->resp_bytes += (size_t)n;
        if (c->head_len < sizeof(c->head)) {
            size_t k = sizeof(c->head) - c->head_len;
            if (k > (size_t)n) k = (size_t)n;
            memcpy(c->head + c->head_len, data, k);
            c->head_len += k;
        }
        as->got_bytes = true;
        size_t consumed = 0;
        int rc = hm_http_resp_feed(&c->resp, data, (size_t)n, &consumed);
        if (rc < 0) {
            as_fail(c, rc, as->stream && !c->resp.status ? PH_HEADERS : PH_RECEIVE);
            return;
        }
        if (rc == HM_HTTP_NEED_MORE) {
            /* a stream's deadline covers the headers only */
            if (as->stream && c->resp.status) hm_timer_disarm(&c->timer_);
            return;
        }
        char later_copy[sizeof(c->head)];
        size_t later_len = 0;
        size_t later =
            as->stream ? 0 : hm_sock_queued(s, later_copy, sizeof(later_copy), &later_len);
        if ((consumed < (size_t)n || later) && !as->stream) {
            /* We never pipeline, so these bytes answer nothing we sent
             * (later: the rest of the same arrival, in a later piece). */
            unsolicited(c, data + consumed, (size_t)n - consumed, later_copy, later_len,
                        (size_t)n - consumed + later);
            as_fail(c, -HM_EPROTO_HTTP, PH_RECEIVE);
            return;
        }
        if (as->stream || !hm_http_resp_reusable(&c->resp)) hm_http_conn_close(c);
        as_finish(c, 0);
        return;
    }
    int rc = (int)n;
    if (n == 0) {
        rc = hm_http_resp_finish(&c->resp);
        hm_http_conn_close(c);
        if (rc == HM_HTTP_DONE) {
            as_finish(c, 0);
            return;
        }
        if (rc >= 0) rc = -HM_ECLOSED;
    } else {
        bool none = false;
        bool send_failed = hm_sock_send_error(s, &none) == rc;
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
     * it; only a request safe to repeat goes again. */
    if (as->reused && !as->got_bytes && as->idempotent && !as->retried && !as->stream) {
        as_retry(c);
        return;
    }
    as_fail(c, rc, as->stream && !c->resp.status ? PH_HEADERS : PH_RECEIVE);
}

/* Sends the request on a connected socket and waits for the answer. */
static void as_send(hm_http_conn *c)
{
    hm_http_async_ *as = &c->as_;
    hm_http_resp_begin(&c->resp, as->head);
    int rc = as->req_copy ? hm_sock_send_copy(c->sock, as->req, as->len)
                          : hm_sock_send_detached(c->sock, as->req, as->len);
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
    if (as->req_copy) { /* sent, or copied by the engine */
        hm_free(as->req_copy);
        as->req_copy = NULL;
        as->req = NULL;
    }
    c->bytes_written += as->len;
    as->state = AS_WAITING;
}

static void as_connected(void *user, hm_sock *s, int res)
{
    hm_http_conn *c = user;
    hm_http_async_ *as = &c->as_;
    if (res < 0) {
        hm_http_conn_close(c);
        c->fail = HM_FAIL_CONNECT;
        connect_failed(c, res, as->budget);
        as_finish(c, res);
        return;
    }
    c->connect_ns = hm_now_ns() - as->t_connect;
    if (c->connects++) c->reconnects++;
    hm_sock_set_reader(s, as_data, c);
    as_send(c);
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
    if (c->sock && hm_loop_now(c->loop_) - c->last_used_ns >= IDLE_CHECK_NS &&
        hm_sock_peer_spoke(c->sock) != 0)
        hm_http_conn_close(c); /* EOF, error or unsolicited bytes: start fresh */
    if (c->sock) {
        as->reused = true;
        as_send(c);
        return;
    }
    as->reused = false;
    as->state = AS_CONNECTING;
    as->t_connect = hm_now_ns();
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

int hm_http_conn_start(hm_http_conn *c, hm_loop *loop, const char *req, size_t len,
                       const hm_http_aopts *o, hm_http_done_fn done, void *user)
{
    if (c->target->tls) return -EPROTONOSUPPORT;
    if (c->as_.state != AS_IDLE) return -EBUSY;
    hm_http_async_ *as = &c->as_;
    *as = (hm_http_async_){.done = done,
                           .user = user,
                           .req = req,
                           .len = len,
                           .idempotent = o->idempotent,
                           .head = o->head,
                           .budget = o->timeq->duration};
    c->loop_ = loop;
    if (!c->timer_.fn) hm_timer_init(&c->timer_, as_timer);
    hm_http_resp_set_callbacks(&c->resp, NULL, o->discard_body ? count_body : NULL, c);
    hm_http_resp_set_lean(&c->resp, o->no_headers);
    hm_timeq_arm(o->timeq, &c->timer_);
    as_go(c);
    return 0;
}

int hm_http_conn_stream_start(hm_http_conn *c, hm_loop *loop, const char *req, size_t len,
                              int64_t header_deadline, hm_http_resp_headers_fn on_headers,
                              hm_http_body_fn on_body, void *user, hm_http_done_fn done)
{
    if (c->target->tls) return -EPROTONOSUPPORT;
    if (c->as_.state != AS_IDLE) return -EBUSY;
    hm_http_async_ *as = &c->as_;
    char *copy = hm_alloc(len);
    if (!copy) return -ENOMEM;
    memcpy(copy, req, len);
    *as = (hm_http_async_){.done = done,
                           .user = user,
                           .req = copy,
                           .req_copy = copy,
                           .len = len,
                           .stream = true,
                           .budget = header_deadline - hm_now_ns()};
    c->loop_ = loop;
    if (!c->timer_.fn) hm_timer_init(&c->timer_, as_timer);
    hm_http_resp_set_callbacks(&c->resp, on_headers, on_body, user);
    hm_timer_arm(loop, &c->timer_, header_deadline);
    /* A stream always gets a connection of its own. */
    hm_http_conn_close(c);
    as_go(c);
    return 0;
}

bool hm_http_conn_busy(const hm_http_conn *c)
{
    return c->as_.state != AS_IDLE;
}

void hm_http_conn_stop(hm_http_conn *c)
{
    hm_http_async_ *as = &c->as_;
    if (as->state == AS_IDLE) return;
    hm_timer_disarm(&c->timer_);
    as->state = AS_IDLE;
    hm_free(as->req_copy);
    as->req_copy = NULL;
    if (as->stream) hm_http_resp_set_callbacks(&c->resp, NULL, NULL, NULL);
    hm_http_conn_close(c);
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
