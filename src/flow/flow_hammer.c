/* A flow in the hammer model: one instance (one user, one context) per
 * flow of the file, and -c actions in flight on keep-alive connections.
 *
 * Each instance runs its flow's prologue once — the steps before its first
 * action: page loads, the SSE stream (which then observes the context for
 * the file's `check:`), gets, expectations — on engine thread 0. When every
 * prologue is done, -c senders (spread over the threads; over HTTP/2
 * --streams slots on each connection) run the rest of the flows over and
 * over, each pass on an instance picked by weight: every action goes out
 * with that instance's context and cookie, carrying via_ctx and the
 * step's own signals (nothing waits for a patch, so the last-seen signals
 * are those the prologue saw). Waits, thinks and signal expectations
 * after the first action are skipped: nothing waits in this model. The
 * senders are the sender pool's connections (load/sender_pool.h): the
 * pool claims an action, and its pick hook walks the sender's pass with a
 * cursor up to the step that sends it, sending a get on the way as an
 * extra exchange outside -n.
 *
 * Each instance is an hm_via_user (load/via_user.h), as the built-in
 * hammer model's session is: the same code follows its SSE stream (with
 * reconnects), times action->patch, reloads the page when the server lost
 * the context (a restart; each reloaded page must offer the flow's
 * actions again), waits at the end until the stream caught up, and checks
 * every context the instance had, the newest exactly.
 *
 * Threads share the file (read-only), the instances' users (their
 * atomics, contexts and send-time rings), and the run's atomics. */
#include "flow/flow.h"
#include "load/sender_pool.h"
#include "load/via_user.h"
#include "proto/via_client.h"

#include "proto/via_html.h"

#include <stdio.h>
#include <string.h>

typedef struct hrun hrun;

typedef struct instance {
    hrun *run;
    const hm_flow *flow;
    int index;
    hm_cookie_jar jar;
    hm_via_user user;         /* its contexts, stream, reloader and check */
    const hm_flow_step *page; /* the last page step: what a reloaded page must offer */
    json_t *seen;             /* the signals the prologue saw (read-only afterwards) */
    hm_http_conn conn;        /* the prologue's, on thread 0 */
    bool has_sse, spawned, ready;
    char fail_why[400]; /* the prologue failed: why */
    hm_flow_exec x;
    _Atomic int64_t seq; /* its actions claimed so far */
} instance;

struct hrun {
    const hm_options *o;
    const hm_flow_file *f;
    hm_thread_stats *stats;
    hm_steps **steps;
    instance *inst;
    int n_inst;
    _Atomic int64_t next_seq;
    atomic_int prologues_left, senders_left;
    atomic_bool go;
    hm_latch go_gate;      /* opened with go: senders of every thread wait on it */
    hm_latch senders;      /* counted down by each sender as it ends */
    hm_event progress;     /* thread 0: a patch, or an observer's end */
    _Atomic int start_err; /* a coroutine could not be started: the run fails */
    _Atomic int64_t t_go;
    int64_t t_start, t_end;
    hm_liveness live;
    atomic_bool aborted;
    atomic_flag abort_claimed;
    char abort_why[600];
};

/* A coroutine could not be started: the run fails with this error instead
 * of waiting for work that will never be done. */
static void start_failed(hrun *run, int err)
{
    int none = 0;
    atomic_compare_exchange_strong(&run->start_err, &none, err);
}

static void sender_done(hrun *run)
{
    if (atomic_fetch_sub(&run->senders_left, 1) == 1) {
        run->t_end = hm_now_ns();
        /* The run is over for whoever waits on a context. */
        for (int i = 0; i < run->n_inst; i++)
            hm_via_user_open_all(&run->inst[i].user);
    }
    hm_latch_count_down(&run->senders, 1);
}

static bool stopping(hrun *run)
{
    return atomic_load(&hm_stop_requested) || atomic_load(&run->live.dead) ||
           atomic_load(&run->aborted) || atomic_load(&run->start_err);
}

static void abort_run(hrun *run, const char *why)
{
    if (!atomic_flag_test_and_set(&run->abort_claimed))
        snprintf(run->abort_why, sizeof(run->abort_why), "%s", why);
    atomic_store(&run->aborted, true);
}

static int64_t timeout_of(const hrun *run, const hm_flow_step *s)
{
    return s->timeout_ns ? s->timeout_ns : run->o->timeout_ns;
}

static void record(hm_steps *st, const hm_flow_step *s, int64_t t0, const char *why)
{
    char full[400];
    if (why) snprintf(full, sizeof(full), "%s, line %d: %s", s->where, s->line, why);
    hm_steps_record(st, s->row, (hm_now_ns() - t0) / 1000, why ? full : NULL);
}

