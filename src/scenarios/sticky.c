/* The sticky scenario: reproduces php-via's multi-worker failure and checks
 * the fix. It runs the same workload once per variant, each with -c
 * browser-like VUs whose page load, SSE stream and actions use separate
 * connections, and reports one row per variant:
 *
 *   legacy     what php-via's PHP hammer did: a page load with no cookie,
 *              then every action on a new connection (with the cookie the
 *              page set); no session affinity.
 *   cookie     every VU chooses its session id before the page load (php-via
 *              adopts a client's id), so the page load routes like every
 *              later request, and sends the cookie with the SSE request and
 *              each action on a keep-alive connection.
 *   keepalive  the actions reuse the page's keep-alive connection (what a
 *              connection-affine dispatch, OpenSwoole's mode 2, needs).
 *
 * A request that reaches a worker without the context fails with 400
 * "Invalid context"; X-Via-Worker, when the server sends it, shows where
 * each action went. The run passes when the cookie variant is 100% OK. */
#include "scenarios/scenario.h"
#include "proto/via_client.h"

#include "proto/h2_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

typedef enum { V_LEGACY, V_COOKIE, V_KEEPALIVE, V__COUNT } variant;
static const char *variant_names[V__COUNT] = {"legacy", "cookie", "keepalive"};

typedef struct sticky_thread {
    hm_thread_stats st;
    uint64_t workers[HM_MAX_WORKERS];
    uint64_t sse_outcome[HM_SSE_OUTCOME__COUNT];
} sticky_thread;

typedef struct sticky_run {
    const hm_options *o;
    variant v;
    sticky_thread *threads;
    _Atomic int64_t claimed;
    atomic_int vus_left;
    _Atomic int start_err; /* a VU could not be started: the run fails */
    hm_liveness live;
    int64_t t_start, t_end;
} sticky_run;

typedef struct sticky_vu {
    sticky_run *run;
    int thread;
} sticky_vu;

static void count_worker(sticky_thread *t, const hm_http_conn *c)
{
    const hm_http_str *w = &c->resp.hdr.x_via_worker;
    if (!w->ptr) return;
    int id = atoi(w->ptr);
    if (id >= 0 && id < HM_MAX_WORKERS) t->workers[id]++;
}

/* One /_sse probe: what came back, read until its kind is known. */
typedef struct sse_probe {
    hm_http_conn *c;
    const char *req;
    size_t len;
    int64_t deadline;
    hm_watch watch;
    hm_thread_stats *st;
    const hm_options *o;
    int status, rc;
    bool opened;    /* answered 200: an SSE stream opened (sse.opened) */
    bool empty;     /* 200 with Content-Length: 0 */
    uint64_t bytes; /* body bytes */
    hm_task reader; /* the reading coroutine */
} sse_probe;

static int sse_headers(void *user, hm_http_resp_parser *p)
{
    sse_probe *pr = user;
    pr->status = p->status;
    pr->empty = hm_via_sse_empty(p);
    /* Only a 200 can be a stream; the status says the rest. */
    if (p->status != 200) return -ECANCELED;
    pr->opened = true;
    hm_sse_note_opened(pr->st, pr->o);
    return 0;
}

static int sse_body(void *user, const char *at, size_t len)
{
    sse_probe *pr = user;
    pr->bytes += len;
    int rc = hm_watch_feed(&pr->watch, at, len);
    /* The first event tells a live stream from php-via's reload script. */
    return rc < 0 ? rc : pr->watch.sse.events ? -ECANCELED : 0;
}

static void probe_coro(void *p)
{
    sse_probe *pr = p;
    pr->rc = hm_http_conn_stream(pr->c, pr->req, pr->len, pr->deadline, sse_headers, sse_body, pr);
}

/* Opens the SSE stream with the cookie and classifies the answer: only a
 * live stream (200 that delivers an event, or stays open until the
 * deadline) means the worker that took it knows the context. php-via
 * answers an unknown context with 200 and a reload script (a repeat with
 * an empty 200), so a 200 alone says nothing. */
