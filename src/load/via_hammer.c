/* The hammer load model (--mode hammer), for every php-via workload: the
 * action_hammer model done right. One page load and context; observers hold
 * SSE streams with the session cookie; -c actions stay in flight over
 * keep-alive connections (not in batches); at the end the workload's check
 * must hold (for counter: the net increment equals the number of HTTP OK).
 *
 * Threads: every engine thread runs its share of the -c connections; thread
 * 0 also runs the user's observers and reloader, and the finisher. A
 * thread's senders are state machines (load/sender_pool.h) with no stack
 * each: keep-alive connections, or over HTTP/2 --streams stream slots on
 * each connection. They pick the context before each action
 * (hm_via_user_target) and account its outcome against it
 * (hm_via_user_account). Threads share only the atomics in counter_run and
 * the user's.
 *
 * The session is one hm_via_user (via_user.h): its contexts, its
 * observers, the reloader that replaces a context the server lost, the
 * caught-up rule of the end and the check over every context, the same
 * code a flow in the hammer model runs. This file adds the set-up page
 * load, the one action request each context gets (vh_req), and the
 * senders. --no-reload counts the loss and goes on. */
#include "load/via_hammer_internal.h"

#include <stdio.h>
#include <string.h>

/* The run is over for the coroutines that wait on a context. */
bool vh_run_over(counter_run *run)
{
    return atomic_load(&hm_stop_requested) || atomic_load(&run->live.dead) ||
           atomic_load(&run->workers_left) == 0;
}

static bool user_over(void *p)
{
    return vh_run_over(p);
}

static void req_free(void *p)
{
    vh_req *q = p;
    hm_free(q->body);
    hm_free(q->req);
    hm_free(q);
}

/* g's action request, serialized once for every sender of every thread
 * (signals: the page's, for the wire id of a signal the workload sets). */
static bool make_request(counter_run *run, hm_ctx_gen *g, json_t *signals)
{
    const hm_options *o = run->o;
    vh_req *q = hm_calloc(1, sizeof(*q));
    if (!q) return false;
    if (hm_workload_body(o->workload, g->page.ctx, o->signals_json, signals, false, &q->body) == 0)
        q->req =
            hm_via_action_request(&o->target, g->page.action_url, g->cookie, q->body,
                                  strlen(q->body), o->no_origin ? NULL : o->target.origin, &q->len);
    if (!q->req) {
        req_free(q);
        return false;
    }
    g->data = q;
    return true;
}

/* A reloaded context's request (the user's make hook). */
static bool user_make(void *p, hm_ctx_gen *g, const char *html, size_t len, char *why,
                      size_t whylen)
{
    counter_run *run = p;
    (void)html;
    (void)len;
    if (make_request(run, g, run->signals)) return true;
    snprintf(why, whylen, "cannot build the action request");
    return false;
}

/* ---- set-up: page load ---------------------------------------------------- */

static void setup_coro(void *p)
{
    counter_run *run = p;
    const hm_options *o = run->o;
    hm_http_conn c;
    hm_http_conn_init(&c, &o->target, NULL);
    int64_t t0 = hm_now_ns();
    int rc = hm_via_load_page(&c, &run->jar, o->route, o->action, t0 + o->timeout_ns, &run->page,
                              run->fatal, sizeof(run->fatal));
    if (rc == 0) {
        hm_thread_stats_record(&run->stats[0], HM_PHASE_PAGE, (hm_now_ns() - t0) / 1000);
        hm_thread_stats_note_conn(&run->stats[0], &c);
    } else if (hm_interrupt_current() != HM_INTERRUPT_NONE) {
        snprintf(run->fatal, sizeof(run->fatal), "interrupted during set-up (the page load)");
    }
    run->stats[0].connects += c.connects;
    hm_http_conn_free(&c);
}

static void teardown_coro(void *p)
{
    counter_run *run = p;
    hm_http_conn c;
    hm_http_conn_init(&c, &run->o->target, NULL);
    int64_t deadline = hm_now_ns() + run->o->timeout_ns;
    hm_ctx_gen *g = atomic_load(&run->user.cur);
    if (!atomic_load(&g->dead)) hm_via_close_session(&c, g->page.ctx, g->cookie, deadline);
    for (int i = 1; i < run->o->observers; i++)
        if (run->user.obs[i].page.ctx)
            hm_via_close_session(&c, run->user.obs[i].page.ctx, g->cookie, deadline);
    hm_http_conn_free(&c);
}

/* A coroutine or its record could not be started: the run fails with this
 * error instead of waiting for work that will never be done. */