/* ---- the instance's user ------------------------------------------------------- */

static bool user_over(void *p)
{
    instance *in = p;
    return stopping(in->run) || atomic_load(&in->run->senders_left) == 0;
}

static void urls_free(void *p)
{
    char **urls = p;
    for (int i = 0; urls && urls[i] != (char *)1; i++)
        hm_free(urls[i]);
    hm_free(urls);
}

/* Per action slot of the file, its URL on a page whose body is html (the
 * offers of page step s; the others NULL), ended by a (char *)1 sentinel.
 * NULL when out of memory, or when the page lacks one of them: *missing
 * is then that action step. */
static char **find_urls(const hrun *run, const hm_flow_step *s, const char *html, size_t len,
                        const hm_flow_step **missing)
{
    int n = run->f->n_actions;
    char **urls = hm_calloc((size_t)n + 1, sizeof(char *));
    *missing = NULL;
    if (!urls) return NULL;
    urls[n] = (char *)1;
    for (int i = 0; i < s->n_offers; i++) {
        const hm_flow_step *a = s->offers[i];
        hm_free(urls[a->slot]);
        urls[a->slot] = NULL;
        if (html && hm_via_find_action(html, len, a->action, &urls[a->slot]) == 0) continue;
        *missing = a;
        urls_free(urls);
        return NULL;
    }
    return urls;
}

/* A reloaded page's action URLs (the user's make hook). */
static bool user_make(void *p, hm_ctx_gen *g, const char *html, size_t len, char *why,
                      size_t whylen)
{
    instance *in = p;
    const hm_flow_step *missing;
    g->data = find_urls(in->run, in->page, html, len, &missing);
    if (g->data) return true;
    if (missing)
        snprintf(why, whylen, "%s no longer offers action '%s' (%s)", in->user.route,
                 missing->action, missing->where);
    else
        snprintf(why, whylen, "out of memory");
    return false;
}

/* ---- the prologue (thread 0, once per instance) ------------------------------------ */

static void fail_instance(instance *in, const hm_flow_step *s, const char *why)
{
    if (!in->fail_why[0])
        snprintf(in->fail_why, sizeof(in->fail_why), "%.150s, line %d: %.200s", s->where, s->line,
                 why);
}

static int prologue_page(instance *in, const hm_flow_step *s)
{
    hrun *run = in->run;
    char *path = hm_flow_expand(&in->x, s->path);
    if (!path) return HM_FLOW_END;
    char why[600];
    hm_via_page page = {0};
    int64_t t0 = hm_now_ns();
    int rc = hm_via_load_page(&in->conn, &in->jar, path, NULL, t0 + timeout_of(run, s), &page, why,
                              sizeof(why));
    hm_thread_stats_note_conn(&run->stats[0], &in->conn);
    in->x.last_status = page.status ? page.status : rc;
    if (page.status != 200) {
        record(in->x.stats, s, t0, why);
        fail_instance(in, s, why);
        hm_via_page_free(&page);
        hm_free(path);
        return HM_FLOW_END;
    }
    hm_thread_stats_record(&run->stats[0], HM_PHASE_PAGE, (hm_now_ns() - t0) / 1000);
    record(in->x.stats, s, t0, NULL);
    const char *html = in->conn.resp.body;
    size_t len = in->conn.resp.body_len;
    int ret = HM_FLOW_STOP;
    const hm_flow_step *a = NULL;
    char **urls = NULL;
    if (rc < 0 || !page.ctx) {
        snprintf(why, sizeof(why),
                 "%s:%d:%d: %s: %s is not a php-via page: it has no <meta data-signals> with "
                 "via_ctx (a get: step fetches other paths)",
                 run->f->path, s->line, s->col, s->where, path);
        abort_run(run, why);
    } else if (!(urls = find_urls(run, s, html, len, &a)) && a) {
        char offered[200];
        int n = html ? hm_via_list_actions(html, len, offered, sizeof(offered)) : 0;
        snprintf(why, sizeof(why),
                 "%s:%d:%d: %s: the page %s does not offer action '%s' (it offers: %s)",
                 run->f->path, a->line, a->col, a->where, path, a->action,
                 n ? offered : "no actions");
        abort_run(run, why);
    } else if (urls && hm_via_user_publish(&in->user, path, &page, urls)) {
        in->page = s; /* a reload must find these actions again */
        ret = HM_FLOW_NEXT;
    } else {
        urls_free(urls);
        start_failed(run, -ENOMEM);
    }
    hm_via_page_free(&page);
    hm_free(path);
    return ret;
}

/* The observer's reader coroutine still runs. */
static bool observer_alive(const void *arg)
{
    const hm_via_observer *ob = arg;
    return ob->task.co != NULL;
}