static void probe_sse(sticky_vu *sv, hm_http_conn *c, const char *ctx, const char *cookie)
{
    const hm_options *o = sv->run->o;
    sticky_thread *t = &sv->run->threads[sv->thread];
    size_t len = 0;
    char *req = hm_via_sse_request(c->target, ctx, cookie, &len); /* sized, not on the stack */
    sse_probe pr = {.c = c, .req = req, .len = req ? len : 0, .rc = -EINVAL, .st = &t->st, .o = o};
    pr.deadline = hm_now_ns() + o->timeout_ns;
    hm_watch_init(&pr.watch, o->workload, o->signal ? o->signal : "");
    bool open_at_deadline = false;
    if (req && hm_task_spawn(&pr.reader, NULL, probe_coro, &pr) == 0) {
        /* The body has no deadline of its own: a silent stream is cut here
         * (a Ctrl-C ends the join too). */
        open_at_deadline = hm_task_join(&pr.reader, pr.deadline) == -ETIMEDOUT;
        hm_task_cancel(&pr.reader); /* it ends at its next wait */
        while (!pr.reader.done)
            if (hm_task_join(&pr.reader, 0) < 0) hm_coro_yield(); /* this VU cancelled too */
    }
    if (pr.opened) hm_gauge_sse_open(o, -1);
    hm_sse_outcome k = HM_SSE_OUTCOME_OTHER;
    if (pr.status == 403)
        k = HM_SSE_OUTCOME_403;
    else if (pr.status == 400)
        k = HM_SSE_OUTCOME_400;
    else if (pr.status == 200) {
        if (pr.watch.reload_asked)
            k = HM_SSE_OUTCOME_RELOAD;
        else if (pr.watch.sse.events || (open_at_deadline && !atomic_load(&hm_stop_requested)))
            k = HM_SSE_OUTCOME_LIVE; /* an event, or open (and silent) until the deadline */
        else if (pr.empty || pr.bytes == 0)
            k = HM_SSE_OUTCOME_EMPTY;
    }
    t->sse_outcome[k]++;
    hm_watch_free(&pr.watch);
    hm_free(req);
}

static void sticky_vu_coro(void *p)
{
    sticky_vu *sv = p;
    sticky_run *run = sv->run;
    const hm_options *o = run->o;
    sticky_thread *t = &run->threads[sv->thread];
    hm_cookie_jar jar;
    hm_cookie_jar_init(&jar);
    /* Over HTTP/2 the cookie variant is a tab: page, SSE and actions on one
     * connection (a balancer sees one connection per tab); legacy's
     * actions still take a new connection each. */
    hm_h2_conn *tab = NULL;
    if (o->http2 && run->v == V_COOKIE) hm_h2_conn_create(&tab, &o->target);
    hm_http_conn page, act;
    hm_http_conn_init_shared(&page, &o->target, NULL, tab);
    hm_http_conn_init_shared(&act, &o->target, NULL, tab);
    hm_via_page pg = {0};
    char why[512];
    char *cookie = NULL, *req = NULL; /* sized to what they hold, on the heap */

    if (run->v == V_COOKIE && !o->no_cookies) {
        /* Choose the session id first, so the page load carries it too. */
        unsigned char rnd[16];
        char sid[33];
        if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) memset(rnd, sv->thread, sizeof(rnd));
        for (int i = 0; i < 16; i++)
            snprintf(sid + 2 * i, 3, "%02x", rnd[i]);
        hm_cookie_jar_put(&jar, "via_session_id", sid, o->target.host);
    }
    int64_t t0 = hm_now_ns();
    int rc = hm_via_load_page(&page, &jar, o->route, o->action, t0 + o->timeout_ns, &pg, why,
                              sizeof(why));
    count_worker(t, &page);
    if (rc < 0) {
        hm_thread_stats_count(&t->st, page.resp.status, page.fail);
        goto out;
    }
    hm_thread_stats_record(&t->st, HM_PHASE_PAGE, (hm_now_ns() - t0) / 1000);
    if (o->no_cookies) {
        /* Ignore every cookie a balancer set; keep only php-via's session. */
        char sid[128] = "";
        const char *v = hm_cookie_jar_get(&jar, "via_session_id");
        if (v) snprintf(sid, sizeof(sid), "%s", v);
        hm_cookie_jar_free(&jar);
        hm_cookie_jar_init(&jar);
        if (sid[0]) hm_cookie_jar_put(&jar, "via_session_id", sid, o->target.host);
    }
    cookie = hm_via_cookie_dup(&jar, &o->target, "/");
    if (!cookie) goto out;
    if (run->v == V_COOKIE) {
        hm_http_conn sse;
        hm_http_conn_init_shared(&sse, &o->target, NULL, tab);
        probe_sse(sv, &sse, pg.ctx, cookie);
        hm_http_conn_free(&sse);
    }
    char *body = NULL;
    if (hm_workload_body(o->workload, pg.ctx, o->signals_json, NULL, false, &body) < 0) goto out;
    size_t len = 0;
    req = hm_via_action_request(&o->target, pg.action_url, cookie, body, strlen(body),
                                o->no_origin ? NULL : o->target.origin, &len);
    hm_free(body);
    if (!req) goto out;
    hm_http_conn *c = run->v == V_KEEPALIVE ? &page : &act;
    char where[96];
    snprintf(where, sizeof(where), "action POST %.40s, %s variant", pg.action_url,
             variant_names[run->v]);
    hm_request rq = {.req = req, .len = len, .timeout_ns = o->timeout_ns, .where = where};
    while (!atomic_load(&hm_stop_requested) && !atomic_load(&run->live.dead) &&
           !atomic_load(&run->start_err) && atomic_fetch_add(&run->claimed, 1) < o->actions) {
        if (run->v == V_LEGACY) hm_http_conn_close(c); /* a new connection per action */
        int status;
        bool stop = hm_request_send(c, &rq, &t->st, &run->live, &status);
        if (status) count_worker(t, c);
        if (stop) break;
    }
    hm_via_close_session(&page, pg.ctx, cookie, hm_now_ns() + o->timeout_ns);
