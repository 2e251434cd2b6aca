/* One php-via user of the hammer load model (via_user.h says what it
 * holds): its contexts, the SSE streams that follow them, the reload with
 * back-off, the caught-up rule and the end-of-run check, written once for
 * the built-in scenarios (via_hammer.c) and for flows (flow_hammer.c).
 *
 * Action -> patch latency: the patch whose value is baseline+k carries the
 * effect of k actions, so it completes the k-th action sent to that
 * context (docs/output.md); without a counter each patch completes the next
 * action. */
#include "load/via_user.h"

#include <stdio.h>
#include <string.h>

/* ---- contexts ------------------------------------------------------------- */

void hm_via_user_note_trouble(hm_via_user *u)
{
    int64_t zero = 0;
    atomic_compare_exchange_strong(&u->trouble_ns, &zero, hm_now_ns());
}

/* A request went well: ends trouble, recording the recovery time when a
 * reload happened since it began. */
static void note_ok(hm_via_user *u, hm_thread_stats *st, int64_t now)
{
    if (!atomic_load_explicit(&u->trouble_ns, memory_order_relaxed)) return;
    int64_t since = atomic_exchange(&u->trouble_ns, 0);
    if (since && atomic_exchange(&u->reloaded, false) && now > since)
        hm_hdr_record(&st->recovery_us, (now - since) / 1000);
}

static void watch_fresh(hm_via_observer *ob);
static const hm_event_source_hooks observer_sse;

static bool over(hm_via_user *u)
{
    return u->cfg.over(u->cfg.user);
}

/* A new context: its gates closed. */
static hm_ctx_gen *gen_new(void)
{
    hm_ctx_gen *g = hm_calloc(1, sizeof(*g));
    if (!g) return NULL;
    hm_latch_init(&g->ready_gate, 1);
    hm_latch_init(&g->dead_gate, 1);
    hm_latch_init(&g->replaced_gate, 1);
    return g;
}

static void gen_free(hm_via_user *u, hm_ctx_gen *g)
{
    hm_via_page_free(&g->page);
    hm_free(g->cookie);
    if (g->data && u->cfg.free_data) u->cfg.free_data(g->data);
    if (g->watched) hm_watch_free(&g->watch);
    hm_free(g);
}

static void gen_set_ready(hm_ctx_gen *g)
{
    atomic_store(&g->ready, true);
    hm_latch_count_down(&g->ready_gate, 1); /* a second count-down does nothing */
}

/* Opens the gates of every context, all of them (the run is over) or only
 * the replaced ones (the reloader ended, so no newer context will come);
 * whoever waits on one re-checks why. */
static void gens_open(hm_via_user *u, bool all)
{
    for (hm_ctx_gen *g = atomic_load(&u->cur); g; g = g->prev) {
        if (all) {
            hm_latch_count_down(&g->ready_gate, 1);
            hm_latch_count_down(&g->dead_gate, 1);
        }
        hm_latch_count_down(&g->replaced_gate, 1);
    }
}

void hm_via_user_open_all(hm_via_user *u)
{
    gens_open(u, true);
}

/* The server lost g: counted once; the reloader takes it from here. */
static void mark_lost(hm_via_user *u, hm_ctx_gen *g, hm_thread_stats *st)
{
    hm_via_user_note_trouble(u);
    if (!atomic_exchange(&g->dead, true)) st->ctx_lost++;
    hm_latch_count_down(&g->dead_gate, 1);
    hm_latch_count_down(&g->ready_gate, 1);
}

