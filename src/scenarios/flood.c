/* A thread's keep-alive connections as state machines (flood.h). Each
 * connection cycles: claim an action number -> (with -R, wait for its
 * intended time on a timer) -> hm_http_conn_start -> its done callback
 * accounts the outcome -> claim the next. A refused connect waits 10 ms on
 * the same timer, as a coroutine sender's sleep did. The deadlines of all
 * exchanges share --timeout, so they sit in one hm_timeq (O(1) each). */
#include "scenarios/flood.h"

#include <stdio.h>
#include <string.h>

enum { FC_IDLE, FC_PACING, FC_BUSY, FC_DONE };

typedef struct flood flood;

typedef struct flood_conn {
    hm_http_conn c;
    flood *f;
    hm_timer pace; /* -R: the intended send time; after a refused connect: 10 ms */
    int64_t seq, intended_ns, t0;
    int index;
    uint8_t state;
} flood_conn;

struct flood {
    const hm_flood_cfg *cfg;
    hm_loop *loop;
    hm_thread_stats *st;
    hm_timeq timeout; /* every exchange's deadline: --timeout */
    hm_http_aopts aopts;
    flood_conn *conns;
    int n, left;
    bool stopping; /* no new requests: Ctrl-C, the target dead, -n or -d spent */
    hm_event all_done;
};

static void conn_next(flood_conn *fc);

static void conn_done(flood_conn *fc)
{
    flood *f = fc->f;
    if (fc->state == FC_DONE) return;
    if (fc->state == FC_BUSY) hm_thread_stats_in_flight(f->st, -1); /* dropped: ABORT */
    fc->state = FC_DONE;
    hm_gauge_vus(f->cfg->o, -1);
    hm_timer_disarm(&fc->pace);
    hm_http_conn_stop(&fc->c);
    hm_thread_stats_add_conn(f->st, &fc->c);
    hm_http_conn_free(&fc->c);
    if (--f->left == 0) hm_event_notify(&f->all_done);
}

/* Whether the run has ended for every connection of the thread. */
static bool run_over(flood *f)
{
    const hm_flood_cfg *cfg = f->cfg;
    if (f->stopping) return true;
    if (atomic_load_explicit(&hm_stop_requested, memory_order_relaxed) ||
        atomic_load_explicit(&cfg->live->dead, memory_order_relaxed) ||
        atomic_load_explicit(cfg->start_err, memory_order_relaxed))
        f->stopping = true;
    return f->stopping;
}

static void exchange_done(hm_http_conn *c, int rc, void *user)
{
    flood_conn *fc = user;
    flood *f = fc->f;
    const hm_flood_cfg *cfg = f->cfg;
    fc->state = FC_IDLE;
    hm_thread_stats_in_flight(f->st, -1);
    int64_t t1 = hm_now_ns();
    hm_request rq = {.idempotent = cfg->idempotent,
                     .head = cfg->head,
                     .discard_body = cfg->discard_body,
                     .timeout_ns = cfg->o->timeout_ns,
                     .intended_ns = fc->intended_ns};
    /* The example's words only when there is an example to keep. */
    char where[96];
    if (rc < 0 || c->resp.status < 200 || c->resp.status >= 300) {
        snprintf(where, sizeof(where), "%.60s, connection %d", cfg->what, fc->index);
        rq.where = where;
    }
    int status;
    bool stop = hm_request_account(c, &rq, rc, fc->t0, t1, f->st, cfg->live, &status);
    if (cfg->on_status) cfg->on_status(cfg->user, status);
    if (stop) {
        f->stopping = true;
        conn_done(fc);
        return;
    }
    if (rc < 0 && c->fail == HM_FAIL_CONNECT) { /* pace a refused connect */
        fc->state = FC_PACING;
        fc->seq = -1;
        hm_timer_arm(f->loop, &fc->pace, t1 + 10 * 1000000);
        return;
    }
    conn_next(fc);
}

