/* A thread's keep-alive connections as state machines (load/sender_pool.h). Each
 * connection cycles: claim an action number -> (with -R, wait for its
 * intended time on a timer) -> cfg->pick -> hm_http_conn_start -> its done
 * callback accounts the outcome -> claim the next. A refused connect is a
 * connect attempt, not the action: the same action is sent again after
 * HM_BACKOFF_CONNECT on the same timer; a connection whose cfg->pick has
 * no request for it yet waits there too (HM_PAUSE_PICK_NS). An extra exchange (a
 * flow's get) goes between the claim and the action, uncounted. The
 * deadlines of all exchanges that take --timeout share it, so they sit
 * in one hm_timeq (O(1) each). */
#include "load/sender_pool.h"
#include "proto/h2_client.h"

#include <stdio.h>
#include <string.h>

/* FC_BUSY: the action is out; FC_EXTRA: an extra exchange is; FC_OPENING
 * and FC_CLOSING: cfg->open or cfg->close runs in its coroutine. */
enum { FC_IDLE, FC_WAITING, FC_PACING, FC_BUSY, FC_EXTRA, FC_OPENING, FC_CLOSING, FC_DONE };

/* First exchanges (each with its connect) in flight at once, per thread:
 * thousands of connects in one burst overflow the server's accept queue
 * (somaxconn, 4096 by default), and a dropped SYN costs its connection a
 * retransmission one, three, seven... seconds later. Every connection
 * claims its first action at the start, as if all had connected at once,
 * and waits (FC_WAITING) for its turn to send it. */
#define CONNECTS_IN_FLIGHT 1024

typedef struct pool pool;

typedef struct pool_conn {
    hm_http_conn c;
    pool *f;
    hm_timer pace;      /* -R: the intended send time; after a refused connect: backoff */
    hm_backoff backoff; /* refused connects in a row */
    int64_t seq, intended_ns, t0;
    void *token;      /* cfg->pick's, for this connection */
    const char *what; /* the action's words for an example, or NULL: cfg->what */
    int index;
    uint8_t state;
    bool first;  /* its first exchange (and connect) has not ended yet */
    bool opened; /* cfg->open returned 0: cfg->close is due at its end */
} pool_conn;

struct pool {
    const hm_sender_pool_cfg *cfg;
    hm_loop *loop;
    hm_thread_stats *st;
    hm_timeq timeout; /* every exchange's deadline: --timeout */
    hm_http_xopts xopts;
    pool_conn *conns;
    hm_h2_conn **h2; /* HTTP/2: the connections the slots share, n_h2 of them */
    int n_h2;
    int n, left;
    int started;   /* connections started so far (the rest wait their turn) */
    bool stopping; /* nothing more, not even claimed actions: Ctrl-C, the target dead */
    bool spent;    /* -n or -d: no more claims (claimed actions still go) */
    hm_event all_done;
};

static void conn_next(pool_conn *fc);
static void conn_dispatch(pool_conn *fc);
static bool run_over(pool *f);
static bool conn_claim(pool_conn *fc);
static void conn_send(pool_conn *fc);
static void extra_done(pool_conn *fc, int rc);

/* The run is over before these connections got their turn. */
static void drop_waiting(pool *f)
{
    while (f->started < f->n) {
        pool_conn *w = &f->conns[f->started++];
        if (w->state != FC_WAITING) continue;
        w->first = false;
        w->state = FC_DONE;
        hm_http_conn_free(&w->c);
        if (--f->left == 0) hm_event_notify(&f->all_done);
    }
}

/* A first exchange ended: the next waiting connection may start. */
static void first_ended(pool_conn *fc)
{
    pool *f = fc->f;
    if (!fc->first) return;
    fc->first = false;
    if (f->stopping) {
        drop_waiting(f);
        return;
    }
    while (f->started < f->n) {
        pool_conn *w = &f->conns[f->started++];
        if (w->state == FC_WAITING) {
            conn_dispatch(w);
            return;
        }
    }
}

/* The connection is gone: its token freed, its counts taken. */
static void conn_finish(pool_conn *fc)
{
    pool *f = fc->f;
    fc->state = FC_DONE;
    if (f->cfg->on_end) f->cfg->on_end(f->cfg->user, fc->token);
    fc->token = NULL;
    hm_gauge_vus(f->cfg->o, -1);
    hm_thread_stats_add_conn(f->st, &fc->c);
    hm_http_conn_free(&fc->c);
    if (--f->left == 0) hm_event_notify(&f->all_done);
}

static void close_coro(void *p)
{
    pool_conn *fc = p;
    fc->f->cfg->close(fc->f->cfg->user, &fc->c, fc->token);
    conn_finish(fc);
}