int hm_via_user_init(hm_via_user *u, const hm_via_user_cfg *cfg)
{
    memset(u, 0, sizeof(*u));
    u->cfg = *cfg;
    u->send_ns = hm_calloc(HM_VIA_USER_RING, sizeof(int64_t));
    u->obs = hm_calloc((size_t)(cfg->observers > 0 ? cfg->observers : 1), sizeof(*u->obs));
    if (!u->send_ns || !u->obs) return -ENOMEM;
    /* obs[0]'s watch exists without a stream too: the check reads it. */
    for (int i = 0; i < (cfg->observers > 0 ? cfg->observers : 1); i++) {
        u->obs[i].u = u;
        u->obs[i].index = i;
        u->obs[i].task.done = true; /* not spawned yet */
        hm_event_init(&u->obs[i].ev);
        snprintf(u->obs[i].where, sizeof(u->obs[i].where), "SSE GET /_sse, observer %d", i);
        hm_event_source_init(&u->obs[i].es, &cfg->o->target, NULL, &observer_sse, cfg->st, cfg->o);
        watch_fresh(&u->obs[i]); /* whoever waits for its first state reads it from now */
    }
    u->reloader.done = true;
    return 0;
}

void hm_via_user_free(hm_via_user *u)
{
    for (int i = 0; u->obs && i < (u->cfg.observers > 0 ? u->cfg.observers : 1); i++) {
        hm_via_page_free(&u->obs[i].page);
        hm_watch_free(&u->obs[i].es.watch);
    }
    for (hm_ctx_gen *g = atomic_load(&u->cur), *prev; g; g = prev) {
        prev = g->prev;
        gen_free(u, g);
    }
    hm_free(u->obs);
    hm_free(u->send_ns);
    hm_free(u->route);
    memset(u, 0, sizeof(*u));
}

/* A context for page (moved from *page) on the user's route, not yet
 * visible to anyone: its cookie from the jar, its place in the chain. */
static hm_ctx_gen *gen_build(hm_via_user *u, hm_via_page *page)
{
    hm_ctx_gen *g = gen_new();
    if (!g) return NULL;
    g->cookie = hm_via_cookie_dup(u->cfg.jar, &u->cfg.o->target, "/");
    if (!g->cookie) {
        hm_free(g);
        return NULL;
    }
    g->page = *page;
    memset(page, 0, sizeof(*page));
    g->prev = atomic_load(&u->cur);
    g->seq_base = atomic_load(u->cfg.seq);
    g->ready_by = hm_now_ns() + u->cfg.o->timeout_ns;
    if (u->cfg.observers == 0) gen_set_ready(g);
    return g;
}

/* g becomes the newest context: senders and the main observer move to it. */
static void go_live(hm_via_user *u, hm_ctx_gen *g)
{
    atomic_store(&u->cur, g);
    if (g->prev) hm_latch_count_down(&g->prev->replaced_gate, 1); /* after cur moved */
    /* A main stream waiting to retry follows the new context at once. */
    if (u->cfg.observers > 0) hm_event_source_hurry(&u->obs[0].es);
}

hm_ctx_gen *hm_via_user_publish(hm_via_user *u, const char *route, hm_via_page *page, void *data)
{
    char *r = hm_strdup(route);
    hm_via_page keep = *page;
    hm_ctx_gen *g = r ? gen_build(u, page) : NULL;
    if (!g) {
        hm_free(r);
        *page = keep;
        return NULL;
    }
    g->data = data;
    hm_free(u->route);
    u->route = r;
    go_live(u, g);
    return g;
}

/* ---- the senders' side ------------------------------------------------------ */

int hm_via_user_target(hm_via_user *u, hm_ctx_gen **gp, int64_t t_go, hm_latch **gate,
                       int64_t *until)
{
    const hm_options *o = u->cfg.o;
    if (over(u)) return -1;
    hm_ctx_gen *g = *gp, *cur = atomic_load(&u->cur);
    if (!cur) return -1;
    if (cur != g) {
        /* Move to the newest once its baseline is known, or --timeout passed. */
        if (g && !atomic_load(&cur->ready) && !atomic_load(&cur->dead) &&
            hm_now_ns() < cur->ready_by) {
            *gate = &cur->ready_gate;
            *until = cur->ready_by;
            return 0;
        }
        *gp = g = cur;
    }
    if (atomic_load(&g->dead) && !o->no_reload && !atomic_load(&u->reload_gave_up) &&
        !atomic_load(&u->holdoff_until) && !atomic_load(&u->reloader_gone)) {
        /* The reloader is getting a new context: wait for it (-d runs on;
         * a budget of -n is spent only on requests). */
        if (atomic_load(&u->cfg.live->dead) ||
            (o->duration_ns && hm_now_ns() - t_go >= o->duration_ns))
            return -1;
        *gate = &g->replaced_gate;
        *until = o->duration_ns ? t_go + o->duration_ns : 0;
        return 0;
    }
    return 1;
}