static int prologue_sse(instance *in, const hm_flow_step *s)
{
    hrun *run = in->run;
    int64_t t0 = hm_now_ns(), until = t0 + timeout_of(run, s);
    hm_via_observer *ob = &in->user.obs[0];
    in->has_sse = true;
    if (!in->spawned && atomic_load(&in->user.cur)) {
        in->spawned = true;
        int rc = hm_via_user_spawn(&in->user, NULL);
        if (rc < 0) start_failed(run, rc);
    }
    bool ok = hm_watch_wait_first_state(&ob->es.watch, observer_alive, ob, &ob->ev, until) == 0;
    char why[120];
    snprintf(why, sizeof(why), "the stream showed nothing within %.3f s",
             (double)(until - t0) / 1e9);
    record(in->x.stats, s, t0, ok ? NULL : why);
    return HM_FLOW_NEXT;
}

/* A flow's `get` step's request: GET path (NULL: it could not be
 * expanded) with the user's cookie (NULL: none could be made) into *req
 * (hm_alloc'd). Its length, or a negative errno. */
static ssize_t get_request(const hrun *run, const char *path, const char *cookie, char **req)
{
    *req = NULL;
    return path && cookie ? hm_via_get_request(&run->o->target, path, cookie, req) : -ENOMEM;
}

/* A `get` step's outcome (rc: its exchange's, or why there was none) into
 * x: the last status, and the step's row. */
static void get_outcome(hm_flow_exec *x, const hm_flow_step *s, const hm_http_conn *c, int rc,
                        int64_t t0)
{
    int status = rc < 0 ? rc : c->resp.status;
    x->last_status = status;
    char why[120];
    if (status < 0)
        snprintf(why, sizeof(why), "%s", hm_strerror(status));
    else
        snprintf(why, sizeof(why), "HTTP %d", status);
    record(x->stats, s, t0, status > 0 && status < 400 ? NULL : why);
}

static int prologue_get(instance *in, const hm_flow_step *s)
{
    hrun *run = in->run;
    char *path = hm_flow_expand(&in->x, s->path);
    char *cookie = path ? hm_via_cookie_dup(&in->jar, &run->o->target, path) : NULL;
    char *req;
    ssize_t len = get_request(run, path, cookie, &req);
    int64_t t0 = hm_now_ns();
    int rc = (int)len;
    if (len > 0) {
        hm_http_xopts xo = {.idempotent = true, .deadline = t0 + timeout_of(run, s)};
        rc = hm_http_conn_exchange(&in->conn, req, (size_t)len, &xo);
    }
    get_outcome(&in->x, s, &in->conn, rc, t0);
    hm_free(req);
    hm_free(cookie);
    hm_free(path);
    return HM_FLOW_NEXT;
}

static int prologue_leaf(hm_flow_exec *x, const hm_flow_step *s)
{
    instance *in = x->self;
    x->signals = in->user.obs[0].es.watch.signals;
    if (stopping(in->run)) return HM_FLOW_STOP;
    switch (s->kind) {
    case HM_FLOW_PAGE:
        return prologue_page(in, s);
    case HM_FLOW_SSE:
        return prologue_sse(in, s);
    case HM_FLOW_GET:
        return prologue_get(in, s);
    case HM_FLOW_EXPECT:
        hm_flow_expect(x, s);
        return HM_FLOW_NEXT;
    case HM_FLOW_THINK: {
        int64_t ns = hm_flow_think_ns(x, s);
        if (ns > 0 && hm_coro_sleep(ns) == -ECANCELED) return HM_FLOW_STOP;
        return HM_FLOW_NEXT;
    }
    case HM_FLOW_SET:
        return hm_flow_set(x, s);
    default: /* wait: nothing waits in this model; close: not before an action */
        return HM_FLOW_NEXT;
    }
}

static bool prologue_budget(hm_flow_exec *x)
{
    (void)x;
    return false; /* a repeat "forever" before the first action runs no pass here */
}

static void release_senders(hrun *run)
{
    if (atomic_fetch_sub(&run->prologues_left, 1) == 1) {
        atomic_store(&run->t_go, hm_now_ns());
        atomic_store(&run->go, true);
        hm_latch_count_down(&run->go_gate, 1);
    }
}