static void conn_done(pool_conn *fc)
{
    pool *f = fc->f;
    if (fc->state == FC_DONE || fc->state == FC_CLOSING) return;
    if (fc->state == FC_BUSY) hm_thread_stats_in_flight(f->st, -1); /* dropped: ABORT */
    fc->state = FC_CLOSING;
    first_ended(fc);
    hm_timer_disarm(&fc->pace);
    hm_http_conn_stop(&fc->c);
    if (fc->opened && f->cfg->close && hm_coro_spawn(f->loop, close_coro, fc, NULL) == 0) return;
    conn_finish(fc);
}

/* cfg->open for one connection, then its first claim. */
static void open_coro(void *p)
{
    pool_conn *fc = p;
    pool *f = fc->f;
    int rc = f->cfg->open(f->cfg->user, &fc->c, &fc->token);
    fc->opened = rc == 0;
    fc->state = FC_IDLE;
    if (rc < 0) {
        conn_done(fc);
        return;
    }
    conn_next(fc);
}

/* Whether the run has ended for every connection of the thread. */
static bool run_over(pool *f)
{
    const hm_sender_pool_cfg *cfg = f->cfg;
    if (f->stopping) return true;
    if (atomic_load_explicit(&hm_stop_requested, memory_order_relaxed) ||
        atomic_load_explicit(&cfg->live->dead, memory_order_relaxed) ||
        atomic_load_explicit(cfg->start_err, memory_order_relaxed))
        f->stopping = true;
    return f->stopping;
}

/* An extra exchange ended: its outcome to cfg->on_extra, then the claimed
 * action's pick again (after the back-off when its connect was refused). */
static void extra_done(pool_conn *fc, int rc)
{
    pool *f = fc->f;
    const hm_sender_pool_cfg *cfg = f->cfg;
    fc->state = FC_IDLE;
    hm_thread_stats_note_conn(f->st, &fc->c);
    if (cfg->on_extra) cfg->on_extra(cfg->user, f->st, &fc->c, rc, fc->token);
    first_ended(fc);
    if (rc == -ECANCELED || run_over(f)) {
        conn_done(fc);
        return;
    }
    if (rc < 0 && fc->c.fail == HM_FAIL_CONNECT) {
        fc->state = FC_PACING;
        hm_timer_arm(f->loop, &fc->pace, hm_now_ns() + hm_backoff_next(&fc->backoff));
        return;
    }
    hm_backoff_reset(&fc->backoff);
    conn_send(fc);
}

static void exchange_done(hm_http_conn *c, int rc, void *user)
{
    pool_conn *fc = user;
    pool *f = fc->f;
    const hm_sender_pool_cfg *cfg = f->cfg;
    if (fc->state == FC_EXTRA) {
        extra_done(fc, rc);
        return;
    }
    fc->state = FC_IDLE;
    hm_thread_stats_in_flight(f->st, -1);
    int64_t t1 = hm_now_ns();
    hm_request rq = {.timeout_ns = cfg->o->timeout_ns, .intended_ns = fc->intended_ns};
    /* The example's words only when there is an example to keep. */
    char where[96];
    if (rc < 0 || c->resp.status < 200 || c->resp.status >= 300) {
        snprintf(where, sizeof(where), "%.60s, connection %d", fc->what ? fc->what : cfg->what,
                 fc->index);
        rq.where = where;
    }
    int status;
    bool stop = hm_request_account(c, &rq, rc, fc->t0, t1, f->st, cfg->live, &status);
    if (cfg->on_status) cfg->on_status(cfg->user, status);
    if (cfg->on_result) cfg->on_result(cfg->user, f->st, c, status, fc->token);
    if (stop) {
        f->stopping = true;
        conn_done(fc); /* and those still waiting for their turn */
        return;
    }
    first_ended(fc);
    if (hm_request_unsent(c, status)) { /* the same action again, after the backoff */
        if (run_over(f) || !hm_budget_allows(cfg->o, fc->seq, cfg->t_base)) {
            conn_done(fc);
            return;
        }
        fc->state = FC_PACING;
        hm_timer_arm(f->loop, &fc->pace, t1 + hm_backoff_next(&fc->backoff));
        return;
    }
    hm_backoff_reset(&fc->backoff);
    conn_next(fc);
}

/* An exchange could not start: the run fails. */
static void start_failed(pool_conn *fc, int rc)
{
    int none = 0;
    atomic_compare_exchange_strong(fc->f->cfg->start_err, &none, rc);
    fc->f->stopping = true;
    conn_done(fc);
}