out:
    hm_free(req);
    hm_free(cookie);
    hm_thread_stats_add_conn(&t->st, &page);
    hm_thread_stats_add_conn(&t->st, &act);
    hm_http_conn_free(&page);
    hm_http_conn_free(&act);
    hm_h2_conn_free(tab);
    hm_via_page_free(&pg);
    hm_cookie_jar_free(&jar);
    if (atomic_fetch_sub(&run->vus_left, 1) == 1) run->t_end = hm_now_ns();
    hm_free(sv);
}

static void thread_main(hm_loop *loop, int idx, void *arg)
{
    sticky_run *run = arg;
    int mine = hm_share(run->o->concurrency, run->o->threads, idx);
    for (int i = 0; i < mine; i++) {
        sticky_vu *sv = hm_alloc(sizeof(*sv));
        int rc = sv ? 0 : -ENOMEM;
        if (sv) *sv = (sticky_vu){run, idx};
        if (rc == 0 && (rc = hm_coro_spawn(loop, sticky_vu_coro, sv, NULL)) < 0) hm_free(sv);
        if (rc < 0) {
            int none = 0;
            atomic_compare_exchange_strong(&run->start_err, &none, rc);
            if (atomic_fetch_sub(&run->vus_left, 1) == 1) run->t_end = hm_now_ns();
        }
    }
}

/* What a variant's requests showed of the per-worker failure: answers
 * from a worker that does not hold the context (400 Invalid context, 403
 * when the session check runs first, the SSE reload script or its empty
 * repeat, another stream's bytes where a response should start), named in
 * words into signs (", "-separated). Returns how many kinds showed. */
static int wrong_worker_signs(const hm_variant_result *v, char *signs, size_t len)
{
    const struct {
        uint64_t n;
        const char *what;
    } kinds[] = {
        {v->stats.by_status[400] + v->sse_outcome[HM_SSE_OUTCOME_400], "400 Invalid context"},
        {v->stats.by_status[403] + v->sse_outcome[HM_SSE_OUTCOME_403], "403"},
        {v->sse_outcome[HM_SSE_OUTCOME_RELOAD], "SSE reload scripts"},
        {v->sse_outcome[HM_SSE_OUTCOME_EMPTY], "empty SSE 200s"},
        {v->stats.by_fail[HM_FAIL_PROTOCOL], "bytes of another stream"},
    };
    int found = 0;
    size_t n = 0;
    signs[0] = 0;
    for (size_t i = 0; i < HM_ARRAY_LEN(kinds); i++)
        if (kinds[i].n && n < len)
            n += (size_t)snprintf(signs + n, len - n, "%s%s", found++ ? ", " : "", kinds[i].what);
    return found;
}

/* Did some of the variant's requests reach the worker holding their
 * context (so the others missed it by worker, not by a broken app)? */
static bool reached_owner(const hm_variant_result *v)
{
    int workers = 0;
    for (int w = 0; w < HM_MAX_WORKERS; w++)
        workers += v->workers[w] > 0;
    return v->stats.ok > 0 || v->sse_outcome[HM_SSE_OUTCOME_LIVE] > 0 || workers > 1;
}

/* The per-worker pattern in one sentence with its fix: the verdict's
 * variant (cookie) showing it, or only the others (the cookie variant then
 * shows the fix working). */
