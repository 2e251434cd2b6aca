/* The hammer model's senders (via_hammer.c says the model): a thread's
 * connections (over HTTP/2 their stream slots) as state machines
 * (load/sender_pool.h) driven by vh_senders_driver. Each picks the newest
 * ready context before each action and accounts its outcome against the
 * context it went to. */
#include "load/via_hammer_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- senders ---------------------------------------------------------------- */

void vh_sender_done(counter_run *run)
{
    if (atomic_fetch_sub(&run->workers_left, 1) == 1) {
        run->t_end = hm_now_ns();
        hm_via_user_open_all(&run->user); /* the run is over for whoever waits on a context */
    }
    hm_latch_count_down(&run->senders, 1);
}

/* A state-machine sender's context for its next action: the one rule of
 * every sender (hm_via_user_target), polled (the pool asks again in 1 ms). */
static int pick_request(void *user, hm_pick *p, void **token)
{
    counter_run *run = user;
    if (atomic_load(&hm_stop_requested) || atomic_load(&run->start_err)) return HM_PICK_END;
    hm_ctx_gen *g = *token;
    hm_latch *gate;
    int64_t until;
    int t = hm_via_user_target(&run->user, &g, atomic_load(&run->t_go), &gate, &until);
    *token = g;
    if (t < 0) return HM_PICK_END;
    if (t == 0) return HM_PICK_LATER;
    const vh_req *q = g->data;
    if (!q) return HM_PICK_END;
    p->req = q->req;
    p->len = q->len;
    return HM_PICK_ACTION;
}

static void on_send(void *user, int64_t seq, int64_t intended, void *token)
{
    (void)token;
    counter_run *run = user;
    hm_via_user_stamp(&run->user, seq, intended ? intended : hm_now_ns());
}

/* An outcome, on the context its request went to. */
static void on_result(void *user, hm_thread_stats *st, const hm_http_conn *c, int status,
                      void *token)
{
    counter_run *run = user;
    hm_via_user_account(&run->user, token, st, c, status);
}

void vh_senders_driver(void *p)
{
    sender_thread *t = p;
    counter_run *run = t->run;
    const hm_options *o = run->o;
    hm_latch_wait(&run->go_gate, 0); /* the baseline, or a Ctrl-C */
    hm_ctx_gen *g = atomic_load(&run->user.cur);
    char what[80];
    snprintf(what, sizeof(what), "action POST %.48s", g->page.action_url);
    hm_sender_pool_cfg cfg = {.o = o,
                              .next_seq = &run->next_seq,
                              .t_base = atomic_load(&run->t_go),
                              .live = &run->live,
                              .start_err = &run->start_err,
                              .what = what,
                              .on_send = on_send,
                              .pick = pick_request,
                              .on_result = on_result,
                              .user = run,
                              .streams = o->http2 ? o->streams : 1};
    if (g->data && !atomic_load(&hm_stop_requested))
        hm_sender_pool_run(&cfg, &run->stats[t->thread], t->first, t->n);
    for (int i = 0; i < t->n; i++)
        vh_sender_done(run);
    hm_free(t);
}
