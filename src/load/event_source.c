/* One SSE follower without a coroutine (event_source.h says what it
 * does). Each stream is started with hm_http_conn_stream_start (over
 * HTTP/2 a stream of its connection, whose dispatcher reports it); its
 * done callback does what follows a stream (stream_ended) and arms the
 * back-off's timer, whose callback starts the next one. The owner closes
 * the source before it leaves the page or ends, so no callback outlives
 * it. */
#include "load/event_source.h"

#include "base/hm_reason.h"

#include <stdio.h>

#define WHERE(es) (es)->hooks->where((es), (char[48]){0}, 48)

static int on_headers(void *user, hm_http_resp_parser *p)
{
    hm_event_source *es = user;
    /* The stream's connect and handshake, if it made them, count now: a
     * stream may stay open to the end of the run. */
    hm_thread_stats_note_conn(es->st, &es->conn);
    int rc = hm_sse_head_read(&es->head, p, es->st, es->o);
    if (rc < 0) return rc;
    /* Nothing reads the stream's headers again while it stays open. */
    hm_http_resp_drop_head(p);
    if (es->hooks->opened) es->hooks->opened(es);
    return 0;
}

static int on_body(void *user, const char *at, size_t len)
{
    hm_event_source *es = user;
    uint64_t events = es->watch.sse.events;
    int rc = hm_watch_feed(&es->watch, at, len);
    es->hooks->fed(es, events);
    return rc;
}

/* A stream ended with rc (-ECANCELED: the owner cut it). Returns the
 * back-off before the next one, or -1 when the source stops. */
static int64_t stream_ended(hm_event_source *es, int rc)
{
    /* A retry that found the server away connected nothing. */
    if (es->retrying && (uint32_t)es->conn.connects != es->connects) {
        es->st->reconnects++;
        es->reconnects++;
    }
    hm_thread_stats_note_conn(es->st, &es->conn); /* one that failed before its head */
    hm_sse_end end =
        hm_sse_stream_end(&es->head, rc, &es->conn, &es->watch, es->st, es->o, WHERE(es));
    /* Of its response only the status was read: the head's buffers need
     * not wait for the next stream. */
    hm_http_resp_release(&es->conn.resp);
    if (!es->hooks->ended(es, end) || end != HM_SSE_END_RETRY) return -1;
    es->retrying = true;
    hm_gauge_reconnect(es->o);
    return hm_backoff_next(&es->backoff);
}

static void stream_done(hm_http_conn *c, int rc, void *user)
{
    (void)c;
    hm_event_source *es = user;
    int64_t wait = stream_ended(es, rc);
    if (wait >= 0) hm_timer_arm(hm_loop_current(), &es->wait, hm_now_ns() + wait);
}

/* Starts the next stream; one that cannot start ends as a failed one. It
 * runs on the loop's stack (from the timer, or hm_call_on_loop_stack):
 * the request's building and the connect's start go deeper than a tab's
 * one page of stack leaves room for. */
static void stream_start(void *arg)
{
    hm_event_source *es = arg;
    size_t len = 0;
    char *req = es->hooks->request(es, &len);
    if (!req) {
        es->hooks->ended(es, HM_SSE_END_CUT);
        return;
    }
    hm_watch_restart(&es->watch);
    hm_reason_clear(&es->watch.error); /* the last stream's refusal */
    hm_sse_head_begin(&es->head);
    es->connects = (uint32_t)es->conn.connects;
    int rc = hm_http_conn_stream_start(&es->conn, hm_loop_current(), req, len,
                                       hm_now_ns() + es->o->timeout_ns, on_headers, on_body, es,
                                       stream_done, es);
    hm_free(req);
    if (rc < 0) stream_done(&es->conn, rc, es);
}

/* The back-off is over. An interrupt ends the source instead, as it
 * ends a coroutine's sleep. */
static void wait_over(hm_timer *t)
{
    hm_event_source *es = HM_CONTAINER_OF(t, hm_event_source, wait);
    if (hm_interrupt_current() != HM_INTERRUPT_NONE) {
        es->hooks->ended(es, HM_SSE_END_CUT);
        return;
    }
    stream_start(es);
}

void hm_event_source_init(hm_event_source *es, const hm_http_target *t, hm_h2_conn *h2,
                          const hm_event_source_hooks *hooks, hm_thread_stats *st,
                          const hm_options *o)
{
    hm_http_conn_init_shared(&es->conn, t, NULL, h2);
    hm_timer_init(&es->wait, wait_over);
    es->backoff = HM_BACKOFF_RELOAD;
    es->hooks = hooks;
    es->st = st;
    es->o = o;
    es->connects = es->reconnects = 0;
    es->head = (hm_sse_head){0};
    es->retrying = false;
}

void hm_event_source_open(hm_event_source *es)
{
    hm_backoff_reset(&es->backoff);
    es->retrying = false;
    hm_call_on_loop_stack(stream_start, es);
}

bool hm_event_source_running(const hm_event_source *es)
{
    return hm_http_conn_busy(&es->conn) ||
           (hm_timer_armed(&es->wait) && hm_interrupt_current() == HM_INTERRUPT_NONE);
}

void hm_event_source_hurry(hm_event_source *es)
{
    if (!hm_timer_armed(&es->wait)) return;
    hm_timer_disarm(&es->wait);
    hm_call_on_loop_stack(stream_start, es);
}

/* The stream in progress is cut, on the loop's stack (its note words
 * numbers with snprintf). */
static void cut(void *arg)
{
    hm_event_source *es = arg;
    hm_http_conn_stop(&es->conn);
    stream_ended(es, -ECANCELED);
}

void hm_event_source_close(hm_event_source *es)
{
    hm_timer_disarm(&es->wait);
    if (hm_http_conn_busy(&es->conn)) hm_call_on_loop_stack(cut, es);
}

void hm_event_source_free(hm_event_source *es)
{
    hm_event_source_close(es);
    es->st->connects += es->conn.connects;
    es->st->retries += es->conn.retries;
    hm_thread_stats_take_bytes(es->st, &es->conn);
    hm_http_conn_free(&es->conn);
}
