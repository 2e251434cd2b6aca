/* The hammer load model (--mode hammer), for every php-via workload: the
 * action_hammer model done right. One page load and context; observers hold
 * SSE streams with the session cookie; -c actions stay in flight over
 * keep-alive connections (not in batches); at the end the workload's check
 * must hold (for counter: the net increment equals the number of HTTP OK).
 *
 * Threads: every engine thread runs its share of the -c connections; thread
 * 0 also runs the observers, the finisher and the reloader. Over plain
 * HTTP/1.1 a thread's senders are state machines (load/sender_pool.h) with no stack
 * each; over TLS or HTTP/2 each is a coroutine (vh_sender_coro, --streams of
 * them on one HTTP/2 connection). Both pick the context before each
 * action and account its outcome the same way. Threads share only the
 * atomics in counter_run and the send-time ring (written by the sender,
 * read by the observer; a slot is only read after its action was claimed,
 * and a stale read only skews one latency sample).
 *
 * Action -> patch latency: the patch whose value is baseline+k carries the
 * effect of k actions, so it completes the k-th action in send order (see
 * docs/output.md).
 *
 * Context loss (a server restart): when an action gets 400 Invalid context
 * or the main stream carries php-via's reload script (or an empty 200),
 * the context is dead. A reloader on thread 0 loads the page again with
 * the same cookies, as the script makes a browser do, and publishes the
 * new context as a new generation; senders switch to it once the main
 * observer has its baseline. Each generation is checked on its own: the
 * last exactly, a dead one leniently (its swallowed OK actions counted).
 * Generations live until the run ends, since senders on other threads may
 * still hold an older one (and each generation's serialized request, which
 * state-machine senders send detached). --no-reload counts the loss and
 * goes on. */
#include "load/sender_pool.h"
#include "proto/via_client.h"
#include "load/via_hammer_internal.h"

#include "proto/h2_client.h"
#include "load/workload.h"

#include <stdio.h>
#include <string.h>

/* ---- context loss -------------------------------------------------------- */

void vh_note_trouble(counter_run *run)
{
    int64_t zero = 0;
    atomic_compare_exchange_strong(&run->trouble_ns, &zero, hm_now_ns());
}

void vh_note_ok(counter_run *run, hm_thread_stats *st, int64_t now)
{
    if (!atomic_load_explicit(&run->trouble_ns, memory_order_relaxed)) return;
    int64_t since = atomic_exchange(&run->trouble_ns, 0);
    if (since && atomic_exchange(&run->reloaded, false) && now > since)
        hm_hdr_record(&st->recovery_us, (now - since) / 1000);
}

/* A new context: its gates closed. */
static ctx_gen *gen_new(void)
{
    ctx_gen *g = hm_calloc(1, sizeof(*g));
    if (!g) return NULL;
    hm_latch_init(&g->ready_gate, 1);
    hm_latch_init(&g->dead_gate, 1);
    hm_latch_init(&g->replaced_gate, 1);
    return g;
}

static void gen_set_ready(ctx_gen *g)
{
    atomic_store(&g->ready, true);
    hm_latch_count_down(&g->ready_gate, 1); /* a second count-down does nothing */
}

/* Opens the gates of the newest context and of those before it, every
 * gate (the run is over) or only the replaced ones (the reloader ended, so
 * no newer context will come); whoever waits on one re-checks why. */
void vh_gens_open(counter_run *run, bool all)
{
    for (ctx_gen *g = atomic_load(&run->cur); g; g = g->prev) {
        if (all) {
            hm_latch_count_down(&g->ready_gate, 1);
            hm_latch_count_down(&g->dead_gate, 1);
        }
        hm_latch_count_down(&g->replaced_gate, 1);
    }
}