static void prologue_coro(void *p)
{
    instance *in = p;
    hrun *run = in->run;
    const hm_flow *fl = in->flow;
    in->x.rng = (unsigned)(in->index + 1) * 2246822519u;
    in->x.stats = run->steps[0];
    in->x.leaf = prologue_leaf;
    in->x.budget_left = prologue_budget;
    in->x.self = in;
    hm_http_conn_init(&in->conn, &run->o->target, NULL);
    if (hm_flow_exec_start(&in->x, run->f, fl, in->index, 0) == 0) {
        int rc = hm_flow_walk(&in->x, fl->steps, fl->prologue);
        hm_ctx_gen *g = atomic_load(&in->user.cur);
        if (rc == HM_FLOW_NEXT && !in->fail_why[0]) {
            /* The senders need the context and its cookie as the prologue
             * left them (its gets may have set cookies); a flow without a
             * body (no action) is done. */
            char *cookie = g ? hm_via_cookie_dup(&in->jar, &run->o->target, "/") : NULL;
            if (cookie) {
                hm_free(g->cookie); /* nobody fires yet; the stream copied it */
                g->cookie = cookie;
                in->seen = json_deep_copy(in->user.obs[0].es.watch.signals);
            }
            in->ready = fl->prologue == fl->n_steps || (cookie && in->seen);
        }
        /* A context the senders fire at gets its reloader (and, without an
         * sse step, no stream). */
        if (in->ready && g && !in->spawned) {
            in->spawned = true;
            int src = hm_via_user_spawn(&in->user, NULL);
            if (src < 0) start_failed(run, src);
        }
    }
    run->stats[0].connects += in->conn.connects;
    hm_http_conn_free(&in->conn);
    release_senders(run);
}

/* ---- the senders (every thread) -------------------------------------------------- */

/* A thread's senders: one sender pool (load/sender_pool.h), run by one
 * coroutine once every prologue is done. */
typedef struct sender_thread {
    hrun *run;
    int thread, first, n; /* first: its first connection's number; n: senders */
    int made;             /* senders made so far, numbered from first * senders_per_conn */
} sender_thread;

/* Senders per connection: over HTTP/2 its --streams slots. */
static int senders_per_conn(const hm_options *o)
{
    return o->http2 ? o->streams : 1;
}

/* One sender, a pool connection's token: its walk through the flows, one
 * pass after another. Its steps run as the pool asks for its next
 * request: the steps that send nothing at once, an action or a get as
 * the request returned. */
typedef struct sender {
    sender_thread *t;
    int id;
    int64_t passes;
    int64_t claim;               /* the pool's claimed action, which the next action step sends */
    instance *in;                /* the instance of the current pass (NULL before the first) */
    hm_flow_cursor cur;          /* where the pass is */
    const hm_flow_step *pending; /* to send next: it waits for a context, or its connect failed */
    const hm_flow_step *sending; /* the step whose request is out */
    hm_ctx_gen *g;               /* the context the action went to */
    char *req;                   /* the request out */
    int64_t k, t0;               /* the action's number in its instance, and its send time */
    bool stamped;                /* k is the action's (a resend after a refused connect keeps it) */
    bool extras;                 /* a get went out since the pool claimed the action */
    char what[96];               /* the request in a failure's example */
    hm_ctx_gen **gens;           /* per instance, the context it fired at last (NULL: none yet) */
    hm_flow_exec x;
} sender;

/* Another pass of a "forever" repeat: the run goes on, and the action this
 * sender holds is within -n and -d; a pass that sent only gets since the
 * claim also ends once the other senders spent the budget (its claimed
 * action then goes unsent, uncounted). */
static bool sender_budget(hm_flow_exec *x)
{
    sender *sd = x->self;
    hrun *run = sd->t->run;
    int64_t t_go = atomic_load(&run->t_go);
    return !stopping(run) && hm_budget_allows(run->o, sd->claim, t_go) &&
           (!sd->extras || hm_budget_allows(run->o, atomic_load(&run->next_seq), t_go));
}

/* Can the senders run this instance's flow: its prologue went well, and
 * there is something after it (a flow without an action has no body: its
 * steps ran once in the prologue). */
static bool runnable(const instance *in)
{
    return in->ready && atomic_load(&((instance *)in)->user.cur) &&
           in->flow->prologue < in->flow->n_steps;
}

/* A runnable instance, by weight. */
static instance *pick_instance(sender *sd)
{
    hrun *run = sd->t->run;
    double total = 0;
    for (int i = 0; i < run->n_inst; i++)
        if (runnable(&run->inst[i])) total += run->inst[i].flow->weight;
    if (!(total > 0)) return NULL;
    double r = hm_flow_rand01(&sd->x.rng) * total;
    instance *last = NULL;
    for (int i = 0; i < run->n_inst; i++) {
        instance *in = &run->inst[i];
        if (!runnable(in) || !(in->flow->weight > 0)) continue;
        last = in;
        if (r < in->flow->weight) return in;
        r -= in->flow->weight;
    }
    return last;
}

