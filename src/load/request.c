/* A request's outcome into the thread's stats (request.h). */
#include "load/request.h"
#include "proto/via_client.h"

#include <stdio.h>
#include <string.h>

void hm_thread_stats_note_conn(hm_thread_stats *s, hm_http_conn *c)
{
    hm_thread_stats_take_bytes(s, c);
    const hm_tls *tls = hm_http_conn_tls(c); /* over HTTP/2, its connection's */
    if (c->fail == HM_FAIL_TLS && tls) {
        hm_tls_fail k = hm_tls_last_fail(tls);
        s->tls_fail[(unsigned)k < HM_ARRAY_LEN(s->tls_fail) ? k : HM_TLS_PROTOCOL]++;
        if (!s->tls_first_reason[0])
            snprintf(s->tls_first_reason, sizeof(s->tls_first_reason), "%s",
                     hm_tls_last_reason(tls));
    }
    if (c->connect_ns) hm_thread_stats_record(s, HM_PHASE_CONNECT, c->connect_ns / 1000);
    if (c->tls_ns && tls) {
        hm_thread_stats_record(s, HM_PHASE_TLS, c->tls_ns / 1000);
        if (hm_tls_resumed(tls))
            s->tls_resumed++;
        else
            s->tls_full++;
    } else if (c->connect_ns && tls && c->fail != HM_FAIL_TLS) {
        s->tls_unfinished++; /* connected, then cut or timed out mid-handshake */
    }
    /* Noted once: a stream notes its connect when it opens and again when
     * it ends. */
    c->connect_ns = c->tls_ns = 0;
}

void hm_thread_stats_note_outcome(hm_thread_stats *st, const hm_http_conn *c, int rc,
                                  const char *where)
{
    char bytes[sizeof(st->sse_first.bytes)];
    if (rc == 0) {
        int status = c->resp.status;
        if (status >= 200 && status < 300) return;
        bool latest = hm_thread_stats_latest_due(st);
        int i = 0;
        while (i < HM_STATUS_EXAMPLES && st->status_first_code[i] &&
               st->status_first_code[i] != status)
            i++;
        if (!latest && (i == HM_STATUS_EXAMPLES || st->status_first_code[i] == status))
            return; /* kept, or full */
        const char *head = hm_http_conn_head(c);
        const char *eol = memchr(head, '\r', c->head_len);
        hm_escape_bytes(head, eol ? (size_t)(eol - head) : c->head_len, bytes, sizeof(bytes));
        /* php-via says why in the body ("Invalid context"): show its start. */
        char reason[160], body[100] = "";
        if (c->resp.body_len) hm_escape_bytes(c->resp.body, c->resp.body_len, body, 64);
        snprintf(reason, sizeof(reason), "answered HTTP %d%s%s", status, body[0] ? ": " : "", body);
        if (latest) hm_thread_stats_latest(st, reason);
        hm_thread_stats_status_example(st, status, reason, where, bytes);
        return;
    }
    hm_fail_kind k = c->fail ? c->fail : HM_FAIL_OTHER;
    bool latest = hm_thread_stats_latest_due(st);
    if (st->fail_first[k].reason[0] && !latest) return;
    const char *reason = hm_http_conn_fail_reason(c, rc);
    if (latest) {
        char line[160];
        snprintf(line, sizeof(line), "%s: %s", hm_fail_kind_name(k), reason ? reason : "");
        hm_thread_stats_latest(st, line);
    }
    hm_escape_bytes(hm_http_conn_head(c), c->head_len, bytes, sizeof(bytes));
    hm_thread_stats_fail_example(st, k, reason, where, bytes);
}

hm_sse_fail hm_sse_note_end(hm_thread_stats *st, const hm_http_conn *c, int rc, const hm_watch *w,
                            const char *where)
{
    if (rc == -ECANCELED) return HM_SSE_FAIL_NONE;
    char bytes[sizeof(st->sse_first.bytes)], reason[200];
    hm_escape_bytes(hm_http_conn_head(c), c->head_len, bytes, sizeof(bytes));
    hm_sse_fail kind;
    if (hm_reason(w->error)[0]) {
        kind = HM_SSE_FAIL_PROTOCOL;
        snprintf(reason, sizeof(reason), "%s", w->error);
    } else if (rc == -HM_ESTATUS) {
        kind = HM_SSE_FAIL_STATUS;
        snprintf(reason, sizeof(reason), "answered HTTP %d", c->resp.status);
        const char *head = hm_http_conn_head(c);
        const char *eol = memchr(head, '\r', c->head_len);
        hm_escape_bytes(head, eol ? (size_t)(eol - head) : c->head_len, bytes, sizeof(bytes));
    } else if (rc == 0) {
        kind = HM_SSE_FAIL_CLOSED;
        snprintf(reason, sizeof(reason), "the server ended the stream while the run was live");
    } else {
        kind = hm_sse_fail_of(c->fail);
        snprintf(reason, sizeof(reason), "%s", hm_http_conn_fail_reason(c, rc));
    }
    hm_thread_stats_sse_fail(st, kind, reason, where, bytes);
    return kind;
}