/* The server lost g: counted once; the reloader takes it from here. */
void vh_mark_lost(counter_run *run, ctx_gen *g, hm_thread_stats *st)
{
    vh_note_trouble(run);
    if (!atomic_exchange(&g->dead, true)) st->ctx_lost++;
    hm_latch_count_down(&g->dead_gate, 1);
    hm_latch_count_down(&g->ready_gate, 1);
}

static void gen_free(ctx_gen *g)
{
    hm_via_page_free(&g->page);
    hm_free(g->cookie);
    hm_free(g->body);
    hm_free(g->req);
    if (g->watched) hm_watch_free(&g->watch);
    hm_free(g);
}

/* The action request of g, serialized once for every state-machine sender
 * of every thread; it lives as long as g (the run), so it may be sent
 * detached. False when it cannot be built. */
static bool gen_request(const hm_options *o, ctx_gen *g)
{
    if (!g->body) return false;
    g->req =
        hm_via_action_request(&o->target, g->page.action_url, g->cookie, g->body, strlen(g->body),
                              o->no_origin ? NULL : o->target.origin, &g->req_len);
    return g->req != NULL;
}

/* The run is over for the coroutines that wait on a context. */
bool vh_run_over(counter_run *run)
{
    return atomic_load(&hm_stop_requested) || atomic_load(&run->live.dead) ||
           atomic_load(&run->workers_left) == 0;
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
    ctx_gen *g = atomic_load(&run->cur);
    if (!atomic_load(&g->dead)) hm_via_close_session(&c, g->page.ctx, g->cookie, deadline);
    for (int i = 1; i < run->o->observers; i++)
        if (run->obs && run->obs[i].page.ctx)
            hm_via_close_session(&c, run->obs[i].page.ctx, g->cookie, deadline);
    hm_http_conn_free(&c);
}

/* ---- observers -------------------------------------------------------------- */

static void on_patch(hm_watch *w, int64_t value, void *user)
{
    observer *ob = user;
    counter_run *run = ob->run;
    if (ob->index != 0) return;
    int64_t now = hm_now_ns();
    bool counting = w->w->check == HM_CHECK_NET_INCREMENT || w->w->check == HM_CHECK_SPREADSHEET;
    int64_t base = ob->gen ? ob->gen->seq_base : 0;
    int64_t upto = counting ? base + value - w->baseline : ob->matched + 1;
    int64_t claimed = atomic_load(&run->next_seq);
    if (upto > claimed) upto = claimed;
    hm_thread_stats *st = &run->stats[0];
    for (; ob->matched < upto; ob->matched++) {
        int64_t sent =
            __atomic_load_n(&run->send_ns[ob->matched & (SEND_RING - 1)], __ATOMIC_RELAXED);
        if (sent > 0 && now >= sent)
            hm_thread_stats_record(st, HM_PHASE_PATCH, (now - sent) / 1000);
    }
    hm_event_notify(&run->progress); /* the finisher may be waiting for this one */
}

/* A coroutine or its record could not be started: the run fails with this
 * error instead of waiting for work that will never be done. */
static void start_failed(counter_run *run, int err)
{
    int none = 0;
    atomic_compare_exchange_strong(&run->start_err, &none, err);
}

/* The body can only be built once the page's signals are known (the wire
 * id of a signal the workload sets); the senders start after that. */
static void start_senders(counter_run *run, json_t *signals)
{
    if (atomic_load(&run->go)) return;
    const hm_options *o = run->o;
    ctx_gen *g = atomic_load(&run->cur);
    if (signals && !run->signals) run->signals = json_deep_copy(signals);
    if (!g->body &&
        hm_workload_body(o->workload, g->page.ctx, o->signals_json, signals, false, &g->body) < 0)
        snprintf(run->fatal, sizeof(run->fatal), "--signals is not a JSON object");
    if (!g->req) gen_request(o, g);
    gen_set_ready(g);
    atomic_store(&run->t_go, hm_now_ns());
    atomic_store(&run->go, true);
    hm_latch_count_down(&run->go_gate, 1);
}

