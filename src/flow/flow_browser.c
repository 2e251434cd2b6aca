/* A flow in the browser model: -c virtual users (via_browser.c), each
 * running flow instances back to back until the run's budget is spent.
 * An instance is a new user: it picks a flow by weight, starts with no
 * cookies, runs the steps the way a Datastar tab would (actions carry the
 * last-seen signals plus the step's own, waits follow the SSE stream), and
 * closes its session at the end. Each page's context is checked against
 * the file's `check:` as the built-in scenarios check theirs. */
#include "flow/flow.h"
#include "load/via_browser.h"

#include "proto/via_html.h"

#include <stdio.h>
#include <string.h>

typedef struct flow_browser {
    const hm_flow_file *f;
    hm_steps **stats; /* one per engine thread */
    _Atomic uint64_t instances;
} flow_browser;

/* One VU's flow state, on its coroutine's stack. */
typedef struct bvu {
    hm_flow_exec x;
    hammer_vu *v;
    flow_browser *fb;
    const hm_options *o;
    int64_t action_ns;   /* when the last action on this page was sent, 0 none */
    int64_t since_ns;    /* when matching waits started (action, or stream open) */
    int64_t *matched_ns; /* per wait of the file: its first match since then, 0 none */
    /* Since since_ns, for a wait's failure message: the patches seen, and
     * per wait of the file those that carried its signal (or elements). */
    uint32_t patches, *carried;
    bool patch_timed; /* the last action's action -> patch latency is recorded */
} bvu;

static int64_t timeout_of(const bvu *b, const hm_flow_step *s)
{
    return s->timeout_ns ? s->timeout_ns : b->o->timeout_ns;
}

static void record(bvu *b, const hm_flow_step *s, int64_t t0, const char *why)
{
    char full[320];
    if (why) snprintf(full, sizeof(full), "%s, line %d: %s", s->where, s->line, why);
    hm_steps_record(b->x.stats, s->row, (hm_now_ns() - t0) / 1000, why ? full : NULL);
}

static void status_why(int status, char *why, size_t len)
{
    if (status < 0)
        snprintf(why, len, "%s", hm_strerror(status));
    else
        snprintf(why, len, "HTTP %d", status);
}

/* Forgets what waits matched: only events after now count. */
static void rearm(bvu *b)
{
    size_t n = (size_t)(b->fb->f->n_waits ? b->fb->f->n_waits : 1);
    memset(b->matched_ns, 0, sizeof(int64_t) * n);
    memset(b->carried, 0, sizeof(uint32_t) * n);
    b->patches = 0;
    b->since_ns = hm_now_ns();
}

/* Does this event carry what wait w looks at (its signal, or elements)? */
static bool event_carries(const hm_flow_step *w, const hm_datastar_event *ev)
{
    if (w->cond.elements) return ev->kind == HM_DATASTAR_PATCH_ELEMENTS;
    if (w->cond.signal)
        return ev->kind == HM_DATASTAR_PATCH_SIGNALS &&
               hm_flow_signal_key(ev->signals, w->cond.signal);
    return false;
}

/* Does this event satisfy wait w? */
static bool event_matches(bvu *b, const hm_flow_step *w, const hm_watch *watch)
{
    const hm_datastar_event *ev = watch->ev;
    const hm_flow_cond *c = &w->cond;
    if (c->elements) {
        if (ev->kind != HM_DATASTAR_PATCH_ELEMENTS) return false;
        return !c->elements[0] || (ev->elements && memmem(ev->elements, ev->elements_len,
                                                          c->elements, strlen(c->elements)));
    }
    if (c->signal) {
        if (ev->kind != HM_DATASTAR_PATCH_SIGNALS || !hm_flow_signal_key(ev->signals, c->signal))
            return false;
        char why[8];
        return hm_flow_cond_holds(&b->x, c, watch->signals, 0, why, sizeof(why));
    }
    return ev->kind == HM_DATASTAR_PATCH_SIGNALS || ev->kind == HM_DATASTAR_PATCH_ELEMENTS;
}

static void on_event(hm_watch *w, void *user)
{
    bvu *b = user;
    const hm_flow_file *f = b->fb->f;
    int64_t now = hm_now_ns();
    bool any = false;
    if (w->ev->kind == HM_DATASTAR_PATCH_SIGNALS || w->ev->kind == HM_DATASTAR_PATCH_ELEMENTS)
        b->patches++;
    for (int i = 0; i < f->n_waits; i++) {
        if (event_carries(f->waits[i], w->ev)) b->carried[i]++;
        if (!b->matched_ns[i] && event_matches(b, f->waits[i], w)) {
            b->matched_ns[i] = now;
            any = true;
        }
    }
    if (any) hm_vu_wake(b->v);
}