void hm_via_user_stamp(hm_via_user *u, int64_t k, int64_t ns)
{
    __atomic_store_n(&u->send_ns[k & (HM_VIA_USER_RING - 1)], ns, __ATOMIC_RELAXED);
}

void hm_via_user_account(hm_via_user *u, hm_ctx_gen *g, hm_thread_stats *st, const hm_http_conn *c,
                         int status)
{
    if (status >= 200 && status < 300) {
        atomic_fetch_add(&g->ok, 1);
        if (!atomic_load_explicit(&g->had_ok, memory_order_relaxed)) atomic_store(&g->had_ok, true);
        note_ok(u, st, hm_now_ns());
    } else {
        hm_via_user_note_trouble(u);
        if (status == 400 && hm_via_invalid_context(c)) mark_lost(u, g, st);
        /* Sent, but no answer: the server may have applied it. */
        if (status == 0 && c->fail != HM_FAIL_CONNECT) atomic_fetch_add(&g->unanswered, 1);
    }
}

/* ---- observers ---------------------------------------------------------------- */

static void on_patch(hm_watch *w, int64_t value, void *user)
{
    hm_via_observer *ob = user;
    hm_via_user *u = ob->u;
    if (ob->index != 0) return;
    int64_t now = hm_now_ns();
    bool counting = w->w->check == HM_CHECK_NET_INCREMENT || w->w->check == HM_CHECK_SPREADSHEET;
    int64_t base = ob->gen ? ob->gen->seq_base : 0;
    int64_t upto = counting ? base + value - w->baseline : ob->matched + 1;
    int64_t claimed = atomic_load(u->cfg.seq);
    if (upto > claimed) upto = claimed;
    for (; ob->matched < upto; ob->matched++) {
        int64_t sent =
            __atomic_load_n(&u->send_ns[ob->matched & (HM_VIA_USER_RING - 1)], __ATOMIC_RELAXED);
        if (sent > 0 && now >= sent)
            hm_thread_stats_record(u->cfg.st, HM_PHASE_PATCH, (now - sent) / 1000);
    }
    hm_event_notify(u->cfg.progress); /* the finisher may be waiting for this one */
}

static void release(hm_via_user *u, json_t *signals)
{
    if (u->cfg.on_baseline) u->cfg.on_baseline(u->cfg.user, signals);
}

static void watch_fresh(hm_via_observer *ob)
{
    hm_via_user *u = ob->u;
    hm_watch_init(&ob->es.watch, u->cfg.workload, u->cfg.signal);
    ob->es.watch.on_patch = on_patch;
    ob->es.watch.user = ob;
    ob->es.watch.actions_sent = u->cfg.seq;
    ob->es.watch.value_only = u->cfg.values_only;
}

/* The main observer moves to the newest context: its view of the old one
 * stays with it, for the verdict at the end. */
static void follow(hm_via_observer *ob, hm_ctx_gen *to)
{
    if (ob->gen) {
        ob->patches_done += ob->es.watch.patches;
        ob->extra_done += ob->es.watch.extra;
        ob->gen->watch = ob->es.watch;
        ob->gen->watched = true;
        watch_fresh(ob);
    }
    ob->gen = to;
    ob->matched = to->seq_base;
}