static void conn_send(flood_conn *fc)
{
    flood *f = fc->f;
    const hm_flood_cfg *cfg = f->cfg;
    if (fc->intended_ns > 0 && atomic_load_explicit(&hm_stop_requested, memory_order_relaxed)) {
        conn_done(fc); /* the wait was cut short by Ctrl-C: send nothing new */
        return;
    }
    if (cfg->on_send) cfg->on_send(cfg->user, fc->seq, fc->intended_ns);
    fc->state = FC_BUSY;
    fc->t0 = hm_now_ns();
    hm_thread_stats_in_flight(f->st, 1);
    int rc = hm_http_conn_start(&fc->c, f->loop, cfg->req, cfg->len, &f->aopts, exchange_done, fc);
    if (rc < 0) {
        hm_thread_stats_in_flight(f->st, -1);
        int none = 0;
        atomic_compare_exchange_strong(cfg->start_err, &none, rc);
        f->stopping = true;
        conn_done(fc);
    }
}

static void pace_fired(hm_timer *t)
{
    flood_conn *fc = HM_CONTAINER_OF(t, flood_conn, pace);
    if (fc->seq < 0) { /* paced after a refused connect: claim the next */
        conn_next(fc);
        return;
    }
    conn_send(fc);
}

/* Claims the next action number and sends it (now, or at its time). */
static void conn_next(flood_conn *fc)
{
    flood *f = fc->f;
    const hm_flood_cfg *cfg = f->cfg;
    fc->state = FC_IDLE;
    if (run_over(f)) {
        conn_done(fc);
        return;
    }
    int64_t seq = atomic_fetch_add(cfg->next_seq, 1);
    if (!hm_budget_allows(cfg->o, seq, cfg->t_base)) {
        f->stopping = true;
        conn_done(fc);
        return;
    }
    fc->seq = seq;
    fc->intended_ns = hm_intended_ns(cfg->o, seq, cfg->t_base);
    if (fc->intended_ns > hm_now_ns()) {
        fc->state = FC_PACING;
        hm_timer_arm(f->loop, &fc->pace, fc->intended_ns);
        return;
    }
    conn_send(fc);
}

/* Ends every connection now: paced ones and idle ones at once, and (when
 * abort) the ones in an exchange too, uncounted. */
static void stop_all(flood *f, bool abort)
{
    f->stopping = true;
    for (int i = 0; i < f->n; i++) {
        flood_conn *fc = &f->conns[i];
        if (fc->state == FC_PACING || fc->state == FC_IDLE || (abort && fc->state == FC_BUSY))
            conn_done(fc);
    }
}

int hm_flood_run(const hm_flood_cfg *cfg, hm_thread_stats *st, int first_index, int n)
{
    if (n <= 0) return 0;
    flood f = {.cfg = cfg, .loop = hm_loop_current(), .st = st, .n = n, .left = n};
    f.conns = hm_calloc((size_t)n, sizeof(*f.conns));
    if (!f.conns) {
        int none = 0;
        atomic_compare_exchange_strong(cfg->start_err, &none, -ENOMEM);
        return -ENOMEM;
    }
    hm_timeq_init(f.loop, &f.timeout, cfg->o->timeout_ns);
    f.aopts = (hm_http_aopts){.idempotent = cfg->idempotent,
                              .head = cfg->head,
                              .discard_body = cfg->discard_body,
                              .timeq = &f.timeout};
    hm_event_init(&f.all_done);
    for (int i = 0; i < n; i++) {
        flood_conn *fc = &f.conns[i];
        hm_http_conn_init(&fc->c, &cfg->o->target, NULL);
        fc->f = &f;
        fc->index = first_index + i;
        hm_timer_init(&fc->pace, pace_fired);
    }
    hm_gauge_vus(cfg->o, n); /* each connection counts as a VU, as a getter coroutine did */
    for (int i = 0; i < n; i++)
        conn_next(&f.conns[i]);
    /* The connections run from the loop's callbacks; this coroutine only
     * waits. A Ctrl-C ends the wait (it is a soft one): STOP lets the
     * requests in flight finish, ABORT drops them. */
    while (f.left > 0) {
        int rc = hm_event_wait(&f.all_done, 0);
        if (rc == -ECANCELED || atomic_load(&hm_stop_requested))
            stop_all(&f, hm_interrupt_current() >= HM_INTERRUPT_ABORT);
    }
    hm_timeq_fini(&f.timeout);
    hm_free(f.conns);
    return 0;
}