/* The page's actions that the flow fires before its next page: each must be
 * on the page, or the flow does not fit the app. */
static bool page_offers(bvu *b, const hm_flow_step *s)
{
    size_t len;
    const char *html = hm_vu_page_html(b->v, &len);
    for (int i = 0; i < s->n_offers; i++) {
        char *url = NULL;
        const hm_flow_step *a = s->offers[i];
        if (html && hm_via_find_action(html, len, a->action, &url) == 0) {
            hm_free(url);
            continue;
        }
        char offered[200], why[600];
        int n = html ? hm_via_list_actions(html, len, offered, sizeof(offered)) : 0;
        snprintf(why, sizeof(why),
                 "%s:%d:%d: %s: the page %s does not offer action '%s' (it offers: %s)",
                 b->fb->f->path, a->line, a->col, a->where, s->path, a->action,
                 n ? offered : "no actions");
        hm_vu_abort_run(b->v, why);
        return false;
    }
    return true;
}

/* Not inlined into leaf: each step's buffers (why[600] here) then sit on
 * the stack only while that step runs, and a VU's coroutine stays within
 * one page. */
static __attribute__((noinline)) int run_page(bvu *b, const hm_flow_step *s)
{
    char *path = hm_flow_expand(&b->x, s->path);
    if (!path) return HM_FLOW_STOP;
    hm_vu_leave_page(b->v);
    b->action_ns = 0;
    int64_t t0 = hm_now_ns();
    int status = hm_vu_open_page(b->v, path); /* reloaded as the built-in tab's */
    b->x.last_status = status;
    char why[600];
    if (status != 200) {
        status_why(status, why, sizeof(why));
        record(b, s, t0, why);
        hm_free(path);
        /* A tab whose page never loaded cannot go on (as the built-in tab). */
        return HM_FLOW_STOP;
    }
    record(b, s, t0, NULL);
    if (!hammer_vu_ctx(b->v)) {
        snprintf(why, sizeof(why),
                 "%s:%d:%d: %s: %s is not a php-via page: it has no <meta data-signals> with "
                 "via_ctx (a get: step fetches other paths)",
                 b->fb->f->path, s->line, s->col, s->where, path);
        hm_vu_abort_run(b->v, why);
        hm_free(path);
        return HM_FLOW_STOP;
    }
    hm_free(path);
    return page_offers(b, s) ? HM_FLOW_NEXT : HM_FLOW_STOP;
}

/* After a step failed: when the server lost the page's context, reload
 * the page as php-via's script makes a browser do (--no-reload: go on). */
static int recover(bvu *b)
{
    if (hm_vu_context_lost(b->v) && !b->o->no_reload && hm_vu_reload(b->v) < 0) return HM_FLOW_STOP;
    return HM_FLOW_NEXT;
}

/* The click's fields and the signals as sent, made on the loop's stack:
 * jansson's copy and dump go deeper than a VU's stack needs to (one page). */
typedef struct click_job {
    bvu *b;
    const hm_flow_step *s;
    json_t *signals;
    char *fields;
    char why[256];
} click_job;

static void make_click(void *arg)
{
    click_job *j = arg;
    json_t *sent = NULL;
    j->fields = hm_flow_action_fields(&j->b->x, j->s, j->signals, &sent, j->why, sizeof(j->why));
    if (!j->fields) return;
    /* changed_by compares with what this click sent, a value the step set
     * included (the server builds on that, not on the last-seen value). */
    json_decref(j->b->x.at_send);
    j->b->x.at_send = sent;
}

static __attribute__((noinline)) int run_action(bvu *b, const hm_flow_step *s)
{
    json_t *signals = hm_vu_signals(b->v);
    b->x.signals = signals;
    /* The click takes its place in -n even when its values cannot be made
     * (a signal not seen yet): a loop of such clicks still ends. */
    if (!hammer_vu_next(b->v)) return HM_FLOW_STOP;
    click_job j = {.b = b, .s = s, .signals = signals};
    hm_call_on_loop_stack(make_click, &j);
    char *fields = j.fields;
    if (!fields) {
        record(b, s, hm_now_ns(), j.why);
        return HM_FLOW_NEXT;
    }
    rearm(b);
    int64_t t0 = b->action_ns = hm_now_ns();
    b->patch_timed = false;
    int status = hammer_vu_action(b->v, s->action, fields);
    hm_free(fields);
    b->x.last_status = status;
    char *why = j.why; /* free again */
    if (status == -HM_ENOTFOUND) {
        /* The page changed under the tab (or it had no context): nothing was sent. */
        snprintf(why, sizeof(j.why), "%s:%d:%d: %s: the page has no action '%s'", b->fb->f->path,
                 s->line, s->col, s->where, s->action);
        hm_vu_abort_run(b->v, why);
        return HM_FLOW_STOP;
    }
    bool ok = status >= 200 && status < 300;
    if (!ok) status_why(status, why, sizeof(j.why));
    record(b, s, t0, ok ? NULL : why);
    /* The context is gone: reload the page and go on with the flow. */
    return recover(b);
}

