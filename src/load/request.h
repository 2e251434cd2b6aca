/* request.h — what one request's outcome puts into the thread's stats:
 * latency, status or failure kind with the first example, connect and TLS
 * timings, bytes; what an SSE stream's head and end mean (opened, cut,
 * context lost, a failure to retry); and the back-offs and pauses every
 * sender uses when the server refuses or goes away.
 *
 * The adapter between proto (hm_http_conn) and stats (hm_thread_stats), so
 * neither includes the other. Everything here runs on the calling engine
 * thread and owns nothing. */
#ifndef HM_LOAD_REQUEST_H
#define HM_LOAD_REQUEST_H

#include "load/run.h"

/* The wait before the next try of what the server refused, doubling from
 * first_ms to cap_ms; hm_backoff_reset after a success. (Milliseconds in
 * 32 bits: every sender record and browser VU holds one.) */
typedef struct hm_backoff {
    int64_t next_ns;
    uint32_t first_ms, cap_ms;
} hm_backoff;
/* A refused (or timed out) connect: 10 ms doubling to 250 ms, so a
 * restarted server is found within a quarter second and a dead one costs
 * a connection a few attempts a second, not a hundred. */
#define HM_BACKOFF_CONNECT ((hm_backoff){10000000LL, 10, 250})
/* A page reload or an SSE reconnect while the server is away: 100 ms
 * doubling to 2 s, as Datastar's retry. */
#define HM_BACKOFF_RELOAD ((hm_backoff){100000000LL, 100, 2000})
/* A sender with no request to send yet (its context is being reloaded)
 * asks again after this. */
#define HM_PAUSE_PICK_NS 1000000LL

/* The wait to sit out now; the next one doubles (up to the cap). */
static inline int64_t hm_backoff_next(hm_backoff *b)
{
    int64_t d = b->next_ns, cap = (int64_t)b->cap_ms * 1000000;
    b->next_ns = d > cap / 2 ? cap : d * 2;
    return d;
}
static inline void hm_backoff_reset(hm_backoff *b)
{
    b->next_ns = (int64_t)b->first_ms * 1000000;
}

/* What the accounting of one request's outcome needs to know of it. */
typedef struct hm_request {
    int64_t timeout_ns;  /* --timeout: covers the whole exchange */
    int64_t intended_ns; /* -R: the intended send time; 0 without -R */
    const char *where;   /* for a failure's first example, e.g.
                          * "action POST /_action/increment, connection 3" */
} hm_request;

/* Whether the request whose outcome was `status` never went out: its
 * connect failed (a connect attempt, not an action). */
static inline bool hm_request_unsent(const hm_http_conn *c, int status)
{
    return status == 0 && c->fail == HM_FAIL_CONNECT;
}

/* Accounts for an exchange that ran from t0 to t1 and ended with rc (the
 * result an hm_http_conn_start reported: the sender pool) in st: latency
 * when a response came (with -R: both the latency corrected to the
 * intended send time and the service latency), its status or the failure
 * kind with the first example of each, connect and TLS timings, and
 * liveness. A refused connect is a connect attempt, not the request
 * (*status 0, and hm_request_unsent holds): the caller sends it again
 * after HM_BACKOFF_CONNECT. An exchange cancelled by an interrupt
 * (-ECANCELED) is not counted. *status gets the HTTP status (0 when the
 * request failed). The in-flight gauge is the caller's. Returns true
 * when the run should stop. */
bool hm_request_account(hm_http_conn *c, const hm_request *rq, int rc, int64_t t0, int64_t t1,
                        hm_thread_stats *st, hm_liveness *live, int *status);

/* The first example of c's last outcome into st, when it was a failure
 * (rc < 0: c->fail with c->why and the response's first bytes) or a non-2xx
 * answer (the status line, and the body's start when kept). where says
 * which request on which VU or connection. */
void hm_thread_stats_note_outcome(hm_thread_stats *st, const hm_http_conn *c, int rc,
                                  const char *where);

/* How an SSE stream ended, into st (sse.failures and the first example),
 * unless the run ended it itself (rc -ECANCELED): rc is
 * hm_http_conn_stream's result on c, w the stream's watch (its own refusal
 * comes first). A stream the server ended (rc 0) while the run still
 * wanted it is "closed". Returns the kind counted (NONE when none). */
