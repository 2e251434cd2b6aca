/* The hammer model's senders (via_hammer.c says the model): over HTTP/1.1
 * (plain or TLS) a thread's connections as state machines (flood.h) driven
 * by senders_driver, over HTTP/2 one coroutine each (sender_coro). Both
 * pick the newest ready context before each action and account its
 * outcome against the context it went to. */
#include "scenarios/via_hammer_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- senders ---------------------------------------------------------------- */

/* Waits until g may be fired at (its baseline is known) or the request
 * timeout passed; false when the run ended meanwhile. */
static bool wait_ready(counter_run *run, ctx_gen *g)
{
    int64_t give_up = hm_now_ns() + run->o->timeout_ns;
    while (!atomic_load(&g->ready) && !atomic_load(&g->dead) && hm_now_ns() < give_up) {
        if (vh_run_over(run) || hm_latch_wait(&g->ready_gate, give_up) == -ECANCELED) return false;
    }
    return true;
}

void vh_sender_done(counter_run *run)
{
    if (atomic_fetch_sub(&run->workers_left, 1) == 1) {
        run->t_end = hm_now_ns();
        vh_gens_open(run, true); /* the run is over for whoever waits on a context */
    }
    hm_latch_count_down(&run->senders, 1);
}

void vh_sender_coro(void *p)
{
    sender *s = p;
    counter_run *run = s->run;
    const hm_options *o = run->o;
    hm_thread_stats *st = &run->stats[s->thread];
    hm_latch_wait(&run->go_gate, 0); /* the baseline, or a Ctrl-C */
    hm_http_conn c;
    hm_http_conn_init_shared(&c, &o->target, NULL, s->sc->h2);
    hm_gauge_vus(o, 1);
    ctx_gen *g = NULL;
    char *req = NULL;
    char where[96];
    hm_request rq = {.timeout_ns = o->timeout_ns, .where = where};
    for (;;) {
        if (atomic_load(&hm_stop_requested) || atomic_load(&run->start_err)) break;
        ctx_gen *cur = atomic_load(&run->cur);
        if (cur != g) {
            /* Every action is the same request: serialize it once per
             * sender and context. */
            if (g && !wait_ready(run, cur)) break;
            hm_free(req);
            g = cur;
            size_t req_len = 0;
            req = g->body ? hm_via_action_request(&o->target, g->page.action_url, g->cookie,
                                                  g->body, strlen(g->body),
                                                  o->no_origin ? NULL : o->target.origin, &req_len)
                          : NULL;
            if (!req) break;
            snprintf(where, sizeof(where), "action POST %.48s, connection %d", g->page.action_url,
                     s->index);
            rq.req = req;
            rq.len = req_len;
        }
        if (atomic_load(&g->dead) && !o->no_reload && !atomic_load(&run->reload_gave_up) &&
            !atomic_load(&run->holdoff_until) && !atomic_load(&run->reloader_gone)) {
            /* The reloader is getting a new context: wait for it (-d runs
             * on; a budget of -n is spent only on requests). */
            if (run->live.dead || (o->duration_ns && hm_now_ns() - run->t_go >= o->duration_ns))
                break;
            int64_t until = o->duration_ns ? atomic_load(&run->t_go) + o->duration_ns : 0;
            if (hm_latch_wait(&g->replaced_gate, until) == -ECANCELED) break;
            continue;
        }
        int64_t seq = atomic_fetch_add(&run->next_seq, 1);
        if (!hm_budget_allows(o, seq, run->t_go)) break;
        int64_t intended = hm_intended_ns(o, seq, run->t_go);
        if (intended > hm_now_ns() && hm_coro_sleep_until(intended) == -ECANCELED) break;
        __atomic_store_n(&run->send_ns[seq & (SEND_RING - 1)], intended ? intended : hm_now_ns(),
                         __ATOMIC_RELAXED);
        int status;
        rq.intended_ns = intended;
        rq.retry_until_ns = o->duration_ns ? atomic_load(&run->t_go) + o->duration_ns : 0;
        bool stop = hm_request_send(&c, &rq, st, &run->live, &status);
        if (hm_request_unsent(&c, status)) {
            vh_note_trouble(run); /* the server went away: nothing was sent */
        } else if (status >= 200 && status < 300) {
            atomic_fetch_add(&run->ok_total, 1);
            atomic_fetch_add(&g->ok, 1);
            if (!atomic_load_explicit(&g->had_ok, memory_order_relaxed))
                atomic_store(&g->had_ok, true);
            vh_note_ok(run, st, hm_now_ns());
        } else {
            vh_note_trouble(run);
            if (status == 400 && hm_via_invalid_context(&c)) vh_mark_lost(run, g, st);
            /* Sent, but no answer: the server may have applied it. */
            if (status == 0 && c.fail != HM_FAIL_CONNECT) atomic_fetch_add(&g->unanswered, 1);
        }
        if (stop) break;
    }
    hm_thread_stats_add_conn(st, &c);
    hm_gauge_vus(o, -1);
    hm_http_conn_free(&c);
    hm_free(req);
    if (--s->sc->users == 0) {
        hm_h2_conn_free(s->sc->h2);
        hm_free(s->sc);
    }
    vh_sender_done(run);
    hm_free(s);
}