int hm_via_reload_page(hm_http_conn *c, hm_cookie_jar *jar, const char *path, const char *action,
                       const hm_options *o, hm_thread_stats *st, hm_liveness *live,
                       bool (*go_on)(void *arg), void *arg, hm_via_page *page, char *why,
                       size_t whylen)
{
    hm_backoff backoff = HM_BACKOFF_RELOAD;
    int64_t first_fail = 0;
    if (whylen) why[0] = '\0';
    for (;;) {
        if (atomic_load(&hm_stop_requested) || atomic_load(&live->dead) || !go_on(arg))
            return -ECANCELED;
        int64_t t0 = hm_now_ns();
        int rc = hm_via_load_page(c, jar, path, action, t0 + o->timeout_ns, page, why, whylen);
        hm_thread_stats_note_conn(st, c);
        if (rc == 0) {
            hm_thread_stats_record(st, HM_PHASE_PAGE, (hm_now_ns() - t0) / 1000);
            return 0;
        }
        if (rc == -ECANCELED) return -ECANCELED;
        hm_thread_stats_reload_failed(st);
        int64_t now = hm_now_ns();
        if (hm_liveness_report(live, now, false, hm_liveness_kind(c), o->timeout_ns))
            return -ECANCELED;
        if (!first_fail) first_fail = now;
        /* Connect failures are the liveness watch's; a server that answers
         * but serves no page gets --timeout. */
        if (c->fail != HM_FAIL_CONNECT && now - first_fail > o->timeout_ns) return -ETIMEDOUT;
        if (hm_coro_sleep(hm_backoff_next(&backoff)) == -ECANCELED) return -ECANCELED;
    }
}

static bool user_goes_on(void *arg)
{
    return !over(arg);
}

/* Loads the user's route into *page; false when the run ended (or the
 * reload gave up: the check then fails with why) first. */
static bool load_again(hm_via_user *u, hm_http_conn *c, const char *action, hm_via_page *page)
{
    char why[256];
    int rc = hm_via_reload_page(c, u->cfg.jar, u->route, action, u->cfg.o, u->cfg.st, u->cfg.live,
                                user_goes_on, u, page, why, sizeof(why));
    if (rc == -ETIMEDOUT && !atomic_load(&u->reload_gave_up)) {
        snprintf(u->reload_why, sizeof(u->reload_why),
                 "the context was lost and no reload succeeded within --timeout: %.120s", why);
        atomic_store(&u->reload_gave_up, true);
    }
    return rc == 0;
}

#define OBSERVER_OF(src) HM_CONTAINER_OF((src), hm_via_observer, es)

/* ---- the observers' EventSource hooks ---------------------------------------- */

/* The next stream's request: the main observer's on the newest context
 * (it follows a reload there), an extra one's on its own page. */
static char *observer_request(hm_event_source *es, size_t *len)
{
    hm_via_observer *ob = OBSERVER_OF(es);
    hm_via_user *u = ob->u;
    hm_ctx_gen *cur = atomic_load(&u->cur);
    if (ob->index == 0 && cur != ob->gen) follow(ob, cur);
    const char *ctx = ob->index == 0 ? cur->page.ctx : ob->page.ctx;
    char *req = hm_via_sse_request(&u->cfg.o->target, ctx, cur->cookie, len);
    if (!req)
        hm_thread_stats_sse_fail(u->cfg.st, HM_SSE_FAIL_OTHER, "cannot build the SSE request",
                                 ob->where, "");
    return req;
}

static void observer_opened(hm_event_source *es)
{
    OBSERVER_OF(es)->connected = true;
}

static void observer_fed(hm_event_source *es, uint64_t events_before)
{
    (void)events_before;
    hm_via_observer *ob = OBSERVER_OF(es);
    if (ob->index == 0 && hm_watch_first_state(&es->watch)) {
        release(ob->u, es->watch.signals);
        if (ob->gen) gen_set_ready(ob->gen); /* a reloaded context's baseline */
    }
    hm_event_notify(&ob->ev); /* hm_watch_wait_first_state waits on it */
}

