/* A request's failure in words (hm_http_conn_word): the one place that
 * says what went wrong with a connect, a TLS handshake, an HTTP/1.1
 * exchange or an HTTP/2 stream, so every path reads the same. */
#include "proto/http_client.h"

#include <stdio.h>
#include <string.h>

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

/* The TLS layer's reason, else the error's. */
static const char *tls_reason(const hm_http_conn *c, int rc)
{
    const hm_tls *tls = hm_http_conn_tls(c);
    return tls && hm_tls_last_reason(tls)[0] ? hm_tls_last_reason(tls) : hm_strerror(rc);
}

#define SAY(...) hm_reason_set(&c->fail_why, HM_HTTP_WHY_BYTES, __VA_ARGS__)

/* Opening the connection: c->fail says whether the connect or the TLS
 * handshake failed; c->resp still holds the previous response, so no
 * parser reason applies. */
static void word_connect(hm_http_conn *c, const hm_http_failure *f, double secs)
{
    int rc = f->rc;
    const hm_tls *tls = hm_http_conn_tls(c);
    if (rc == -ECANCELED) {
        c->fail = HM_FAIL_OTHER;
        SAY("cancelled (the run was interrupted)");
    } else if (c->fail == HM_FAIL_CONNECT && rc == -ETIMEDOUT) {
        SAY("connect not done within %.3g s", secs);
    } else if (c->fail == HM_FAIL_CONNECT) {
        SAY("connect failed: %s", hm_strerror(rc));
    } else if (c->fail == HM_FAIL_TIMEOUT && tls && hm_tls_ended_waiting(tls)) {
        SAY("TLS handshake not begun within %.3g s: %s", secs, hm_tls_last_reason(tls));
    } else if (c->fail == HM_FAIL_TIMEOUT) {
        SAY("TLS handshake not done within %.3g s", secs);
    } else if (c->fail == HM_FAIL_TLS) {
        SAY("TLS handshake failed: %s", tls_reason(c, rc));
    } else {
        c->fail = HM_FAIL_OTHER;
        SAY("cannot open a%s connection: %s", f->h2 ? "n HTTP/2" : "", hm_strerror(rc));
    }
}

int hm_http_conn_word(hm_http_conn *c, const hm_http_failure *f)
{
    int rc = f->rc;
    if (hm_reason(c->fail_why)[0]) return rc;
    if (f->why && f->why[0]) {
        SAY("%s", f->why);
        return rc;
    }
    double secs = (double)f->budget_ns / 1e9;
    if (f->where == HM_AT_CONNECT) {
        word_connect(c, f, secs);
        return rc;
    }
    size_t got = c->resp_bytes;
    const char *parser = hm_http_resp_error_reason(&c->resp);
    bool sending = f->where == HM_AT_SEND;
    switch (c->fail) {
    case HM_FAIL_TIMEOUT:
        if (f->h2)
            SAY("no %s within %.3g s (HTTP/2 stream reset)",
                f->where == HM_AT_HEADERS ? "response head" : "complete response", secs);
        else if (sending)
            SAY("request not sent within %.3g s", secs);
        else if (!got)
            SAY("no response within %.3g s (not a byte)", secs);
        else
            SAY("no complete response %swithin %.3g s (%zu bytes received)",
                f->where == HM_AT_HEADERS ? "header section " : "", secs, got);
        break;
    case HM_FAIL_RESET:
        if (f->h2)
            SAY("HTTP/2 connection reset by the server");
        else
            SAY("connection reset %s (%zu response bytes received)",
                sending ? "while sending the request" : "by the server", got);
        break;
    case HM_FAIL_CLOSED:
        if (f->h2)
            SAY("HTTP/2 connection closed before the response was complete");
        else if (!got)
            SAY("connection closed before any response byte");
        else
            SAY("connection closed before the response was complete (%zu bytes received)", got);
        break;
    case HM_FAIL_PROTOCOL:
        /* (over HTTP/2 the evidence is "HTTP/2 <status>", never SSE data) */
        if (looks_like_sse(hm_http_conn_head(c), c->head_len))
            SAY("response starts with SSE data: bytes of another stream");
        else
            SAY("%s", parser ? parser : hm_strerror(rc));
        break;
    case HM_FAIL_TLS:
        SAY("%s", tls_reason(c, rc));
        break;
    default:
        if (rc == -HM_ESTATUS)
            SAY("answered HTTP %d", c->resp.status);
        else if (rc == -ECANCELED)
            SAY("cancelled (the run was interrupted)");
        else
            SAY("%s", parser ? parser : hm_strerror(rc));
    }
    return rc;
}
