/* sender_pool.h — a thread's share of -c keep-alive connections that send one
 * request over and over (the get scenario, the hammer model's senders)
 * without a coroutine each: a connection is a record in one array (its
 * hm_http_conn: socket, parser state and deadline), driven by the loop's
 * callbacks, so an idle keep-alive connection costs no stack. Over HTTP/2
 * a record is a stream slot, cfg->streams of them sharing one HTTP/2
 * connection (its reader, writer and dispatcher coroutines: h2_client.h,
 * hm_h2_conn_start), so a stream costs no stack either. Each
 * exchange is accounted exactly as hm_request_send accounts a coroutine's
 * (latency, status or failure kind with its first example, liveness).
 *
 * Ownership: the caller owns the config and everything it points to; they
 * must outlive hm_sender_pool_run. The request (cfg->req) must stay valid until
 * the engine threads end (it is sent detached). */
#ifndef HM_LOAD_SENDER_POOL_H
#define HM_LOAD_SENDER_POOL_H

#include "load/request.h"

typedef struct hm_sender_pool_cfg {
    const hm_options *o;
    const char *req; /* the request, serialized once for the run */
    size_t len;
    bool idempotent, head, discard_body;
    _Atomic int64_t *next_seq; /* the run's claim counter (-n) */
    int64_t t_base;            /* -d and -R count from here */
    hm_liveness *live;
    _Atomic int *start_err; /* set (and read) when something cannot start */
    const char *what;       /* the request in a failure's example: "GET /x" */
    /* HTTP/2 (o->target.http2): the pool's connections are stream slots,
     * this many (at least 1) on each HTTP/2 connection, which is numbered
     * in examples as a connection (first_index + slot / streams). */
    int streams;
    /* Optional hooks, on the loop's thread: before a request goes out
     * (action sequence, intended send time or 0), and with each outcome's
     * HTTP status (0 when the request failed). */
    void (*on_send)(void *user, int64_t seq, int64_t intended_ns);
    void (*on_status)(void *user, int status);
    /* Optional: the request for the next exchange, when it may change
     * during the run (the hammer model's context after a reload). *token
     * is the connection's own (NULL at first), kept between calls. Returns
     * 1 with *req and *len set (valid until the engine threads end), 0 to
     * be asked again in 1 ms (the claimed action waits), or -1 to end the
     * connection. Without it every exchange sends cfg->req. */
    int (*pick)(void *user, const char **req, size_t *len, void **token);
    /* Optional: each outcome with the connection (its response, when one
     * came), the thread's statistics and the token the request was picked
     * with. */
    void (*on_result)(void *user, hm_thread_stats *st, const hm_http_conn *c, int status,
                      void *token);
    void *user;
} hm_sender_pool_cfg;

/* Runs n connections (numbered first_index..) on the current loop from the
 * calling coroutine, which waits until every one has stopped: -n spent, -d
 * over, Ctrl-C (STOP: requests in flight finish; ABORT: they are dropped,
 * uncounted), the target dead, or *start_err set. Their statistics go to
 * st. Returns 0, or a negative errno when the connections could not be
 * started (and *start_err says so too). */
int hm_sender_pool_run(const hm_sender_pool_cfg *cfg, hm_thread_stats *st, int first_index, int n);

#endif