void hm_sse_note_cut(hm_thread_stats *st, const hm_watch *w, int64_t timeout_ns, const char *where)
{
    size_t held = hm_sse_pending(&w->sse);
    if (!held) {
        /* Heartbeats only, for longer than --timeout: a note, not a
         * failure (a tab with nothing to show is quiet too). */
        if (w->sse.comments > w->comments_at_event && hm_now_ns() - w->last_event_ns > timeout_ns)
            st->sse_comments_only++;
        return;
    }
    st->sse_cut++;
    if (held > st->sse_cut_bytes) st->sse_cut_bytes = held;
    int64_t quiet_ns = hm_now_ns() - w->last_event_ns;
    if (quiet_ns <= timeout_ns) return; /* an event on its way when the run ended */
    char reason[200];
    snprintf(reason, sizeof(reason),
             "the run ended the stream inside an unfinished line or event of %zu bytes, "
             "%.1f s after its last complete event (over --timeout %.1f s)",
             held, (double)quiet_ns / 1e9, (double)timeout_ns / 1e9);
    hm_thread_stats_sse_fail(st, HM_SSE_FAIL_TIMEOUT, reason, where, "");
}

void hm_sse_note_events(hm_thread_stats *st, const hm_watch *w, const char *where)
{
    if (!w->undecodable) return;
    hm_thread_stats_sse_fail(st, HM_SSE_FAIL_PROTOCOL, hm_reason(w->undecodable_why), where, "");
    st->sse_fail[HM_SSE_FAIL_PROTOCOL] += w->undecodable - 1;
}

bool hm_request_account(hm_http_conn *c, const hm_request *rq, int rc, int64_t t0, int64_t t1,
                        hm_thread_stats *st, hm_liveness *live, int *status)
{
    int64_t intended_ns = rq->intended_ns;
    *status = 0;
    hm_thread_stats_note_conn(st, c);
    if (rc == -ECANCELED) return true; /* a second Ctrl-C: it never finished */
    hm_thread_stats_note_outcome(st, c, rc, rq->where);
    if (rc < 0 && c->fail == HM_FAIL_CONNECT) { /* never sent: an attempt, not an action */
        hm_thread_stats_connect_failed(st);
        return hm_liveness_report(live, t1, false, HM_FAIL_CONNECT, rq->timeout_ns);
    }
    if (rc == 0) {
        *status = c->resp.status;
        if (intended_ns > 0)
            hm_thread_stats_record_scheduled(st, (t1 - intended_ns) / 1000, (t1 - t0) / 1000);
        else
            hm_thread_stats_record_action(st, (t1 - t0) / 1000);
        hm_thread_stats_count(st, c->resp.status, HM_FAIL_NONE);
        hm_liveness_report(live, t1, true, HM_FAIL_NONE, rq->timeout_ns);
        return false;
    }
    hm_thread_stats_count(st, 0, c->fail);
    return hm_liveness_report(live, t1, false, hm_liveness_kind(c), rq->timeout_ns);
}

int hm_sse_head_read(hm_sse_head *h, const hm_http_resp_parser *p, hm_thread_stats *st,
                     const hm_options *o)
{
    h->status = p->status;
    h->empty = hm_via_sse_empty(p);
    if (p->status != 200) return -HM_ESTATUS;
    h->streaming = true;
    hm_sse_note_opened(st, o);
    return 0;
}

hm_sse_end hm_sse_stream_end(hm_sse_head *h, int rc, const hm_http_conn *c, const hm_watch *w,
                             hm_thread_stats *st, const hm_options *o, const char *where)
{
    if (h->streaming) {
        h->streaming = false;
        hm_gauge_sse_open(o, -1);
    }
    if (rc == -ECANCELED) {
        hm_sse_note_cut(st, w, o->timeout_ns, where);
        return HM_SSE_END_CUT;
    }
    if (w->reload_asked || h->empty || (rc == -HM_ESTATUS && h->status == 400))
        return HM_SSE_END_LOST;
    hm_sse_note_end(st, c, rc, w, where);
    return HM_SSE_END_RETRY;
}