static void diagnose(hm_results *r)
{
    r->variants_diagnosis[0] = 0;
    if (r->n_variants <= V_COOKIE) return;
    char signs[100], missed[64] = "";
    const hm_variant_result *ck = &r->variants[V_COOKIE];
    if (ck->stats.failed || ck->sse_failed) {
        if (!wrong_worker_signs(ck, signs, sizeof(signs)) || !reached_owner(ck)) return;
        snprintf(r->variants_diagnosis, sizeof(r->variants_diagnosis),
                 "each worker keeps its own contexts: requests of one session reached other "
                 "workers (%s); route by the session cookie, with a cookie-sticky balancer in "
                 "front of single-worker processes (docs/sticky-routing.md)",
                 signs);
        return;
    }
    size_t n = 0;
    int k = 0;
    for (int i = 0; i < r->n_variants; i++) {
        const hm_variant_result *v = &r->variants[i];
        if (i == V_COOKIE || !v->stats.failed || !reached_owner(v) ||
            !wrong_worker_signs(v, signs, sizeof(signs)))
            continue;
        n += (size_t)snprintf(missed + n, sizeof(missed) - n, "%s%s", k++ ? " and " : "", v->name);
    }
    if (!k) return;
    snprintf(r->variants_diagnosis, sizeof(r->variants_diagnosis),
             "each worker keeps its own contexts: the %s variant%s requests reached workers "
             "without their context; the cookie variant, routed by its session cookie, reached "
             "the owner every time (docs/sticky-routing.md)",
             missed, k > 1 ? "s'" : "'s");
}

int hm_sticky_run(const hm_options *o, hm_results *r)
{
    int rc = 0;
    r->n_variants = 0;
    for (variant v = 0; v < V__COUNT; v++) {
        sticky_run run = {.o = o, .v = v};
        run.threads = hm_calloc((size_t)o->threads, sizeof(*run.threads));
        if (!run.threads) return -ENOMEM;
        for (int i = 0; i < o->threads; i++)
            hm_thread_stats_init(&run.threads[i].st);
        atomic_store(&run.vus_left, o->concurrency);
        int e = hm_scenario_engine_run(o, run.threads, sizeof(*run.threads), thread_main, &run,
                                       &run.live, &run.t_start, &run.t_end);
        if (e < 0 && !rc) rc = e;

        hm_variant_result *vr = &r->variants[r->n_variants++];
        memset(vr, 0, sizeof(*vr));
        vr->name = variant_names[v];
        hm_thread_stats_init(&vr->stats);
        for (int i = 0; i < o->threads; i++) {
            hm_thread_stats_merge(&vr->stats, &run.threads[i].st);
            hm_thread_stats_merge(&r->total, &run.threads[i].st);
            for (int w = 0; w < HM_MAX_WORKERS; w++)
                vr->workers[w] += run.threads[i].workers[w];
            for (int k = 0; k < HM_SSE_OUTCOME__COUNT; k++)
                vr->sse_outcome[k] += run.threads[i].sse_outcome[k];
            hm_thread_stats_destroy(&run.threads[i].st);
        }
        /* Only a live stream means the worker has the context. */
        vr->sse_ok = vr->sse_outcome[HM_SSE_OUTCOME_LIVE];
        for (int k = 0; k < HM_SSE_OUTCOME__COUNT; k++)
            if (k != HM_SSE_OUTCOME_LIVE) vr->sse_failed += vr->sse_outcome[k];
        vr->wall_seconds = (double)(run.t_end - run.t_start) / 1e9;
        r->wall_seconds += vr->wall_seconds;
        hm_free(run.threads);
        if (atomic_load(&run.live.dead)) r->fatal = HM_TARGET_DEAD_MSG;
        if (atomic_load(&run.start_err)) {
            snprintf(r->fatal_buf, sizeof(r->fatal_buf), "cannot start a virtual user: %s",
                     hm_strerror(atomic_load(&run.start_err)));
            r->fatal = r->fatal_buf;
            if (!rc) rc = atomic_load(&run.start_err);
            break;
        }
        if (atomic_load(&hm_stop_requested)) break;
    }
    /* The verdict is the cookie variant's: the others show the failure. */
    r->has_check = true;
    const hm_variant_result *ck = &r->variants[V_COOKIE];
    r->check_passed = r->n_variants > V_COOKIE && ck->stats.sent > 0 && ck->stats.failed == 0;
    snprintf(r->check_detail, sizeof(r->check_detail), "cookie variant %llu/%llu OK",
             (unsigned long long)ck->stats.ok, (unsigned long long)ck->stats.sent);
    r->total_is_informational = true;
    diagnose(r);
    return rc;
}
