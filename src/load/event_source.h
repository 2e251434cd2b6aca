/* event_source.h — one SSE follower, as a browser's EventSource: it opens
 * a page's stream, reads its head (hm_sse_head_read) and its events into
 * its watch, and when the stream ends says what that means
 * (hm_sse_stream_end): the run cut it; php-via lost the context (the
 * owner reloads the page, then opens the source again); or it failed
 * under a live page, and the next stream follows after HM_BACKOFF_RELOAD,
 * as Datastar's retry does. A browser tab (via_browser.c) and the hammer
 * model's observers (via_user.c) follow their streams with it.
 *
 * Stackless: a stream is hm_http_conn_stream_start's, the back-off a
 * timer. The owner learns what happened through its hooks, which run on
 * the loop's stack and must not suspend; an owner that waits does so on
 * an event of its own that its hooks notify.
 *
 * Reconnects: a stream that a retry opened counts one (st->reconnects and
 * es->reconnects) when it made a new connection; the stream of a new page
 * or context is its page's first, not a reconnect.
 *
 * Ownership: the source owns its connection (made by
 * hm_event_source_init, freed by hm_event_source_free); the owner sets up,
 * reads and frees the watch (a new page gets a fresh one) and owns the
 * hooks, st and o, which must outlive the source. One loop thread. */
#ifndef HM_LOAD_EVENT_SOURCE_H
#define HM_LOAD_EVENT_SOURCE_H

#include "load/request.h"
#include "load/workload.h"

typedef struct hm_event_source hm_event_source;

typedef struct hm_event_source_hooks {
    /* The next stream's request (hm_alloc'd, *len bytes), or NULL when
     * there is none: the hook says why in the stats, and the source stops
     * (ended gets HM_SSE_END_CUT). */
    char *(*request)(hm_event_source *es, size_t *len);
    /* The stream answered 200 (counted in sse.opened); may be NULL. */
    void (*opened)(hm_event_source *es);
    /* Stream bytes went into the watch, which had seen events_before events. */
    void (*fed)(hm_event_source *es, uint64_t events_before);
    /* The stream ended, meaning end. For HM_SSE_END_RETRY, true follows
     * with the next stream after the back-off; any other end, or false,
     * stops the source, and the hook wakes whoever waits for that. An
     * interrupt during the back-off, or a request that could not be
     * made, ends it as HM_SSE_END_CUT. */
    bool (*ended)(hm_event_source *es, hm_sse_end end);
    /* Where the source's failures are reported ("SSE GET /_sse, VU 3"). */
    const char *(*where)(const hm_event_source *es, char *buf, size_t size);
} hm_event_source_hooks;

struct hm_event_source {
    hm_http_conn conn;
    hm_watch watch;
    hm_timer wait; /* the back-off before the next stream */
    hm_backoff backoff;
    const hm_event_source_hooks *hooks;
    hm_thread_stats *st;
    const hm_options *o;
    uint32_t connects;   /* conn.connects when the current stream began */
    uint32_t reconnects; /* streams a retry opened on a new connection */
    hm_sse_head head;    /* what the current stream's head said */
    bool retrying : 1;   /* the last stream failed: the next one is a retry */
};

/* Sets es up for target t (its streams on h2 when not NULL: a tab's one
 * HTTP/2 connection); the watch is the owner's to set up. Allocates
 * nothing. */
void hm_event_source_init(hm_event_source *es, const hm_http_target *t, hm_h2_conn *h2,
                          const hm_event_source_hooks *hooks, hm_thread_stats *st,
                          const hm_options *o);
/* Opens the source on the current loop: a first stream, the back-off
 * reset. A stream that cannot start ends as a failed one. */
void hm_event_source_open(hm_event_source *es);
/* True while the source runs: a stream, or the back-off before the next
 * one (which an interrupt ends). */
bool hm_event_source_running(const hm_event_source *es);
/* A retry waiting out its back-off goes now (a new context came). */
void hm_event_source_hurry(hm_event_source *es);
/* Stops the source: a stream in progress is cut (and noted so), a
 * back-off forgotten; no hook but ended(HM_SSE_END_CUT) runs. */
void hm_event_source_close(hm_event_source *es);
/* Moves the connection's counters into st (connects, retries, bytes; its
 * reconnects are the source's, counted already) and frees it. Closed
 * first. */
void hm_event_source_free(hm_event_source *es);

#endif