/* sender_coro's choice of context, made before each action: move to the
 * newest once its baseline is known (or --timeout passed), wait while the
 * reloader gets a new one. */
static int pick_request(void *user, const char **req, size_t *len, void **token)
{
    counter_run *run = user;
    const hm_options *o = run->o;
    if (atomic_load(&hm_stop_requested) || atomic_load(&run->start_err)) return -1;
    ctx_gen *g = *token, *cur = atomic_load(&run->cur);
    if (cur != g) {
        if (g && !atomic_load(&cur->ready) && !atomic_load(&cur->dead) &&
            hm_now_ns() < cur->ready_by)
            return vh_run_over(run) ? -1 : 0;
        g = cur;
        *token = g;
    }
    if (!g->req) return -1;
    if (atomic_load(&g->dead) && !o->no_reload && !atomic_load(&run->reload_gave_up) &&
        !atomic_load(&run->holdoff_until)) {
        /* The reloader is getting a new context: wait for it (-d runs on). */
        if (atomic_load(&run->live.dead) ||
            (o->duration_ns && hm_now_ns() - atomic_load(&run->t_go) >= o->duration_ns))
            return -1;
        return 0;
    }
    *req = g->req;
    *len = g->req_len;
    return 1;
}

static void on_send(void *user, int64_t seq, int64_t intended)
{
    counter_run *run = user;
    __atomic_store_n(&run->send_ns[seq & (SEND_RING - 1)], intended ? intended : hm_now_ns(),
                     __ATOMIC_RELAXED);
}

/* sender_coro's accounting of an outcome, on the context it went to. */
static void on_result(void *user, hm_thread_stats *st, const hm_http_conn *c, int status,
                      void *token)
{
    counter_run *run = user;
    ctx_gen *g = token;
    if (status >= 200 && status < 300) {
        atomic_fetch_add(&run->ok_total, 1);
        atomic_fetch_add(&g->ok, 1);
        if (!atomic_load_explicit(&g->had_ok, memory_order_relaxed)) atomic_store(&g->had_ok, true);
        vh_note_ok(run, st, hm_now_ns());
    } else {
        vh_note_trouble(run);
        if (status == 400 && hm_via_invalid_context(c)) vh_mark_lost(run, g, st);
        /* Sent, but no answer: the server may have applied it. */
        if (status == 0 && c->fail != HM_FAIL_CONNECT) atomic_fetch_add(&g->unanswered, 1);
    }
}

void vh_senders_driver(void *p)
{
    sender_thread *t = p;
    counter_run *run = t->run;
    const hm_options *o = run->o;
    hm_latch_wait(&run->go_gate, 0); /* the baseline, or a Ctrl-C */
    ctx_gen *g = atomic_load(&run->cur);
    char what[80];
    snprintf(what, sizeof(what), "action POST %.48s", g->page.action_url);
    hm_flood_cfg cfg = {.o = o,
                        .next_seq = &run->next_seq,
                        .t_base = atomic_load(&run->t_go),
                        .live = &run->live,
                        .start_err = &run->start_err,
                        .what = what,
                        .on_send = on_send,
                        .pick = pick_request,
                        .on_result = on_result,
                        .user = run};
    if (g->req && !atomic_load(&hm_stop_requested))
        hm_flood_run(&cfg, &run->stats[t->thread], t->first, t->n);
    for (int i = 0; i < t->n; i++)
        vh_sender_done(run);
    hm_free(t);
}