static int on_sse_body(void *user, const char *at, size_t len)
{
    observer *ob = user;
    int rc = hm_watch_feed(&ob->watch, at, len);
    if (ob->index == 0 && ob->watch.have_baseline) {
        start_senders(ob->run, ob->watch.signals);
        if (ob->gen) gen_set_ready(ob->gen); /* a reloaded context's baseline */
    }
    return rc;
}

static int on_sse_headers(void *user, hm_http_resp_parser *p)
{
    observer *ob = user;
    ob->status = p->status;
    ob->empty = hm_via_sse_empty(p);
    if (p->status != 200) return -HM_ESTATUS;
    ob->connected = ob->streaming = true;
    ob->run->stats[0].sse_opened++;
    hm_gauge_sse_open(ob->run->o, 1);
    return 0;
}

static void watch_fresh(observer *ob)
{
    hm_watch_init(&ob->watch, ob->run->o->workload, ob->run->o->signal);
    ob->watch.on_patch = on_patch;
    ob->watch.user = ob;
    /* After the baseline (start_senders' signals), only values are read. */
    ob->watch.value_only = true;
}

/* The main observer moves to the newest context: its view of the old one
 * stays with it, for the verdict at the end. */
static void follow(observer *ob, ctx_gen *to)
{
    if (ob->gen) {
        ob->patches_done += ob->watch.patches;
        ob->extra_done += ob->watch.extra;
        ob->gen->watch = ob->watch;
        ob->gen->watched = true;
        watch_fresh(ob);
    }
    ob->gen = to;
    ob->matched = to->seq_base;
}

/* Loads the route into *page with the run's cookies, retrying with
 * backoff while the server is away; false when the run ended first. */
static bool load_again(counter_run *run, hm_http_conn *c, const char *action, hm_via_page *page)
{
    const hm_options *o = run->o;
    hm_thread_stats *st = &run->stats[0];
    hm_backoff backoff = HM_BACKOFF_RELOAD;
    int64_t first_fail = 0;
    char why[256];
    while (!atomic_load(&hm_stop_requested) && !atomic_load(&run->live.dead)) {
        int64_t t0 = hm_now_ns();
        int rc = hm_via_load_page(c, &run->jar, o->route, action, t0 + o->timeout_ns, page, why,
                                  sizeof(why));
        hm_thread_stats_note_conn(st, c);
        if (rc == 0) {
            hm_thread_stats_record(st, HM_PHASE_PAGE, (hm_now_ns() - t0) / 1000);
            return true;
        }
        if (rc == -ECANCELED) return false;
        st->reload_failed++;
        int64_t now = hm_now_ns();
        if (hm_liveness_report(&run->live, now, false, c->fail, o->timeout_ns)) return false;
        if (atomic_load(&run->workers_left) == 0) return false;
        if (!first_fail) first_fail = now;
        /* Connect failures are the liveness watch's; a server that answers
         * but serves no page gets --timeout. */
        if (c->fail != HM_FAIL_CONNECT && now - first_fail > o->timeout_ns) {
            if (!atomic_load(&run->reload_gave_up)) {
                snprintf(run->reload_why, sizeof(run->reload_why),
                         "the context was lost and no reload succeeded within --timeout: %.120s",
                         why);
                atomic_store(&run->reload_gave_up, true);
            }
            return false;
        }
        if (hm_coro_sleep(hm_backoff_next(&backoff)) == -ECANCELED) return false;
    }
    return false;
}