hm_sse_fail hm_sse_note_end(hm_thread_stats *st, const hm_http_conn *c, int rc, const hm_watch *w,
                            const char *where);
/* The run ended an SSE stream itself (rc -ECANCELED): when its parser
 * still held an unfinished line or event, counts it (sse_cut, the most
 * bytes held), and when that stream also sent no complete event for
 * longer than timeout_ns, counts an SSE "timeout" failure saying so: a
 * server stuck in an endless line never says failures: none. */
/* A stream that, without an unfinished line, sent only comments for longer
 * than timeout_ns is counted apart (sse_comments_only), not a failure. */
void hm_sse_note_cut(hm_thread_stats *st, const hm_watch *w, int64_t timeout_ns, const char *where);
/* The watch's undecodable events into st as SSE protocol failures (call
 * once, when the watch is done). */
void hm_sse_note_events(hm_thread_stats *st, const hm_watch *w, const char *where);

/* What one SSE stream's head said, as both followers (the browser tab's
 * EventSource, the hammer model's observer) read it. */
typedef struct hm_sse_head {
    uint16_t status; /* 0 until the head came */
    bool empty;      /* 200 with Content-Length: 0: php-via's repeat for a lost context */
    bool streaming;  /* it answered 200: counted opened, and open on the live gauge */
} hm_sse_head;

/* A stream starts: nothing of the last one's head is left. */
static inline void hm_sse_head_begin(hm_sse_head *h)
{
    h->status = 0;
    h->empty = false;
}

/* The stream's head (the headers callback's): 0 when it opened a stream
 * (a 200: counted opened, sse.opened), -HM_ESTATUS otherwise. */
int hm_sse_head_read(hm_sse_head *h, const hm_http_resp_parser *p, hm_thread_stats *st,
                     const hm_options *o);

/* What a stream's end means to its follower. */
typedef enum hm_sse_end {
    HM_SSE_END_CUT,  /* the run or the tab ended it (rc -ECANCELED): noted as cut */
    HM_SSE_END_LOST, /* php-via has no such context (its reload script, an empty
                      * 200, a 400): a browser reloads the page */
    HM_SSE_END_RETRY /* it failed or ended under a live page (noted, sse.failures):
                      * reconnect after the back-off, as Datastar does */
} hm_sse_end;

/* A stream that ended with rc (c's, w its watch): off the live gauge if
 * it was open, and what its end means, noted into st under where. */
hm_sse_end hm_sse_stream_end(hm_sse_head *h, int rc, const hm_http_conn *c, const hm_watch *w,
                             hm_thread_stats *st, const hm_options *o, const char *where);

/* A connection's outcome into the thread's stats: the adapter between
 * proto (hm_http_conn) and stats (hm_thread_stats), so neither includes the
 * other. Records the connect and TLS handshake the conn's last request
 * made, if it made them (then forgets them, so a second call does not
 * count them again), and a TLS failure's kind and first reason. Call after
 * every request. */
void hm_thread_stats_note_conn(hm_thread_stats *s, hm_http_conn *c);

/* Moves the bytes c read and wrote (and its coded body bytes, as received
 * and decoded) since the last call into st. */
static inline void hm_thread_stats_take_bytes(hm_thread_stats *st, hm_http_conn *c)
{
    if (c->bytes_read || c->bytes_written)
        hm_thread_stats_add_bytes(st, c->bytes_read, c->bytes_written);
    c->bytes_read = c->bytes_written = 0;
    if (c->resp.coded_in) hm_thread_stats_add_coded(st, c->resp.coded_in, c->resp.decoded_out);
    c->resp.coded_in = c->resp.decoded_out = 0;
}

/* An SSE stream answered 200 with its headers: counted as opened
 * (sse.opened) and open on the live gauge until hm_gauge_sse_open(o, -1). */
static inline void hm_sse_note_opened(hm_thread_stats *st, const hm_options *o)
{
    st->sse_opened++;
    hm_gauge_sse_open(o, 1);
}

/* Adds a finished connection's counters to st. */
static inline void hm_thread_stats_add_conn(hm_thread_stats *st, hm_http_conn *c)
{
    hm_thread_stats_take_bytes(st, c);
    st->connects += c->connects;
    st->reconnects += c->reconnects;
    st->retries += c->retries;
}

#endif