static sender *sender_new(sender_thread *t)
{
    hrun *run = t->run;
    sender *sd = hm_calloc(1, sizeof(*sd));
    if (!sd) return NULL;
    if (!(sd->gens = hm_calloc((size_t)run->n_inst + 1, sizeof(*sd->gens)))) {
        hm_free(sd);
        return NULL;
    }
    sd->t = t;
    sd->id = t->first * senders_per_conn(run->o) + t->made++;
    sd->x.rng = (unsigned)(sd->id + 1) * 2654435761u;
    sd->x.stats = run->steps[t->thread];
    sd->x.leaf = NULL; /* the pool drives the walk: see pick_step */
    sd->x.budget_left = sender_budget;
    sd->x.self = sd;
    hm_flow_cursor_start(&sd->cur, NULL, 0);
    return sd;
}

static void sender_free(void *user, void *token)
{
    (void)user;
    sender *sd = token;
    if (!sd) return;
    hm_free(sd->req);
    hm_flow_cursor_free(&sd->cur);
    hm_flow_exec_end(&sd->x);
    hm_free(sd->gens);
    hm_free(sd);
}

/* The next pass: an instance by weight, its flow after the prologue. */
static int start_pass(sender *sd)
{
    hrun *run = sd->t->run;
    instance *in = pick_instance(sd);
    if (!in || hm_flow_exec_start(&sd->x, run->f, in->flow, sd->id, sd->passes++) < 0) return -1;
    sd->in = in;
    sd->x.signals = in->seen;
    const hm_flow *fl = in->flow;
    hm_flow_cursor_free(&sd->cur);
    hm_flow_cursor_start(&sd->cur, fl->steps + fl->prologue, fl->n_steps - fl->prologue);
    return 0;
}

/* An action step: its request with the instance's context (the newest
 * once it showed its state, none while the reloader gets one: the rule
 * of every hammer-model sender), into p. */
static int pick_action(sender *sd, const hm_flow_step *s, hm_pick *p)
{
    hrun *run = sd->t->run;
    const hm_options *o = run->o;
    instance *in = sd->in;
    char why[256];
    hm_latch *gate;
    int64_t until;
    int t =
        hm_via_user_target(&in->user, &sd->gens[in->index], atomic_load(&run->t_go), &gate, &until);
    if (t < 0) return HM_PICK_END;
    if (t == 0) {
        sd->pending = s; /* asked again in 1 ms */
        return HM_PICK_LATER;
    }
    hm_ctx_gen *g = sd->gens[in->index];
    const char *url = ((char **)g->data)[s->slot];
    /* The action takes its place in -n even when its values cannot be made. */
    char *fields = hm_flow_action_fields(&sd->x, s, in->seen, NULL, why, sizeof(why));
    if (!fields) {
        record(sd->x.stats, s, hm_now_ns(), why);
        return HM_PICK_SKIP;
    }
    char *body = NULL;
    int rc = hm_workload_body(NULL, g->page.ctx, fields, NULL, false, &body);
    hm_free(fields);
    size_t len = 0;
    char *req = rc == 0 && url
                    ? hm_via_action_request(&o->target, url, g->cookie, body, strlen(body),
                                            o->no_origin ? NULL : o->target.origin, &len)
                    : NULL;
    hm_free(body);
    if (!req) {
        record(sd->x.stats, s, hm_now_ns(), "cannot build the request");
        return HM_PICK_SKIP;
    }
    snprintf(sd->what, sizeof(sd->what), "action POST %.48s, flow line %d", url, s->line);
    sd->req = req;
    sd->sending = s;
    sd->g = g;
    p->req = req;
    p->len = len;
    p->what = sd->what;
    return HM_PICK_ACTION;
}

/* A get step into *p: sent before the claimed action, outside -n (the
 * pick is HM_PICK_EXTRA). false when its request cannot be made (recorded
 * as the step's failure; the walk goes on). */
static bool pick_get(sender *sd, const hm_flow_step *s, hm_pick *p)
{
    hrun *run = sd->t->run;
    char *path = hm_flow_expand(&sd->x, s->path);
    hm_ctx_gen *g = atomic_load(&sd->in->user.cur);
    char *req;
    ssize_t len = get_request(run, path, g->cookie, &req);
    hm_free(path);
    sd->t0 = hm_now_ns();
    if (len < 0) {
        get_outcome(&sd->x, s, NULL, (int)len, sd->t0);
        return false;
    }
    sd->req = req;
    sd->sending = s;
    sd->extras = true;
    p->req = req;
    p->len = (size_t)len;
    p->timeout_ns = timeout_of(run, s);
    return true;
}

/* The pool's pick: walks the sender's pass (starting the next when one
 * ends) up to the next step that sends, running the others on the way. */