/* Why a wait timed out, with what it saw: the patches since the action
 * (or the stream's opening), how many carried what it looks for, and for
 * a signal the expected value beside the last seen (and, for changed_by,
 * the value the action sent). Made on the loop's stack (jansson's dumps
 * and printf go deeper than a VU's one page). */
typedef struct wait_job {
    bvu *b;
    const hm_flow_step *s;
    double secs;
    char why[300];
} wait_job;

static void wait_why(void *arg)
{
    wait_job *j = arg;
    bvu *b = j->b;
    const hm_flow_cond *c = &j->s->cond;
    uint32_t carried = b->carried[j->s->wait];
    char *why = j->why;
    size_t len = sizeof(j->why);
    int n = snprintf(why, len, "no matching patch within %.3f s (%u patch%s since %s", j->secs,
                     b->patches, b->patches == 1 ? "" : "es",
                     b->action_ns ? "the action" : "the stream opened");
    if (n < 0 || (size_t)n >= len) return;
    if (c->elements) {
        snprintf(why + n, len - (size_t)n, ", %u with elements): none held \"%.40s\"", carried,
                 c->elements);
    } else if (c->signal) {
        char seen[200] = "";
        bool holds = hm_flow_cond_holds(&b->x, c, hm_vu_signals(b->v), 0, seen, sizeof(seen));
        snprintf(why + n, len - (size_t)n, ", %u carrying %s): %s", carried, c->signal,
                 holds ? "the last-seen value matches, but no patch after it did" : seen);
    } else {
        snprintf(why + n, len - (size_t)n, ")");
    }
}

static __attribute__((noinline)) int run_wait(bvu *b, const hm_flow_step *s)
{
    int64_t t0 = hm_now_ns(), deadline = t0 + timeout_of(b, s);
    int64_t *m = &b->matched_ns[s->wait];
    while (!*m) {
        if (hm_vu_context_lost(b->v)) {
            record(b, s, t0,
                   "the server lost the page's context (reload script, 400 or empty "
                   "200): no patch can come");
            return recover(b);
        }
        int rc = hm_vu_wait(b->v, deadline);
        if (rc == -ECANCELED) return HM_FLOW_STOP;
        if (rc == -ETIMEDOUT && !*m) {
            wait_job j = {.b = b, .s = s, .secs = (double)(deadline - t0) / 1e9};
            hm_call_on_loop_stack(wait_why, &j);
            record(b, s, t0, j.why);
            return HM_FLOW_NEXT;
        }
    }
    /* From the click (or the start of the wait) to the patch. */
    int64_t from = b->action_ns ? b->action_ns : b->since_ns;
    int64_t us = (*m - from) / 1000;
    hm_steps_record(b->x.stats, s->row, us, NULL);
    if (b->action_ns && !b->patch_timed) {
        hm_vu_record_patch(b->v, us);
        b->patch_timed = true;
    }
    /* The next run of this wait needs an event after this one. */
    *m = 0;
    return HM_FLOW_NEXT;
}