static void observer_coro(void *p)
{
    observer *ob = p;
    counter_run *run = ob->run;
    const hm_options *o = run->o;
    hm_thread_stats *st = &run->stats[0];
    hm_http_conn_init(&ob->conn, &o->target, NULL);
    watch_fresh(ob);
    snprintf(ob->where, sizeof(ob->where), "SSE GET /_sse, observer %d", ob->index);
    if (ob->index > 0) {
        /* Extra observers are other tabs of the same session: own context. */
        char why[256];
        int rc = hm_via_load_page(&ob->conn, &run->jar, o->route, NULL, hm_now_ns() + o->timeout_ns,
                                  &ob->page, why, sizeof(why));
        if (rc < 0) {
            if (rc != -ECANCELED)
                hm_thread_stats_sse_fail(st, HM_SSE_FAIL_OTHER, why, ob->where, "");
            goto out;
        }
    }
    hm_backoff backoff = HM_BACKOFF_RELOAD;
    for (;;) {
        ctx_gen *cur = atomic_load(&run->cur);
        if (ob->index == 0 && cur != ob->gen) follow(ob, cur);
        const char *ctx = ob->index == 0 ? cur->page.ctx : ob->page.ctx;
        size_t len = 0;
        char *req = hm_via_sse_request(&o->target, ctx, cur->cookie, &len);
        if (!req) {
            hm_thread_stats_sse_fail(st, HM_SSE_FAIL_OTHER, "cannot build the SSE request",
                                     ob->where, "");
            break;
        }
        hm_watch_restart(&ob->watch);
        ob->watch.error[0] = 0;
        ob->empty = false;
        int rc = hm_http_conn_stream(&ob->conn, req, len, hm_now_ns() + o->timeout_ns,
                                     on_sse_headers, on_sse_body, ob);
        hm_free(req);
        if (ob->streaming) {
            ob->streaming = false;
            hm_gauge_sse_open(o, -1);
        }
        /* The finisher ends the stream (-ECANCELED); anything else was the
         * server's doing. */
        if (rc == -ECANCELED) {
            hm_sse_note_cut(st, &ob->watch, o->timeout_ns, ob->where);
            break;
        }
        if (ob->watch.reload_asked || ob->empty || (rc == -HM_ESTATUS && ob->status == 400)) {
            /* php-via's answer for a context it does not have. */
            if (ob->index == 0) {
                vh_mark_lost(run, cur, st);
                if (o->no_reload) break;
                /* The reloader publishes the next context (once it is
                 * gone, nothing will: wait for the run's end). */
                while (atomic_load(&run->cur) == cur && !vh_run_over(run)) {
                    hm_latch *gate =
                        atomic_load(&run->reloader_gone) ? &run->senders : &cur->replaced_gate;
                    if (hm_latch_wait(gate, 0) == -ECANCELED) goto out;
                }
                if (vh_run_over(run)) break;
            } else {
                st->ctx_lost++;
                if (o->no_reload) break;
                hm_via_page_free(&ob->page);
                if (!load_again(run, &ob->conn, NULL, &ob->page)) break;
                st->reloads++;
                hm_gauge_reload(o);
                ob->patches_done += ob->watch.patches;
                hm_sse_note_events(st, &ob->watch, ob->where);
                hm_watch_free(&ob->watch);
                watch_fresh(ob);
            }
            hm_backoff_reset(&backoff);
            continue;
        }
        hm_sse_note_end(st, &ob->conn, rc, &ob->watch, ob->where);
        if (ob->index == 0) vh_note_trouble(run);
        if (vh_run_over(run)) break;
        /* Reconnect with backoff, as Datastar's retry does; at once when a
         * new context came meanwhile (the senders wait for its baseline). */
        hm_gauge_reconnect(o);
        int64_t until = hm_now_ns() + hm_backoff_next(&backoff);
        int wrc =
            ob->index > 0 ? hm_coro_sleep_until(until) : hm_latch_wait(&cur->replaced_gate, until);
        if (wrc == -ECANCELED) goto out;
        /* The gate opened for the run's end or the reloader's: sit out the
         * backoff all the same. */
        if (wrc == 0 && atomic_load(&run->cur) == cur && hm_coro_sleep_until(until) == -ECANCELED)
            goto out;
    }
out:
    hm_sse_note_events(st, &ob->watch, ob->where);
    if (ob->streaming) hm_gauge_sse_open(o, -1);
    if (ob->index == 0) start_senders(run, ob->watch.signals); /* never block the senders */
    /* Its reconnects are its connection's (hm_thread_stats_add_conn): the
     * stream's retries that found the server away connected nothing. */
    hm_thread_stats_add_conn(st, &ob->conn);
    hm_http_conn_free(&ob->conn);
    hm_event_notify(&run->progress);
}