/* Sends an extra exchange (HM_PICK_EXTRA) with its own deadline. */
static void extra_send(pool_conn *fc, const hm_pick *p)
{
    pool *f = fc->f;
    hm_http_xopts xo = f->xopts;
    xo.idempotent = true; /* a flow's get */
    xo.head = xo.discard_body = false;
    if (p->timeout_ns) {
        xo.timeq = NULL;
        xo.deadline = hm_now_ns() + p->timeout_ns;
        xo.span_ns = p->timeout_ns;
    }
    fc->state = FC_EXTRA;
    int rc = hm_http_conn_start(&fc->c, f->loop, p->req, p->len, &xo, exchange_done, fc);
    if (rc < 0) start_failed(fc, rc);
}

static void conn_send(pool_conn *fc)
{
    pool *f = fc->f;
    const hm_sender_pool_cfg *cfg = f->cfg;
    if (fc->intended_ns > 0 && atomic_load_explicit(&hm_stop_requested, memory_order_relaxed)) {
        conn_done(fc); /* the wait was cut short by Ctrl-C: send nothing new */
        return;
    }
    hm_pick p = {.seq = fc->seq, .req = cfg->req, .len = cfg->len};
    if (cfg->pick) {
        switch (cfg->pick(cfg->user, &p, &fc->token)) {
        case HM_PICK_ACTION:
            break;
        case HM_PICK_LATER: /* ask again soon, the action still claimed */
            fc->state = FC_PACING;
            hm_timer_arm(f->loop, &fc->pace, hm_now_ns() + HM_PAUSE_PICK_NS);
            return;
        case HM_PICK_EXTRA:
            extra_send(fc, &p);
            return;
        case HM_PICK_SKIP: /* the next action goes from the loop: skips must not recurse */
            if (!conn_claim(fc)) {
                conn_done(fc);
                return;
            }
            fc->state = FC_PACING;
            hm_timer_arm(f->loop, &fc->pace,
                         fc->intended_ns > hm_now_ns() ? fc->intended_ns : hm_now_ns());
            return;
        default:
            conn_done(fc);
            return;
        }
    }
    fc->what = p.what;
    if (p.new_conn) hm_http_conn_close(&fc->c);
    if (cfg->on_send) cfg->on_send(cfg->user, fc->seq, fc->intended_ns, fc->token);
    fc->state = FC_BUSY;
    fc->t0 = hm_now_ns();
    hm_thread_stats_in_flight(f->st, 1);
    int rc = hm_http_conn_start(&fc->c, f->loop, p.req, p.len, &f->xopts, exchange_done, fc);
    if (rc < 0) {
        hm_thread_stats_in_flight(f->st, -1);
        start_failed(fc, rc);
    }
}

static void pace_fired(hm_timer *t)
{
    pool_conn *fc = HM_CONTAINER_OF(t, pool_conn, pace);
    if (run_over(fc->f)) {
        conn_done(fc);
        return;
    }
    conn_send(fc);
}

/* Claims the next action number; false when the run is over (for this
 * connection and, -n or -d spent, for the thread). */
static bool conn_claim(pool_conn *fc)
{
    pool *f = fc->f;
    const hm_sender_pool_cfg *cfg = f->cfg;
    if (run_over(f)) return false;
    if (f->spent) return false;
    int64_t seq = atomic_fetch_add(cfg->next_seq, 1);
    if (!hm_budget_allows(cfg->o, seq, cfg->t_base)) {
        f->spent = true;
        return false;
    }
    fc->seq = seq;
    fc->intended_ns = hm_intended_ns(cfg->o, seq, cfg->t_base);
    return true;
}

/* Sends the claimed action now, or at its intended time (-R). */
static void conn_dispatch(pool_conn *fc)
{
    if (fc->intended_ns > hm_now_ns()) {
        fc->state = FC_PACING;
        hm_timer_arm(fc->f->loop, &fc->pace, fc->intended_ns);
        return;
    }
    conn_send(fc);
}

/* Claims the next action number and sends it. */
static void conn_next(pool_conn *fc)
{
    fc->state = FC_IDLE;
    if (!conn_claim(fc)) {
        conn_done(fc);
        return;
    }
    conn_dispatch(fc);
}

/* Ends every connection now: paced ones and idle ones at once, and (when
 * abort) the ones in an exchange too, uncounted. */
static void stop_all(pool *f, bool abort)
{
    f->stopping = true;
    drop_waiting(f);
    for (int i = 0; i < f->n; i++) {
        pool_conn *fc = &f->conns[i];
        if (fc->state == FC_PACING || fc->state == FC_IDLE ||
            (abort && (fc->state == FC_BUSY || fc->state == FC_EXTRA)))
            conn_done(fc);
    }
}

/* The HTTP/2 connections, once no slot uses them. */
static void pool_free_h2(pool *f)
{
    for (int i = 0; f->h2 && i < f->n_h2; i++)
        hm_h2_conn_free(f->h2[i]);
    hm_free(f->h2);
    f->h2 = NULL;
}