/* A stream that failed under a live page is followed by the next one
 * (after the back-off, or at once when a reload publishes a new context:
 * go_live); any other end wakes the observer's coroutine. */
static bool observer_ended(hm_event_source *es, hm_sse_end end)
{
    hm_via_observer *ob = OBSERVER_OF(es);
    ob->end = end;
    if (end == HM_SSE_END_RETRY) {
        if (ob->index == 0) hm_via_user_note_trouble(ob->u);
        if (!over(ob->u)) return true;
    }
    hm_event_notify(&ob->ev);
    return false;
}

static const char *observer_where(const hm_event_source *es, char *buf, size_t size)
{
    snprintf(buf, size, "%s", OBSERVER_OF(es)->where);
    return buf;
}

static const hm_event_source_hooks observer_sse = {
    .request = observer_request,
    .opened = observer_opened,
    .fed = observer_fed,
    .ended = observer_ended,
    .where = observer_where,
};

/* An observer follows its stream with its EventSource until the run cuts
 * it; when the context is lost, the main one waits for the reloader's
 * new context and an extra one reloads its own page, then each opens the
 * source again. */
static void observer_coro(void *p)
{
    hm_via_observer *ob = p;
    hm_via_user *u = ob->u;
    const hm_options *o = u->cfg.o;
    hm_thread_stats *st = u->cfg.st;
    if (ob->index > 0) {
        /* Extra observers are other tabs of the same session: own context. */
        char why[256];
        int rc = hm_via_load_page(&ob->es.conn, u->cfg.jar, u->route, NULL,
                                  hm_now_ns() + o->timeout_ns, &ob->page, why, sizeof(why));
        if (rc < 0) {
            if (rc != -ECANCELED)
                hm_thread_stats_sse_fail(st, HM_SSE_FAIL_OTHER, why, ob->where, "");
            goto out;
        }
    }
    for (;;) {
        ob->end = HM_SSE_END_CUT;
        hm_event_source_open(&ob->es);
        /* The finisher ends the stream (a cancel); the rest is the hooks'.
         * A stream is I/O that Ctrl-C's STOP lets finish; the back-off
         * before the next one is a sleep, which STOP ends. */
        while (hm_event_source_running(&ob->es)) {
            int rc = hm_http_conn_busy(&ob->es.conn) ? hm_event_wait_io(&ob->ev, 0)
                                                     : hm_event_wait(&ob->ev, 0);
            if (rc == -ECANCELED) goto out;
        }
        if (ob->end != HM_SSE_END_LOST) break;
        if (ob->index == 0) {
            hm_ctx_gen *cur = ob->gen;
            mark_lost(u, cur, st);
            if (o->no_reload) break;
            /* The reloader publishes the next context (once it is gone,
             * nothing will: wait for the run's end). */
            while (atomic_load(&u->cur) == cur && !over(u)) {
                hm_latch *gate =
                    atomic_load(&u->reloader_gone) ? u->cfg.run_end : &cur->replaced_gate;
                if (hm_latch_wait(gate, 0) == -ECANCELED) goto out;
            }
            if (over(u)) break;
        } else {
            st->ctx_lost++;
            if (o->no_reload) break;
            hm_via_page_free(&ob->page);
            if (!load_again(u, &ob->es.conn, NULL, &ob->page)) break;
            st->reloads++;
            hm_gauge_reload(o);
            ob->patches_done += ob->es.watch.patches;
            hm_sse_note_events(st, &ob->es.watch, ob->where);
            hm_watch_free(&ob->es.watch);
            watch_fresh(ob);
        }
    }
out:
    hm_event_source_close(&ob->es); /* noted as cut when the run ended it */
    hm_sse_note_events(st, &ob->es.watch, ob->where);
    if (ob->index == 0) release(u, ob->es.watch.signals); /* never block the senders */
    hm_event_source_free(&ob->es);
    hm_event_notify(&ob->ev);
    hm_event_notify(u->cfg.progress);
}