static void start_failed(counter_run *run, int err)
{
    int none = 0;
    atomic_compare_exchange_strong(&run->start_err, &none, err);
}

/* The body can only be built once the page's signals are known (the wire
 * id of a signal the workload sets); the senders start after that (the
 * user's on_baseline hook: its main stream showed its first state, or
 * ended). */
static void start_senders(void *p, json_t *signals)
{
    counter_run *run = p;
    if (atomic_load(&run->go)) return;
    hm_ctx_gen *g = atomic_load(&run->user.cur);
    if (signals && !run->signals) run->signals = json_deep_copy(signals);
    if (!g->data && !make_request(run, g, signals))
        snprintf(run->fatal, sizeof(run->fatal), "--signals is not a JSON object");
    atomic_store(&g->ready, true);
    hm_latch_count_down(&g->ready_gate, 1);
    atomic_store(&run->t_go, hm_now_ns());
    atomic_store(&run->go, true);
    hm_latch_count_down(&run->go_gate, 1);
}

/* Waits for the senders, then for the last patch, then ends the streams. */
static void finisher_coro(void *p)
{
    counter_run *run = p;
    const hm_options *o = run->o;
    hm_via_observer *main_ob = &run->user.obs[0];
    /* Senders wait for the baseline; give the stream the request timeout.
     * (A Ctrl-C ends this wait too: it is a soft one.) */
    hm_latch_wait(&run->go_gate, hm_now_ns() + o->timeout_ns);
    if (!atomic_load(&run->go) && o->observers > 0 && !main_ob->task.done && main_ob->connected &&
        !atomic_load(&hm_stop_requested)) {
        /* Open, but silent: a stream that shows no state is a failed one. */
        char why[120];
        snprintf(why, sizeof(why), "no baseline event (%s) within %.3g s of opening", o->signal,
                 (double)o->timeout_ns / 1e9);
        hm_thread_stats_sse_fail(&run->stats[0], HM_SSE_FAIL_TIMEOUT, why, main_ob->where, "");
    }
    start_senders(run, NULL);
    /* Every sender counts this down when it ends (a Ctrl-C's STOP lets the
     * requests in flight finish; an ABORT ends this wait at once). */
    while (!hm_latch_open(&run->senders) && hm_interrupt_current() < HM_INTERRUPT_ABORT)
        hm_latch_wait(&run->senders, 0);
    /* The final patch may trail the last response (also after Ctrl-C: the
     * verdict covers what ran, so it needs the patches of what ran). */
    hm_via_user_finish(&run->user, hm_now_ns() + o->timeout_ns);
}

static void thread_main(hm_loop *loop, int idx, void *arg)
{
    counter_run *run = arg;
    const hm_options *o = run->o;
    if (idx == 0) {
        int rc = hm_via_user_spawn(&run->user, loop);
        if (rc == 0) rc = hm_coro_spawn(loop, finisher_coro, run, NULL);
        if (rc < 0) {
            /* Without the finisher nobody would end the streams: end them
             * now (the cancels stick before they first run), and let the
             * senders go so that they see the failure and stop. */
            start_failed(run, rc);
            for (int i = 0; i < o->observers; i++)
                hm_task_cancel(&run->user.obs[i].task);
            hm_task_cancel(&run->user.reloader);
            hm_latch_count_down(&run->go_gate, 1);
        }
    }
    int first = 0;
    for (int i = 0; i < idx; i++)
        first += hm_share(o->concurrency, o->threads, i);
    int mine = hm_share(o->concurrency, o->threads, idx);
    /* Stackless senders: connections, or over HTTP/2 their --streams slots. */
    int n = mine * (o->http2 ? o->streams : 1);
    sender_thread *t = hm_alloc(sizeof(*t));
    int rc = t ? 0 : -ENOMEM;
    if (t) *t = (sender_thread){run, idx, first, n};
    if (rc == 0 && (rc = hm_coro_spawn(loop, vh_senders_driver, t, NULL)) < 0) hm_free(t);
    if (rc < 0) {
        start_failed(run, rc);
        for (int i = 0; i < n; i++)
            vh_sender_done(run); /* never started: nothing to wait for */
    }
}

/* The user's check into the results. */
static void judge(counter_run *run, hm_results *r, bool counting)
{
    hm_via_user_verdict v;
    hm_via_user_judge(&run->user, &v);
    r->baseline_known = r->final_known = v.baseline_known;
    r->baseline = v.baseline;
    r->final_value = v.last;
    r->patches_observed = v.patches;
    r->patches_extra = v.extra;
    r->observers_connected = v.connected;
    r->total.swallowed += v.swallowed;
    r->check_passed = v.passed;
    if (v.reloaded) {
        r->ok_checked_known = true;
        r->ok_checked = v.last_ok;
    }
    hm_via_user_detail(&v, r->check_detail, sizeof(r->check_detail));
    r->matches_ok = counting && r->check_passed;
}