/* Every connection claims its first action now; the first ones go. */
static void start_claiming(pool *f)
{
    int claimed = 0, n = f->n;
    while (claimed < n && conn_claim(&f->conns[claimed]))
        f->conns[claimed++].state = FC_WAITING;
    for (int i = claimed; i < n; i++) { /* -n is spent: never started */
        f->conns[i].state = FC_DONE;
        f->conns[i].first = false;
        f->left--;
    }
    hm_gauge_vus(f->cfg->o, claimed); /* a connection counts as a VU, as a getter coroutine did */
    f->started = 0;
    while (f->started < claimed && f->started < CONNECTS_IN_FLIGHT)
        conn_dispatch(&f->conns[f->started++]);
    if (f->started == claimed) f->started = n;
}

/* Every connection runs cfg->open in its coroutine, then claims. */
static void start_opening(pool *f)
{
    hm_gauge_vus(f->cfg->o, f->n);
    f->started = f->n;
    for (int i = 0; i < f->n; i++) {
        pool_conn *fc = &f->conns[i];
        fc->first = false;
        fc->state = FC_OPENING;
        int rc = hm_coro_spawn(f->loop, open_coro, fc, NULL);
        if (rc < 0) start_failed(fc, rc);
    }
}

int hm_sender_pool_run(const hm_sender_pool_cfg *cfg, hm_thread_stats *st, int first_index, int n)
{
    if (n <= 0) return 0;
    pool f = {.cfg = cfg, .loop = hm_loop_current(), .st = st, .n = n, .left = n};
    f.conns = hm_calloc((size_t)n, sizeof(*f.conns));
    if (!f.conns) {
        int none = 0;
        atomic_compare_exchange_strong(cfg->start_err, &none, -ENOMEM);
        return -ENOMEM;
    }
    hm_timeq_init(f.loop, &f.timeout, cfg->o->timeout_ns);
    /* Unless on_result reads them, nothing reads a pool's response headers:
     * status and framing suffice, unless bodies come coded (--compressed):
     * Content-Encoding is needed. */
    f.xopts = (hm_http_xopts){.idempotent = cfg->idempotent,
                              .head = cfg->head,
                              .discard_body = cfg->discard_body,
                              .no_headers = !cfg->o->target.accept_encoding && !cfg->keep_headers,
                              .timeq = &f.timeout,
                              .req_outlives = !cfg->req_per_exchange};
    hm_event_init(&f.all_done);
    int streams = cfg->o->target.http2 && cfg->streams > 1 && !cfg->own_conns ? cfg->streams : 1;
    if (cfg->o->target.http2 && !cfg->own_conns) {
        f.n_h2 = (n + streams - 1) / streams;
        f.h2 = hm_calloc((size_t)f.n_h2, sizeof(*f.h2));
        int rc = f.h2 ? 0 : -ENOMEM;
        for (int i = 0; rc == 0 && i < f.n_h2; i++)
            rc = hm_h2_conn_create(&f.h2[i], &cfg->o->target);
        if (rc < 0) {
            int none = 0;
            atomic_compare_exchange_strong(cfg->start_err, &none, rc);
            pool_free_h2(&f);
            hm_timeq_fini(&f.timeout);
            hm_free(f.conns);
            return rc;
        }
    }
    for (int i = 0; i < n; i++) {
        pool_conn *fc = &f.conns[i];
        hm_http_conn_init_shared(&fc->c, &cfg->o->target, NULL, f.h2 ? f.h2[i / streams] : NULL);
        fc->f = &f;
        fc->index = first_index + i / streams;
        fc->first = true;
        fc->backoff = HM_BACKOFF_CONNECT;
        hm_timer_init(&fc->pace, pace_fired);
    }
    if (cfg->open)
        start_opening(&f);
    else
        start_claiming(&f);
    if (f.left == 0) hm_event_notify(&f.all_done);
    /* The connections run from the loop's callbacks; this coroutine only
     * waits. A Ctrl-C ends the wait (it is a soft one): STOP lets the
     * requests in flight finish, ABORT drops them. Opening and closing
     * coroutines still run their course (theirs are cancelled too), so
     * an aborted wait gives them the loop. */
    while (f.left > 0) {
        int rc = hm_event_wait(&f.all_done, 0);
        if (rc == -ECANCELED || atomic_load(&hm_stop_requested)) {
            bool abort = hm_interrupt_current() >= HM_INTERRUPT_ABORT;
            stop_all(&f, abort);
            if (abort && f.left > 0) hm_coro_yield();
        }
    }
    pool_free_h2(&f);
    hm_timeq_fini(&f.timeout);
    hm_free(f.conns);
    return 0;
}