static int leaf(hm_flow_exec *x, const hm_flow_step *s)
{
    bvu *b = x->self;
    hammer_vu *v = b->v;
    int64_t t0 = hm_now_ns();
    int status;
    char why[256];
    x->signals = hm_vu_signals(v);
    switch (s->kind) {
    case HM_FLOW_PAGE:
        return run_page(b, s);
    case HM_FLOW_SSE: {
        rearm(b);
        int rc = hammer_vu_open_sse(v, (int)(timeout_of(b, s) / 1000000));
        if (rc < 0)
            snprintf(why, sizeof(why), "the stream showed nothing within %.3f s",
                     (double)timeout_of(b, s) / 1e9);
        record(b, s, t0, rc < 0 ? why : NULL);
        return HM_FLOW_NEXT;
    }
    case HM_FLOW_ACTION:
        return run_action(b, s);
    case HM_FLOW_WAIT:
        return run_wait(b, s);
    case HM_FLOW_EXPECT:
        hm_flow_expect(x, s);
        return HM_FLOW_NEXT;
    case HM_FLOW_THINK: {
        int64_t ns = hm_flow_think_ns(x, s);
        if (ns > 0 && hammer_vu_sleep_ms(v, (int)(ns / 1000000)) < 0) return HM_FLOW_STOP;
        return HM_FLOW_NEXT;
    }
    case HM_FLOW_GET: {
        char *path = hm_flow_expand(x, s->path);
        status = path ? hammer_vu_get(v, path) : -ENOMEM;
        hm_free(path);
        x->last_status = status;
        bool ok = status > 0 && status < 400;
        if (!ok) status_why(status, why, sizeof(why));
        record(b, s, t0, ok ? NULL : why);
        return HM_FLOW_NEXT;
    }
    case HM_FLOW_CLOSE:
        hm_vu_leave_page(v);
        b->action_ns = 0;
        record(b, s, t0, NULL);
        return HM_FLOW_NEXT;
    case HM_FLOW_SET:
        return hm_flow_set(x, s);
    case HM_FLOW_REPEAT:
        break;
    }
    return HM_FLOW_NEXT;
}

static bool budget_left(hm_flow_exec *x)
{
    bvu *b = x->self;
    return hm_vu_budget_left(b->v);
}

static int flow_vu_body(hammer_vu *v, void *state)
{
    flow_browser *fb = state;
    const hm_flow_file *f = fb->f;
    bvu b = {.v = v, .fb = fb, .o = hm_vu_options(v)};
    b.matched_ns = hm_calloc((size_t)(f->n_waits ? f->n_waits : 1), sizeof(int64_t));
    b.carried = hm_calloc((size_t)(f->n_waits ? f->n_waits : 1), sizeof(uint32_t));
    if (!b.matched_ns || !b.carried) {
        hm_free(b.matched_ns);
        hm_free(b.carried);
        return -ENOMEM;
    }
    b.x.rng = (unsigned)(hammer_vu_id(v) + 1) * 2654435761u;
    b.x.stats = fb->stats[hm_vu_thread(v)];
    b.x.leaf = leaf;
    b.x.budget_left = budget_left;
    b.x.self = &b;
    hm_vu_on_event(v, on_event, &b);
    for (int64_t it = 0; hm_vu_budget_left(v); it++) {
        if (it) hm_vu_new_user(v);
        const hm_flow *fl = hm_flow_pick(f, &b.x.rng);
        if (hm_flow_exec_start(&b.x, f, fl, hammer_vu_id(v), it) < 0) break;
        atomic_fetch_add(&fb->instances, 1);
        b.action_ns = 0;
        int rc = hm_flow_walk(&b.x, fl->steps, fl->n_steps);
        hm_vu_leave_page(v);
        if (rc == HM_FLOW_STOP) break;
    }
    hm_vu_on_event(v, NULL, NULL);
    hm_flow_exec_end(&b.x);
    hm_free(b.matched_ns);
    hm_free(b.carried);
    return 0;
}

static bool flow_check(void *state, char *why, size_t whylen)
{
    (void)state;
    (void)why;
    (void)whylen;
    return true; /* expectations and steps fail the run through their own rows */
}

int hm_flow_browser_run(const hm_options *o, const hm_flow_file *f, hm_results *r)
{
    flow_browser fb = {.f = f};
    int rc = 0;
    fb.stats = hm_calloc((size_t)o->threads, sizeof(*fb.stats));
    if (!fb.stats) return -ENOMEM;
    for (int i = 0; i < o->threads && rc == 0; i++)
        rc = hm_flow_stats_create(f, false, &fb.stats[i]);
    hm_steps *all = NULL;
    if (rc == 0) rc = hm_flow_stats_create(f, true, &all);
    if (rc == 0) {
        hm_options fo = *o;
        fo.workload = &f->check;
        fo.signal = f->check_signal ? f->check_signal : "";
        fo.action = NULL;
        fo.signals_json = NULL;
        fo.plugin = NULL;
        const hammer_scenario body = {
            HAMMER_SCENARIO_ABI,
            .name = "flow",
            .vu_body = flow_vu_body,
            .check = flow_check,
        };
        rc = hm_via_browser_run_body(&fo, &body, &fb, r);
        for (int i = 0; i < o->threads; i++)
            hm_steps_merge(all, fb.stats[i]);
        r->steps = all;
        all = NULL;
    }
    for (int i = 0; i < o->threads; i++)
        hm_steps_free(fb.stats[i]);
    hm_steps_free(all);
    hm_free(fb.stats);
    return rc;
}