int hm_via_hammer_run(const hm_options *o, hm_results *r)
{
    counter_run run = {.o = o, .r = r};
    int rc = 0;
    run.stats = hm_calloc((size_t)o->threads, sizeof(*run.stats));
    if (!run.stats) return -ENOMEM;
    for (int i = 0; i < o->threads; i++)
        if ((rc = hm_thread_stats_init(&run.stats[i])) < 0) return rc;
    hm_cookie_jar_init(&run.jar);
    hm_latch_init(&run.go_gate, 1);
    /* one per sender: over HTTP/2, --streams of them share a connection */
    hm_latch_init(&run.senders, o->concurrency * (o->http2 ? o->streams : 1));
    hm_event_init(&run.progress);
    hm_via_user_cfg ucfg = {.o = o,
                            .workload = o->workload,
                            .signal = o->signal,
                            .st = &run.stats[0],
                            .live = &run.live,
                            .jar = &run.jar,
                            .action = o->action,
                            .seq = &run.next_seq,
                            .progress = &run.progress,
                            .run_end = &run.senders,
                            .observers = o->observers,
                            .make = user_make,
                            .free_data = req_free,
                            .on_baseline = start_senders,
                            .values_only = true,
                            .over = user_over,
                            .user = &run};
    if ((rc = hm_via_user_init(&run.user, &ucfg)) < 0) {
        r->fatal = "out of memory";
        goto out;
    }

    /* Bad --signals is a usage error: find it before any request. */
    char *probe_body = NULL;
    if (hm_workload_body(o->workload, "x", o->signals_json, NULL, false, &probe_body) < 0) {
        r->fatal = "--signals is not a JSON object";
        rc = -HM_EPARSE;
        goto out;
    }
    hm_free(probe_body);
    rc = hm_run_on_temp_loop(o->backend, setup_coro, &run);
    if (rc < 0 || !run.page.ctx) {
        snprintf(r->fatal_buf, sizeof(r->fatal_buf), "%s",
                 run.fatal[0] ? run.fatal : "set-up failed");
        r->fatal = r->fatal_buf;
        rc = -HM_ENOTFOUND;
        goto out;
    }
    /* Its request is made once the stream showed the page's signals. */
    if (!hm_via_user_publish(&run.user, o->route, &run.page, NULL)) {
        r->fatal = "out of memory";
        rc = -ENOMEM;
        goto out;
    }
    if (o->observers == 0) start_senders(&run, NULL);
    atomic_store(&run.workers_left, o->concurrency * (o->http2 ? o->streams : 1));

    rc = hm_scenario_engine_run(o, run.stats, sizeof(*run.stats), thread_main, &run, &run.live,
                                &run.t_start, &run.t_end);
    hm_run_on_temp_loop(o->backend, teardown_coro, &run);

    for (int i = 0; i < o->threads; i++)
        hm_thread_stats_merge(&r->total, &run.stats[i]);
    /* From the first action (docs/output.md): the wait for the stream's
     * baseline is set-up, not load; on a busy machine it is not short. */
    int64_t t_go = atomic_load(&run.t_go);
    r->wall_seconds = (double)(run.t_end - (t_go ? t_go : run.t_start)) / 1e9;
    rc = hm_run_note_end(r, rc, &run.live, NULL, atomic_load(&run.start_err),
                         "a sender or an observer");
    bool counting =
        o->workload->check == HM_CHECK_NET_INCREMENT || o->workload->check == HM_CHECK_SPREADSHEET;
    r->has_signal = counting;
    r->signal_name = o->signal;
    r->has_patches = o->observers > 0;
    r->conns_extra_why = "the set-up page load and reloads";
    r->observers = o->observers;
    r->has_check = true;
    if (o->observers > 0)
        judge(&run, r, counting);
    else {
        r->check_not_evaluated = true;
        snprintf(r->check_detail, sizeof(r->check_detail),
                 "--observers 0: no SSE stream watched the context");
    }
out:
    hm_via_user_free(&run.user);
    for (int i = 0; i < o->threads; i++)
        hm_thread_stats_destroy(&run.stats[i]);
    hm_free(run.stats);
    json_decref(run.signals);
    hm_via_page_free(&run.page);
    hm_cookie_jar_free(&run.jar);
    return rc;
}
