/* Keep-alive HTTP/1.1 client connections: connect on demand, send, parse. */
#include "proto/http_client.h"

#include "proto/url.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* The read buffer starts small, because each idle connection keeps its
 * touched pages resident, and grows once a read fills it. */
#define RBUF_MIN 2048
#define RBUF_MAX (64 * 1024)
/* A keep-alive connection idle for longer than this is checked for a
 * server-side close before reuse, so a request is not written into a
 * connection the server already dropped. */
#define IDLE_CHECK_NS (10LL * 1000 * 1000)

static hm_fail_kind classify(int err)
{
    switch (-err) {
    case ETIMEDOUT:
        return HM_FAIL_TIMEOUT;
    case ECONNRESET:
    case EPIPE:
        return HM_FAIL_RESET;
    case HM_ECLOSED:
        return HM_FAIL_CLOSED;
    case HM_EPROTO_HTTP:
    case HM_ETOOBIG:
        return HM_FAIL_PROTOCOL;
    case HM_ETLS:
        return HM_FAIL_TLS;
    default:
        return HM_FAIL_OTHER;
    }
}

void hm_http_conn_init(hm_http_conn *c, const hm_http_target *t, const hm_http_limits *lim)
{
    memset(c, 0, sizeof(*c));
    c->target = t;
    hm_http_resp_init(&c->resp, lim);
}

void hm_http_conn_close(hm_http_conn *c)
{
    if (c->tls) hm_tls_reset(c->tls);
    if (c->sock) {
        hm_sock_close(c->sock);
        c->sock = NULL;
    }
}

void hm_http_conn_free(hm_http_conn *c)
{
    hm_http_conn_close(c);
    hm_tls_free(c->tls);
    c->tls = NULL;
    hm_http_resp_free(&c->resp);
    hm_free(c->rbuf);
    c->rbuf = NULL;
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
        char b;
        ssize_t n = recv(hm_sock_fd(c->sock), &b, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        /* Over TLS, bytes waiting may be a session ticket, not junk. */
        if (n > 0 && c->tls) return 0;
        hm_http_conn_close(c); /* EOF, error or unsolicited bytes: start fresh */
    }
    if (!c->rbuf) {
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

/* The transport: plain socket or TLS over it. */
static ssize_t conn_read(hm_http_conn *c, int64_t deadline)
{
    ssize_t n = c->tls ? hm_tls_read(c->tls, c->sock, c->rbuf, c->rcap, deadline)
                       : hm_sock_read(c->sock, c->rbuf, c->rcap, deadline);
    if (n > 0) c->bytes_read += (uint64_t)n;
    /* A full buffer means more was waiting: read bigger pieces next time.
     * The bytes just read are the caller's to feed, so grow by copying. */
    if (n == (ssize_t)c->rcap && c->rcap < RBUF_MAX) {
        char *bigger = hm_realloc(c->rbuf, c->rcap * 4);
        if (bigger) {
            c->rbuf = bigger;
            c->rcap *= 4;
        }
    }
    return n;
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
    if (c->fail == HM_FAIL_TLS && c->tls && hm_tls_last_reason(c->tls)[0])
        return hm_tls_last_reason(c->tls);
    return hm_strerror(err);
}

int hm_http_conn_exchange(hm_http_conn *c, const char *req, size_t len, const hm_http_xopts *o)
{
    bool retried = false;
    c->fail = HM_FAIL_NONE;
    hm_http_resp_set_callbacks(&c->resp, NULL, NULL, NULL);
again:;
    bool reused = c->sock != NULL;
    int rc = ensure_connected(c, o->deadline);
    if (rc < 0) return rc;
    reused = reused && c->sock && c->connect_ns == 0;
    hm_http_resp_begin(&c->resp, o->head);

    size_t sent = 0;
    ssize_t w = conn_write(c, req, len, o->deadline, &sent);
    if (w < 0) {
        hm_http_conn_close(c);
        if (sent == 0 && !retried && w != -ETIMEDOUT) {
            retried = true;
            c->retries++;
            goto again;
        }
        c->fail = classify((int)w);
        return (int)w;
    }

    bool got_bytes = false;
    for (;;) {
        ssize_t n = conn_read(c, o->deadline);
        if (n <= 0) {
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
            if (reused && !got_bytes && o->idempotent && !retried && rc != -ETIMEDOUT) {
                retried = true;
                c->retries++;
                goto again;
            }
            if (n == 0) rc = -HM_ECLOSED;
            c->fail = classify(rc);
            return rc;
        }
        got_bytes = true;
        size_t consumed = 0;
        rc = hm_http_resp_feed(&c->resp, c->rbuf, (size_t)n, &consumed);
        if (rc < 0) {
            hm_http_conn_close(c);
            c->fail = classify(rc);
            return rc;
        }
        if (rc == HM_HTTP_DONE) {
            /* We never pipeline, so bytes after the response are the
             * server's error: do not reuse a connection in that state. */
            if (consumed < (size_t)n || !c->resp.keep_alive) hm_http_conn_close(c);
            break;
        }
    }
    c->last_used_ns = hm_now_ns();
    return 0;
}

int hm_http_conn_stream(hm_http_conn *c, const char *req, size_t len, int64_t header_deadline,
                        hm_http_resp_headers_fn on_headers, hm_http_body_fn on_body, void *user)
{
    c->fail = HM_FAIL_NONE;
    int rc = ensure_connected(c, header_deadline);
    if (rc < 0) return rc;
    hm_http_resp_begin(&c->resp, false);
    hm_http_resp_set_callbacks(&c->resp, on_headers, on_body, user);
    ssize_t w = conn_write(c, req, len, header_deadline, NULL);
    if (w < 0) {
        rc = (int)w;
        goto fail;
    }
    for (;;) {
        /* The deadline covers the headers; a live stream may stay silent. */
        int64_t deadline = c->resp.status ? 0 : header_deadline;
        ssize_t n = conn_read(c, deadline);
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
        rc = hm_http_resp_feed(&c->resp, c->rbuf, (size_t)n, &consumed);
        if (rc < 0) break;
        if (rc == HM_HTTP_DONE) {
            rc = 0;
            break;
        }
    }
fail:
    hm_http_conn_close(c);
    hm_http_resp_set_callbacks(&c->resp, NULL, NULL, NULL);
    if (rc < 0) c->fail = classify(rc);
    return rc;
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