/* Thread 0: when the newest context is dead, loads the page again (same
 * cookies, a new context) and publishes it; senders switch over. */
static void reloader_coro(void *p)
{
    counter_run *run = p;
    const hm_options *o = run->o;
    hm_thread_stats *st = &run->stats[0];
    hm_http_conn c;
    hm_http_conn_init(&c, &o->target, NULL);
    int fruitless = 0; /* reloads in a row whose context was lost before any OK */
    hm_backoff holdoff = HM_BACKOFF_RELOAD;
    while (!vh_run_over(run) && !o->no_reload) {
        ctx_gen *g = atomic_load(&run->cur);
        if (!atomic_load(&g->dead)) {
            if (hm_latch_wait(&g->dead_gate, 0) == -ECANCELED) break;
            continue; /* dead, or the run is over */
        }
        /* A restart loses a context once and the reload recovers; a server
         * whose workers do not share contexts (OpenSwoole's mode 7) loses
         * the new one at once. Back off from the second fruitless reload
         * (100 ms doubling to 2 s) so the run goes on. */
        fruitless = g->prev && !atomic_load(&g->had_ok) ? fruitless + 1 : 0;
        if (fruitless <= 1) hm_backoff_reset(&holdoff);
        if (fruitless > 1) {
            int64_t wait = hm_backoff_next(&holdoff);
            atomic_store(&run->holdoff_until, hm_now_ns() + wait);
            int rc = hm_coro_sleep(wait);
            atomic_store(&run->holdoff_until, 0);
            if (rc == -ECANCELED || vh_run_over(run)) break;
        }
        ctx_gen *n = gen_new();
        if (!n) break;
        if (!load_again(run, &c, o->action, &n->page) ||
            !(n->cookie = hm_via_cookie_dup(&run->jar, &o->target, "/")) ||
            hm_workload_body(o->workload, n->page.ctx, o->signals_json, run->signals, false,
                             &n->body) < 0 ||
            !gen_request(o, n)) {
            gen_free(n);
            break;
        }
        n->prev = g;
        n->seq_base = atomic_load(&run->next_seq);
        n->ready_by = hm_now_ns() + o->timeout_ns;
        if (o->observers == 0) gen_set_ready(n);
        st->reloads++;
        hm_gauge_reload(o);
        atomic_store(&run->reloaded, true);
        atomic_store(&run->cur, n);
        hm_latch_count_down(&g->replaced_gate, 1); /* after cur moved: waiters see n */
    }
    /* No newer context will come: whoever waits for one goes on. */
    atomic_store(&run->reloader_gone, true);
    vh_gens_open(run, false);
    hm_thread_stats_add_conn(st, &c);
    hm_http_conn_free(&c);
}

/* True when the stream shows the effect of every OK action so far. */
static bool watch_caught_up(const hm_watch *w, int64_t ok)
{
    if (!w->have_baseline) return false;
    switch (w->w->check) {
    case HM_CHECK_NET_INCREMENT:
    case HM_CHECK_SPREADSHEET:
        return w->last - w->baseline >= ok;
    default: /* no counter to compare: quiet for 300 ms after the last patch */
        return w->patches > 0 && hm_now_ns() - w->last_patch_ns > 300 * 1000000LL;
    }
}