static int pick_step(void *user, hm_pick *p, void **token)
{
    sender_thread *t = user;
    hrun *run = t->run;
    sender *sd = *token;
    if (!sd && !(sd = *token = sender_new(t))) {
        start_failed(run, -ENOMEM);
        return HM_PICK_END;
    }
    if (stopping(run)) return HM_PICK_END;
    if (sd->claim != p->seq) sd->extras = false; /* a new claim */
    sd->claim = p->seq;
    hm_free(sd->req);
    sd->req = NULL;
    /* A pass may send nothing (its actions behind repeats that missed
     * their probability): the walk yields to the loop now and then. */
    for (int leaves = 0; leaves < 1000; leaves++) {
        const hm_flow_step *s = sd->pending;
        sd->pending = NULL;
        int rc = HM_FLOW_NEXT;
        if (!s && sd->in) s = hm_flow_cursor_next(&sd->x, &sd->cur, &rc);
        if (rc == HM_FLOW_STOP) return HM_PICK_END;
        if (!s) {
            if (start_pass(sd) < 0) return HM_PICK_END;
            continue;
        }
        switch (s->kind) {
        case HM_FLOW_ACTION:
            return pick_action(sd, s, p);
        case HM_FLOW_GET:
            if (pick_get(sd, s, p)) return HM_PICK_EXTRA;
            break;
        case HM_FLOW_EXPECT:
            if (s->cond.n_status)
                hm_flow_expect(&sd->x, s);
            else /* signals: nothing waits here, so they are not what the action did */
                hm_steps_check_skipped(sd->x.stats, s->check,
                                       "the hammer model does not wait for patches, so it skips "
                                       "signal expectations after the first action (--mode "
                                       "browser evaluates them)");
            break;
        case HM_FLOW_SET:
            hm_flow_set(&sd->x, s);
            break;
        default: /* wait, think: actions stay in flight */
            break;
        }
    }
    return HM_PICK_LATER;
}

/* The action goes out: its send time into its instance's ring (a resend
 * after a refused connect keeps the action's number). */
static void on_send(void *user, int64_t seq, int64_t intended, void *token)
{
    (void)user;
    (void)seq;
    sender *sd = token;
    instance *in = sd->in;
    if (!sd->stamped) sd->k = atomic_fetch_add(&in->seq, 1);
    sd->stamped = true;
    sd->t0 = hm_now_ns();
    hm_via_user_stamp(&in->user, sd->k, intended ? intended : sd->t0);
}

/* An action's outcome, on the context it went to, and into its step's
 * row; one whose connect was refused is sent again (the pool's back-off). */
static void on_result(void *user, hm_thread_stats *st, const hm_http_conn *c, int status,
                      void *token)
{
    (void)user;
    sender *sd = token;
    const hm_flow_step *s = sd->sending;
    hm_via_user_account(&sd->in->user, sd->g, st, c, status);
    hm_free(sd->req);
    sd->req = NULL;
    if (hm_request_unsent(c, status)) {
        sd->pending = s;
        return;
    }
    sd->stamped = false;
    sd->x.last_status = status ? status : -HM_ECLOSED;
    char why[64];
    bool ok = status >= 200 && status < 300;
    if (status)
        snprintf(why, sizeof(why), "HTTP %d", status);
    else
        snprintf(why, sizeof(why), "%s", hm_fail_kind_name(c->fail));
    record(sd->x.stats, s, sd->t0, ok ? NULL : why);
}

static void on_extra(void *user, hm_thread_stats *st, const hm_http_conn *c, int rc, void *token)
{
    (void)user;
    (void)st;
    sender *sd = token;
    get_outcome(&sd->x, sd->sending, c, rc, sd->t0);
    hm_free(sd->req);
    sd->req = NULL;
}

/* A thread's senders: they wait for every prologue, then run as one pool. */
static void senders_driver(void *p)
{
    sender_thread *t = p;
    hrun *run = t->run;
    const hm_options *o = run->o;
    hm_latch_wait(&run->go_gate, 0); /* every prologue done, or a Ctrl-C */
    hm_sender_pool_cfg cfg = {.o = o,
                              .next_seq = &run->next_seq,
                              .t_base = atomic_load(&run->t_go),
                              .live = &run->live,
                              .start_err = &run->start_err,
                              .what = "a flow's action",
                              .on_send = on_send,
                              .pick = pick_step,
                              .req_per_exchange = true,
                              .on_result = on_result,
                              .on_extra = on_extra,
                              .on_end = sender_free,
                              .user = t,
                              .streams = senders_per_conn(o)};
    if (!stopping(run)) hm_sender_pool_run(&cfg, &run->stats[t->thread], t->first, t->n);
    for (int i = 0; i < t->n; i++)
        sender_done(run);
    hm_free(t);
}

/* ---- the end (thread 0) ------------------------------------------------------------ */