/* ---- the reloader -------------------------------------------------------------- */

/* Thread 0: when the newest context is dead, loads the page again (same
 * cookies, a new context) and publishes it; senders switch over. */
static void reloader_coro(void *p)
{
    hm_via_user *u = p;
    const hm_options *o = u->cfg.o;
    hm_thread_stats *st = u->cfg.st;
    hm_http_conn c;
    hm_http_conn_init(&c, &o->target, NULL);
    int fruitless = 0; /* reloads in a row whose context was lost before any OK */
    hm_backoff holdoff = HM_BACKOFF_RELOAD;
    while (!over(u) && !o->no_reload) {
        hm_ctx_gen *g = atomic_load(&u->cur);
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
            atomic_store(&u->holdoff_until, hm_now_ns() + wait);
            int rc = hm_coro_sleep(wait);
            atomic_store(&u->holdoff_until, 0);
            if (rc == -ECANCELED || over(u)) break;
        }
        hm_via_page page = {0};
        if (!load_again(u, &c, u->cfg.action, &page)) break;
        char why[200] = "out of memory";
        hm_ctx_gen *n = gen_build(u, &page);
        if (!n || !u->cfg.make(u->cfg.user, n, c.resp.body, c.resp.body_len, why, sizeof(why))) {
            hm_via_page_free(&page);
            if (n) gen_free(u, n);
            if (!atomic_load(&u->reload_gave_up)) {
                /* The page came but cannot serve the run: senders go on at
                 * the dead context, and the check fails with why. */
                snprintf(u->reload_why, sizeof(u->reload_why),
                         "the context was lost and the reloaded page cannot serve the run: %.150s",
                         why);
                atomic_store(&u->reload_gave_up, true);
            }
            break;
        }
        st->reloads++;
        hm_gauge_reload(o);
        atomic_store(&u->reloaded, true);
        go_live(u, n);
    }
    /* No newer context will come: whoever waits for one goes on. */
    atomic_store(&u->reloader_gone, true);
    gens_open(u, false);
    hm_thread_stats_add_conn(st, &c);
    hm_http_conn_free(&c);
}

/* ---- the run's end --------------------------------------------------------------- */

int hm_via_user_spawn(hm_via_user *u, hm_loop *loop)
{
    int rc = 0;
    for (int i = 0; i < u->cfg.observers && rc == 0; i++)
        rc = hm_task_spawn(&u->obs[i].task, loop, observer_coro, &u->obs[i]);
    if (rc == 0) rc = hm_task_spawn(&u->reloader, loop, reloader_coro, u);
    return rc;
}

void hm_via_user_finish(hm_via_user *u, int64_t until)
{
    if (u->cfg.observers > 0) {
        hm_via_observer *ob = &u->obs[0];
        while (!ob->task.done && hm_now_ns() < until && !atomic_load(&u->cfg.live->dead) &&
               hm_interrupt_current() < HM_INTERRUPT_ABORT) {
            hm_ctx_gen *g = atomic_load(&u->cur);
            if (ob->gen == g &&
                hm_watch_caught_up(&ob->es.watch, (int64_t)atomic_load(&g->ok), hm_now_ns()))
                break;
            /* without a counter, "caught up" is a quiet spell after the
             * last patch; a reload the observer has not followed yet is
             * looked at again soon */
            int64_t wake = until;
            int64_t quiet_end = ob->es.watch.last_patch_ns + HM_WATCH_QUIET_NS + 1000000LL;
            if (ob->es.watch.patches && quiet_end < wake) wake = quiet_end;
            if (ob->gen != g && hm_now_ns() + 10 * 1000000LL < wake)
                wake = hm_now_ns() + 10 * 1000000LL;
            hm_event_wait(u->cfg.progress, wake);
        }
    }
    hm_via_user_cancel(u);
}

