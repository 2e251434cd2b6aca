/* sender_pool.h — a thread's share of -c keep-alive connections that send
 * actions over and over (the get scenario, the hammer model's senders, a
 * flow's senders, sticky's VUs) without a coroutine each: a connection is a record in
 * one array (its hm_http_conn: socket, parser state and deadline), driven
 * by the loop's callbacks, so an idle keep-alive connection costs no
 * stack. Over HTTP/2 a record is a stream slot, cfg->streams of them
 * sharing one HTTP/2 connection (its reader, writer and dispatcher
 * coroutines: h2_client.h, hm_h2_conn_start), so a stream costs no stack
 * either. This is hammer's one sender loop: claim an action from the
 * budget (-n, -d), pace it (-R), send it, account its outcome (latency,
 * status or failure kind with its first example, liveness:
 * hm_request_account), back off after a refused connect.
 *
 * Ownership: the caller owns the config and everything it points to; they
 * must outlive hm_sender_pool_run. The request (cfg->req) must stay valid
 * until the engine threads end (it is sent detached); those cfg->pick
 * returns live as cfg->req_per_exchange says. A connection's token is
 * cfg->pick's to make and cfg->on_end's to free. */
#ifndef HM_LOAD_SENDER_POOL_H
#define HM_LOAD_SENDER_POOL_H

#include "load/request.h"

/* What cfg->pick chose for a connection's next exchange. */
typedef enum hm_pick_kind {
    HM_PICK_END = -1,   /* end the connection: its claimed action goes unsent, uncounted */
    HM_PICK_LATER = 0,  /* ask again after HM_PAUSE_PICK_NS; the claimed action waits */
    HM_PICK_ACTION = 1, /* send p->req as the claimed action */
    /* Send p->req before the claimed action, not as one: outside -n and
     * the request statistics (a flow's get step). Its outcome goes to
     * on_extra; then pick is asked again for the same claimed action,
     * after HM_BACKOFF_CONNECT when its connect was refused. */
    HM_PICK_EXTRA = 2,
    /* The claimed action is spent without a request (its values could not
     * be made; the picker says why where its step is reported). */
    HM_PICK_SKIP = 3,
} hm_pick_kind;

typedef struct hm_pick {
    int64_t seq;     /* in: the claimed action's number in -n */
    const char *req; /* the request, and its length */
    size_t len;
    const char *what;   /* the request in a failure's example; NULL: cfg->what */
    int64_t timeout_ns; /* HM_PICK_EXTRA: its deadline's span; 0: --timeout */
    bool new_conn;      /* close the connection first: the request opens a new one */
} hm_pick;

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
     * (action sequence, intended send time or 0, the connection's token),
     * and with each outcome's HTTP status (0 when the request failed). */
    void (*on_send)(void *user, int64_t seq, int64_t intended_ns, void *token);
    void (*on_status)(void *user, int status);
    /* Optional: the next exchange of a connection, when it may change
     * during the run (the hammer model's context after a reload, a flow's
     * next step). *token is the connection's own (NULL at first), kept
     * between calls. Returns an hm_pick_kind with p filled in (p->req and
     * p->len start as cfg->req and cfg->len). Without it every exchange
     * sends cfg->req. */
    int (*pick)(void *user, hm_pick *p, void **token);
    /* The requests pick returns stay valid only until their outcome's
     * hook has run (made for each exchange): they are copied where the
     * kernel does not take them at once. Otherwise they must stay valid
     * until the engine threads end and go detached. */
    bool req_per_exchange;
    /* Optional: each outcome with the connection (its response, when one
     * came), the thread's statistics and the token the request was picked
     * with. */
    void (*on_result)(void *user, hm_thread_stats *st, const hm_http_conn *c, int status,
                      void *token);
    bool keep_headers; /* on_result reads the response's headers (else only the
                        * status and framing are kept: hm_http_resp_set_lean) */
    /* Optional: the outcome of an HM_PICK_EXTRA exchange (rc 0 or a
     * negative error, c->fail saying which), its bytes and connect already
     * in st. */
    void (*on_extra)(void *user, hm_thread_stats *st, const hm_http_conn *c, int rc, void *token);
    /* Optional: the connection ended; its token (NULL if no hook made
     * one) is the hook's to free. */
    void (*on_end)(void *user, void *token);
    /* Optional: what each connection does before its first claim, in a
     * coroutine of its own, so it may exchange on c (a page load whose
     * connection the actions then use) and make *token. 0: it starts
     * claiming; a negative errno: it ends, nothing claimed. The pool
     * waits for these instead of pacing its first connects. */
    int (*open)(void *user, hm_http_conn *c, void **token);
    /* Optional, with open: a connection that opened ends with these last
     * words on c (a session close), in a coroutine of its own; then
     * on_end. On an ABORT its exchanges end at once (-ECANCELED). */
    void (*close)(void *user, hm_http_conn *c, void *token);
    /* HTTP/2: each connection is an HTTP/2 connection of its own, made at
     * its first request, so that closing it (hm_pick.new_conn) ends that
     * connection; otherwise the pool's connections share those it makes
     * (streams). */
    bool own_conns;
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