static void finisher_coro(void *p)
{
    hrun *run = p;
    const hm_options *o = run->o;
    hm_latch_wait(&run->go_gate, 0); /* every prologue done, or a Ctrl-C */
    /* Every sender counts this down when it ends (a Ctrl-C's STOP lets the
     * requests in flight finish; an ABORT ends this wait at once). */
    while (!hm_latch_open(&run->senders) && hm_interrupt_current() < HM_INTERRUPT_ABORT)
        hm_latch_wait(&run->senders, 0);
    /* The last patches may trail the last responses (also after Ctrl-C:
     * the verdict covers what ran, so it needs the patches of what ran). */
    int64_t until = hm_now_ns() + o->timeout_ns;
    for (int i = 0; i < run->n_inst; i++)
        hm_via_user_finish(&run->inst[i].user, until);
}

static void thread_main(hm_loop *loop, int idx, void *arg)
{
    hrun *run = arg;
    const hm_options *o = run->o;
    if (idx == 0) {
        for (int i = 0; i < run->n_inst; i++) {
            int rc = hm_coro_spawn(loop, prologue_coro, &run->inst[i], NULL);
            if (rc < 0) {
                start_failed(run, rc);
                release_senders(run); /* nobody waits for a prologue that never ran */
            }
        }
        int rc = hm_coro_spawn(loop, finisher_coro, run, NULL);
        if (rc < 0) start_failed(run, rc);
    }
    int first = 0;
    for (int i = 0; i < idx; i++)
        first += hm_share(o->concurrency, o->threads, i);
    /* Senders: connections, or over HTTP/2 their --streams slots. */
    int n = hm_share(o->concurrency, o->threads, idx) * senders_per_conn(o);
    if (n == 0) return;
    sender_thread *t = hm_alloc(sizeof(*t));
    int rc = t ? 0 : -ENOMEM;
    if (t) *t = (sender_thread){.run = run, .thread = idx, .first = first, .n = n};
    if (rc == 0 && (rc = hm_coro_spawn(loop, senders_driver, t, NULL)) < 0) hm_free(t);
    if (rc < 0) {
        start_failed(run, rc);
        for (int i = 0; i < n; i++)
            sender_done(run); /* never started: nothing to wait for */
    }
}

static void close_sessions(void *p)
{
    hrun *run = p;
    hm_http_conn c;
    hm_http_conn_init(&c, &run->o->target, NULL);
    for (int i = 0; i < run->n_inst; i++) {
        instance *in = &run->inst[i];
        hm_ctx_gen *g = atomic_load(&in->user.cur);
        if (!g || atomic_load(&g->dead)) continue; /* a lost context has no session to close */
        char *cookie = hm_via_cookie_dup(&in->jar, &run->o->target, "/_session/close");
        if (cookie) hm_via_close_session(&c, g->page.ctx, cookie, hm_now_ns() + run->o->timeout_ns);
        hm_free(cookie);
    }
    hm_http_conn_free(&c);
}

/* ---- the run ------------------------------------------------------------------------- */

static void report(hrun *run, hm_results *r)
{
    const hm_flow_file *f = run->f;
    bool counting =
        f->check.check == HM_CHECK_NET_INCREMENT || f->check.check == HM_CHECK_SPREADSHEET;
    int passed = 0, observed = 0;
    bool reloaded = false;
    uint64_t last_ok = 0;
    char first[400] = "";
    for (int i = 0; i < run->n_inst; i++) {
        instance *in = &run->inst[i];
        hm_via_user_verdict v;
        hm_via_user_judge(&in->user, &v);
        char why[400] = "";
        hm_via_user_detail(&v, why, sizeof(why));
        bool ok = !in->fail_why[0] && in->ready && v.passed;
        if (in->fail_why[0]) snprintf(why, sizeof(why), "%s", in->fail_why);
        passed += ok;
        if (!ok && !first[0])
            snprintf(first, sizeof(first), "flow '%.60s': %.300s", in->flow->name,
                     why[0] ? why : "its prologue did not finish");
        else if (run->n_inst == 1 && v.reloaded)
            snprintf(first, sizeof(first), "%.300s", why); /* the newest context's words */
        if (in->has_sse) observed++;
        r->observers_connected += v.connected;
        r->patches_observed += v.patches;
        r->patches_opening += v.opening;
        r->patches_extra += v.extra;
        r->baseline += v.baseline;
        r->final_value += v.last;
        r->baseline_known = r->final_known = r->baseline_known || v.baseline_known;
        r->total.swallowed += v.swallowed;
        reloaded = reloaded || v.reloaded;
        last_ok += v.last_ok;
    }
    r->has_check = true;
    r->check_passed = passed == run->n_inst;
    if (run->n_inst == 1)
        snprintf(r->check_detail, sizeof(r->check_detail), "%.250s", first);
    else
        snprintf(r->check_detail, sizeof(r->check_detail), "%d/%d flows' contexts passed%s%.200s",
                 passed, run->n_inst, first[0] ? "; first failure: " : "", first);
    if (reloaded) {
        r->ok_checked_known = true;
        r->ok_checked = last_ok;
    }
    r->has_patches = observed > 0;
    r->conns_extra_why = "the flows' page loads, SSE streams and reloads";
    r->observers = observed;
    r->has_signal = counting;
    r->matches_ok = counting && r->check_passed && r->final_value - r->baseline == (int64_t)last_ok;
}