void hm_via_user_cancel(hm_via_user *u)
{
    /* A cancel sticks even when the coroutine is runnable right now. */
    for (int i = 0; i < u->cfg.observers; i++) {
        hm_task_cancel(&u->obs[i].task);
        hm_task_join(&u->obs[i].task, 0);
    }
    hm_task_cancel(&u->reloader);
    hm_task_join(&u->reloader, 0);
}

/* The check over every context the main observer watched: the newest
 * exactly (its net increment equals its OK actions), each lost one
 * leniently (never more than its OK; the rest were swallowed). */
void hm_via_user_judge(hm_via_user *u, hm_via_user_verdict *v)
{
    memset(v, 0, sizeof(*v));
    hm_ctx_gen *last = atomic_load(&u->cur);
    v->passed = true;
    if (!last) {
        v->passed = false;
        snprintf(v->why, sizeof(v->why), "no context");
        return;
    }
    hm_via_observer *ob = &u->obs[0];
    if (u->cfg.observers > 0) {
        if (ob->gen && ob->gen != last) follow(ob, last); /* it never reached the newest */
        v->baseline_known = ob->es.watch.have_baseline;
        v->baseline = ob->es.watch.baseline;
        v->last = ob->es.watch.last;
        v->patches = ob->patches_done;
        for (int i = 0; i < u->cfg.observers; i++) {
            v->patches += u->obs[i].es.watch.patches;
            v->opening += u->obs[i].es.watch.opening;
            v->extra += u->obs[i].es.watch.extra + u->obs[i].extra_done;
            if (i > 0) v->patches += u->obs[i].patches_done;
            v->connected += u->obs[i].connected;
        }
    }
    v->last_ok = atomic_load(&last->ok);
    v->reloaded = last->prev != NULL;
    char w[200];
    for (hm_ctx_gen *g = last->prev; g; g = g->prev) {
        uint64_t sw = 0;
        bool ok = g->watched ? hm_watch_verdict_lost(&g->watch, atomic_load(&g->ok),
                                                     atomic_load(&g->unanswered), &sw, w, sizeof(w))
                             : (sw = atomic_load(&g->ok), true);
        v->swallowed += sw;
        if (!ok && v->passed) snprintf(v->why, sizeof(v->why), "%s", w);
        v->passed = v->passed && ok;
    }
    /* Without a stream, the check holds only when it checks nothing. */
    bool ok;
    if (atomic_load(&last->dead)) {
        uint64_t sw = 0;
        ok = hm_watch_verdict_lost(&ob->es.watch, v->last_ok, atomic_load(&last->unanswered), &sw,
                                   w, sizeof(w));
        v->swallowed += sw;
    } else {
        ok = hm_watch_verdict(&ob->es.watch, v->last_ok, w, sizeof(w));
    }
    if (!ok && v->passed) snprintf(v->why, sizeof(v->why), "%s", w);
    v->passed = v->passed && ok;
    /* Lost contexts are judged leniently, but a stream that never showed
     * the page's state on any of them checked nothing. */
    v->seen = ob->es.watch.have_baseline;
    for (hm_ctx_gen *g = last->prev; g && !v->seen; g = g->prev)
        v->seen = g->watched && g->watch.have_baseline;
    if (!v->seen && !hm_watch_verdict(&ob->es.watch, 0, w, sizeof(w))) {
        if (v->passed) snprintf(v->why, sizeof(v->why), "%s", w);
        v->passed = false;
    }
    if (atomic_load(&u->reload_gave_up)) {
        if (v->passed) snprintf(v->why, sizeof(v->why), "%.199s", u->reload_why);
        v->passed = false;
    }
}

void hm_via_user_detail(const hm_via_user_verdict *v, char *buf, size_t len)
{
    if (v->reloaded)
        snprintf(buf, len, "%s%s%llu OK on the newest context, %llu swallowed by lost ones", v->why,
                 v->why[0] ? "; " : "", (unsigned long long)v->last_ok,
                 (unsigned long long)v->swallowed);
    else
        snprintf(buf, len, "%s", v->why);
}