/* Waits for the senders, then for the last patch, then ends the streams. */
static void finisher_coro(void *p)
{
    counter_run *run = p;
    const hm_options *o = run->o;
    observer *main_ob = &run->obs[0];
    /* Senders wait for the baseline; give the stream the request timeout.
     * (A Ctrl-C ends this wait too: it is a soft one.) */
    hm_latch_wait(&run->go_gate, hm_now_ns() + o->timeout_ns);
    if (!atomic_load(&run->go) && !main_ob->task.done && main_ob->connected &&
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
    /* The final patch may trail the last response: wait until the signal
     * shows every OK, or time out (also after Ctrl-C: the verdict covers
     * what ran, so it needs the patches of what ran). Each patch, and the
     * observer's end, wakes the wait. */
    int64_t until = hm_now_ns() + o->timeout_ns;
    while (!main_ob->task.done && hm_now_ns() < until && !atomic_load(&run->live.dead) &&
           hm_interrupt_current() < HM_INTERRUPT_ABORT) {
        ctx_gen *g = atomic_load(&run->cur);
        if (main_ob->gen == g && watch_caught_up(&main_ob->watch, (int64_t)atomic_load(&g->ok)))
            break;
        /* without a counter, "caught up" is a quiet spell after the last
         * patch; a reload the observer has not followed yet is looked at
         * again soon */
        int64_t wake = until;
        if (main_ob->watch.patches && main_ob->watch.last_patch_ns + 301 * 1000000LL < wake)
            wake = main_ob->watch.last_patch_ns + 301 * 1000000LL;
        if (main_ob->gen != g && hm_now_ns() + 10 * 1000000LL < wake)
            wake = hm_now_ns() + 10 * 1000000LL;
        hm_event_wait(&run->progress, wake);
    }
    /* A cancel sticks even when the observer is runnable right now. */
    for (int i = 0; i < o->observers; i++) {
        hm_task_cancel(&run->obs[i].task);
        hm_task_join(&run->obs[i].task, 0);
    }
}

static void thread_main(hm_loop *loop, int idx, void *arg)
{
    counter_run *run = arg;
    const hm_options *o = run->o;
    if (idx == 0) {
        int rc = 0;
        for (int i = 0; i < o->observers && rc == 0; i++)
            rc = hm_task_spawn(&run->obs[i].task, loop, observer_coro, &run->obs[i]);
        if (rc == 0) rc = hm_coro_spawn(loop, finisher_coro, run, NULL);
        if (rc == 0) rc = hm_coro_spawn(loop, reloader_coro, run, NULL);
        if (rc < 0) {
            /* Without the finisher nobody would end the streams: end them
             * now (the cancels stick before they first run), and let the
             * senders go so that they see the failure and stop. */
            start_failed(run, rc);
            for (int i = 0; i < o->observers; i++)
                hm_task_cancel(&run->obs[i].task);
            hm_latch_count_down(&run->go_gate, 1);
        }
    }
    int first = 0;
    for (int i = 0; i < idx; i++)
        first += hm_share(o->concurrency, o->threads, i);
    int mine = hm_share(o->concurrency, o->threads, idx);
    /* Plain HTTP/1.1 only: TLS and HTTP/2 keep a coroutine per sender. */
    if (!o->target.tls && !o->http2) {
        sender_thread *t = hm_alloc(sizeof(*t));
        int rc = t ? 0 : -ENOMEM;
        if (t) *t = (sender_thread){run, idx, first, mine};
        if (rc == 0 && (rc = hm_coro_spawn(loop, vh_senders_driver, t, NULL)) < 0) hm_free(t);
        if (rc < 0) {
            start_failed(run, rc);
            for (int i = 0; i < mine; i++)
                vh_sender_done(run); /* never started: nothing to wait for */
        }
        return;
    }
    int streams = o->http2 ? o->streams : 1;
    for (int i = 0; i < mine; i++) {
        sender_conn *sc = hm_calloc(1, sizeof(*sc));
        if (!sc) {
            start_failed(run, -ENOMEM);
            for (int k = 0; k < (mine - i) * streams; k++)
                vh_sender_done(run); /* never started: nothing to wait for */
            break;
        }
        sc->users = streams;
        if (o->http2) hm_h2_conn_create(&sc->h2, &o->target); /* NULL: each its own */
        for (int k = 0; k < streams; k++) {
            sender *s = hm_alloc(sizeof(*s));
            int rc = s ? 0 : -ENOMEM;
            if (s) *s = (sender){run, idx, first + i, sc};
            if (rc == 0 && (rc = hm_coro_spawn(loop, vh_sender_coro, s, NULL)) < 0) hm_free(s);
            if (rc < 0) {
                start_failed(run, rc);
                vh_sender_done(run); /* never started: nothing to wait for */
                if (--sc->users == 0) {
                    hm_h2_conn_free(sc->h2);
                    hm_free(sc);
                }
            }
        }
    }
}

/* The check over every context the main observer watched: the newest
 * exactly (its net increment equals its OK actions), each lost one
 * leniently (never more than its OK; the rest were swallowed). */
static void judge(counter_run *run, hm_results *r, bool counting)
{
    observer *ob = &run->obs[0];
    ctx_gen *last = atomic_load(&run->cur);
    if (ob->gen && ob->gen != last) follow(ob, last); /* it never reached the newest */
    r->baseline_known = r->final_known = ob->watch.have_baseline;
    r->baseline = ob->watch.baseline;
    r->final_value = ob->watch.last;
    r->patches_observed = ob->patches_done;
    for (int i = 0; i < run->o->observers; i++) {
        r->patches_observed += run->obs[i].watch.patches;
        r->patches_extra += run->obs[i].watch.extra + run->obs[i].extra_done;
        if (i > 0) r->patches_observed += run->obs[i].patches_done;
        r->observers_connected += run->obs[i].connected;
    }
    uint64_t last_ok = atomic_load(&last->ok), swallowed = 0;
    char why[200] = "";
    bool passed = true;
    for (ctx_gen *g = last->prev; g; g = g->prev) {
        uint64_t sw = 0;
        char w[200];
        bool ok = g->watched ? hm_watch_verdict_lost(&g->watch, atomic_load(&g->ok),
                                                     atomic_load(&g->unanswered), &sw, w, sizeof(w))
                             : (sw = atomic_load(&g->ok), true);
        swallowed += sw;
        if (!ok && passed) snprintf(why, sizeof(why), "%s", w);
        passed = passed && ok;
    }
    if (atomic_load(&last->dead)) {
        uint64_t sw = 0;
        char w[200];
        bool ok = hm_watch_verdict_lost(&ob->watch, last_ok, atomic_load(&last->unanswered), &sw, w,
                                        sizeof(w));
        swallowed += sw;
        if (!ok && passed) snprintf(why, sizeof(why), "%s", w);
        passed = passed && ok;
    } else {
        char w[200];
        bool ok = hm_watch_verdict(&ob->watch, last_ok, w, sizeof(w));
        if (!ok && passed) snprintf(why, sizeof(why), "%s", w);
        passed = passed && ok;
    }
    /* Lost contexts are judged leniently, but a stream that never showed
     * the page's state on any of them checked nothing. */
    bool seen = ob->watch.have_baseline;
    for (ctx_gen *g = last->prev; g && !seen; g = g->prev)
        seen = g->watched && g->watch.have_baseline;
    char w[200];
    if (!seen && !hm_watch_verdict(&ob->watch, 0, w, sizeof(w))) {
        if (passed) snprintf(why, sizeof(why), "%s", w);
        passed = false;
    }
    if (atomic_load(&run->reload_gave_up)) {
        if (passed) snprintf(why, sizeof(why), "%.199s", run->reload_why);
        passed = false;
    }
    r->total.swallowed += swallowed;
    r->check_passed = passed;
    if (last->prev) {
        r->ok_checked_known = true;
        r->ok_checked = last_ok;
        snprintf(r->check_detail, sizeof(r->check_detail),
                 "%s%s%llu OK on the newest context, %llu swallowed by lost ones", why,
                 why[0] ? "; " : "", (unsigned long long)last_ok, (unsigned long long)swallowed);
    } else {
        snprintf(r->check_detail, sizeof(r->check_detail), "%s", why);
    }
    r->matches_ok = counting && r->check_passed;
}

int hm_via_hammer_run(const hm_options *o, hm_results *r)
{
    counter_run run = {.o = o, .r = r};
    int rc = 0;
    run.stats = hm_calloc((size_t)o->threads, sizeof(*run.stats));
    run.send_ns = hm_calloc(SEND_RING, sizeof(int64_t));
    run.obs = hm_calloc((size_t)(o->observers > 0 ? o->observers : 1), sizeof(observer));
    if (!run.stats || !run.send_ns || !run.obs) return -ENOMEM;
    for (int i = 0; i < o->threads; i++)
        if ((rc = hm_thread_stats_init(&run.stats[i])) < 0) return rc;
    hm_cookie_jar_init(&run.jar);

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
    ctx_gen *g0 = gen_new();
    if (g0) {
        g0->page = run.page;
        memset(&run.page, 0, sizeof(run.page));
        atomic_store(&run.cur, g0);
        g0->cookie = hm_via_cookie_dup(&run.jar, &o->target, "/");
    }
    if (!g0 || !g0->cookie) {
        r->fatal = "out of memory";
        rc = -ENOMEM;
        goto out;
    }
    for (int i = 0; i < o->observers; i++)
        run.obs[i] = (observer){.run = &run, .index = i};
    hm_latch_init(&run.go_gate, 1);
    /* one per sender: over HTTP/2, --streams of them share a connection */
    hm_latch_init(&run.senders, o->concurrency * (o->http2 ? o->streams : 1));
    hm_event_init(&run.progress);
    if (o->observers == 0) start_senders(&run, NULL);
    atomic_store(&run.workers_left, o->concurrency * (o->http2 ? o->streams : 1));

    rc = hm_scenario_engine_run(o, run.stats, sizeof(*run.stats), thread_main, &run, &run.live,
                                &run.t_start, &run.t_end);
    hm_run_on_temp_loop(o->backend, teardown_coro, &run);
    if (atomic_load(&run.start_err) && !rc) rc = atomic_load(&run.start_err);

    for (int i = 0; i < o->threads; i++)
        hm_thread_stats_merge(&r->total, &run.stats[i]);
    /* From the first action (docs/output.md): the wait for the stream's
     * baseline is set-up, not load; on a busy machine it is not short. */
    int64_t t_go = atomic_load(&run.t_go);
    r->wall_seconds = (double)(run.t_end - (t_go ? t_go : run.t_start)) / 1e9;
    if (atomic_load(&run.live.dead)) r->fatal = HM_TARGET_DEAD_MSG;
    if (atomic_load(&run.start_err)) {
        snprintf(r->fatal_buf, sizeof(r->fatal_buf), "cannot start a connection's coroutine: %s",
                 hm_strerror(atomic_load(&run.start_err)));
        r->fatal = r->fatal_buf;
    }
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
    for (int i = 0; i < o->observers; i++) {
        hm_via_page_free(&run.obs[i].page);
        hm_watch_free(&run.obs[i].watch);
    }
    for (int i = 0; i < o->threads; i++)
        hm_thread_stats_destroy(&run.stats[i]);
    hm_free(run.stats);
    hm_free(run.send_ns);
    hm_free(run.obs);
    for (ctx_gen *g = atomic_load(&run.cur), *prev; g; g = prev) {
        prev = g->prev;
        gen_free(g);
    }
    json_decref(run.signals);
    hm_via_page_free(&run.page);
    hm_cookie_jar_free(&run.jar);
    return rc;
}