/* Does this block (before the flow's first action) open an SSE stream? */
static bool opens_sse(const hm_flow_step *steps, int n)
{
    for (int i = 0; i < n; i++)
        if (steps[i].kind == HM_FLOW_SSE ||
            (steps[i].kind == HM_FLOW_REPEAT && opens_sse(steps[i].steps, steps[i].n_steps)))
            return true;
    return false;
}

int hm_flow_hammer_run(const hm_options *o, const hm_flow_file *f, hm_results *r)
{
    hrun run = {.o = o, .f = f};
    int rc = 0;
    for (int i = 0; i < f->n_flows; i++)
        run.n_inst += f->flows[i].weight > 0;
    run.inst = hm_calloc((size_t)run.n_inst, sizeof(*run.inst));
    run.stats = hm_calloc((size_t)o->threads, sizeof(*run.stats));
    run.steps = hm_calloc((size_t)o->threads, sizeof(*run.steps));
    hm_steps *all = NULL;
    if (!run.inst || !run.stats || !run.steps) rc = -ENOMEM;
    for (int i = 0; rc == 0 && i < o->threads; i++) {
        rc = hm_thread_stats_init(&run.stats[i]);
        if (rc == 0) rc = hm_flow_stats_create(f, false, &run.steps[i]);
    }
    if (rc == 0) rc = hm_flow_stats_create(f, true, &all);
    for (int i = 0, k = 0; rc == 0 && i < f->n_flows; i++) {
        if (!(f->flows[i].weight > 0)) continue;
        instance *in = &run.inst[k];
        in->run = &run;
        in->flow = &f->flows[i];
        in->index = k++;
        hm_cookie_jar_init(&in->jar);
        hm_via_user_cfg ucfg = {.o = o,
                                .workload = &f->check,
                                .signal = f->check_signal ? f->check_signal : "",
                                .st = &run.stats[0],
                                .live = &run.live,
                                .jar = &in->jar,
                                .seq = &in->seq,
                                .progress = &run.progress,
                                .run_end = &run.senders,
                                .observers = opens_sse(in->flow->steps, in->flow->prologue),
                                .make = user_make,
                                .free_data = urls_free,
                                .over = user_over,
                                .user = in};
        rc = hm_via_user_init(&in->user, &ucfg);
    }
    if (rc == 0) {
        atomic_store(&run.prologues_left, run.n_inst);
        atomic_store(&run.senders_left, o->concurrency * senders_per_conn(o));
        hm_latch_init(&run.go_gate, 1);
        hm_latch_init(&run.senders, o->concurrency * senders_per_conn(o));
        hm_event_init(&run.progress);
        rc = hm_scenario_engine_run(o, run.stats, sizeof(*run.stats), thread_main, &run, &run.live,
                                    &run.t_start, &run.t_end);
        hm_run_on_temp_loop(o->backend, close_sessions, &run);
        for (int i = 0; i < o->threads; i++) {
            hm_thread_stats_merge(&r->total, &run.stats[i]);
            hm_steps_merge(all, run.steps[i]);
        }
        r->wall_seconds = (double)(run.t_end - run.t_start) / 1e9;
        rc = hm_run_note_end(r, rc, &run.live, atomic_load(&run.aborted) ? run.abort_why : NULL,
                             atomic_load(&run.start_err), "a coroutine");
        report(&run, r);
        r->steps = all;
        all = NULL;
    }
    for (int i = 0; run.inst && i < run.n_inst; i++) {
        instance *in = &run.inst[i];
        json_decref(in->seen);
        hm_flow_exec_end(&in->x);
        hm_via_user_free(&in->user);
        hm_cookie_jar_free(&in->jar);
    }
    for (int i = 0; run.stats && i < o->threads; i++)
        hm_thread_stats_destroy(&run.stats[i]);
    for (int i = 0; run.steps && i < o->threads; i++)
        hm_steps_free(run.steps[i]);
    hm_steps_free(all);
    hm_free(run.inst);
    hm_free(run.stats);
    hm_free(run.steps);
    return rc;
}
