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
 * each action went. The run passes when the cookie variant is 100% OK.
 *
 * A thread's VUs are one sender pool's connections (load/sender_pool.h):
 * each opens with its page load (and probe) in a short-lived coroutine,
 * then sends its actions from the loop's callbacks with no stack of its
 * own, and closes its session at the end. */
#include "scenarios/scenario.h"
#include "load/sender_pool.h"
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
    _Atomic int64_t claimed; /* the pools' claim counter (-n) */
    atomic_int threads_left; /* the last thread's pool to end sets t_end */
    _Atomic int start_err;   /* a VU could not be started: the run fails */
    hm_liveness live;
    int64_t t_start, t_end;
} sticky_run;

/* One VU: a connection of the thread's sender pool (load/sender_pool.h)
 * and this, its token. It opens (vu_open, in a coroutine of its own):
 * page load, and in the cookie variant the SSE probe; then the pool sends
 * its action over and over on the connection; at the end it closes its
 * session (vu_close). */
typedef struct sticky_vu {
    sticky_run *run;
    int thread;
    hm_cookie_jar jar;
    /* legacy and cookie: the page's own connection (kept open, as a
     * browser keeps it); keepalive loads the page on the pool's one */
    hm_http_conn page;
    bool own_page;
    hm_via_page pg;
    char *cookie, *req; /* sized to what they hold, on the heap */
    size_t len;
    char where[96];
} sticky_vu;

/* A thread's VUs, as one sender pool. */
typedef struct sticky_pool {
    sticky_run *run;
    int thread;
} sticky_pool;

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
    hm_sse_head head; /* what the answer's head said, as every follower reads it */
    uint64_t bytes;   /* body bytes */
    hm_task reader;   /* the reading coroutine */
} sse_probe;

/* Only a 200 can be a stream; the status says the rest. */
static int sse_headers(void *user, hm_http_resp_parser *p)
{
    sse_probe *pr = user;
    return hm_sse_head_read(&pr->head, p, pr->st, pr->o);
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
    hm_http_conn_stream(pr->c, pr->req, pr->len, pr->deadline, sse_headers, sse_body, pr);
}

/* Opens the SSE stream with the cookie and classifies the answer: only a
 * live stream (200 that delivers an event, or stays open until the
 * deadline) means the worker that took it knows the context. php-via
 * answers an unknown context with 200 and a reload script (a repeat with
 * an empty 200), so a 200 alone says nothing. */
static void probe_sse(const sticky_vu *sv, hm_http_conn *c, const char *ctx, const char *cookie)
{
    const hm_options *o = sv->run->o;
    sticky_thread *t = &sv->run->threads[sv->thread];
    size_t len = 0;
    char *req = hm_via_sse_request(c->target, ctx, cookie, &len); /* sized, not on the stack */
    sse_probe pr = {.c = c, .req = req, .len = req ? len : 0, .st = &t->st, .o = o};
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
    if (pr.head.streaming) hm_gauge_sse_open(o, -1);
    hm_sse_outcome k = HM_SSE_OUTCOME_OTHER;
    if (pr.head.status == 403)
        k = HM_SSE_OUTCOME_403;
    else if (pr.head.status == 400)
        k = HM_SSE_OUTCOME_400;
    else if (pr.head.status == 200) {
        if (pr.watch.reload_asked)
            k = HM_SSE_OUTCOME_RELOAD;
        else if (pr.watch.sse.events || (open_at_deadline && !atomic_load(&hm_stop_requested)))
            k = HM_SSE_OUTCOME_LIVE; /* an event, or open (and silent) until the deadline */
        else if (pr.head.empty || pr.bytes == 0)
            k = HM_SSE_OUTCOME_EMPTY;
    }
    t->sse_outcome[k]++;
    hm_watch_free(&pr.watch);
    hm_free(req);
}

/* Chooses the session id before the page load, so that the page load
 * routes as every later request (php-via adopts a client's id). */
static void choose_session(sticky_vu *sv)
{
    unsigned char rnd[16];
    char sid[33];
    if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) memset(rnd, sv->thread, sizeof(rnd));
    for (int i = 0; i < 16; i++)
        snprintf(sid + 2 * i, 3, "%02x", rnd[i]);
    hm_cookie_jar_put(&sv->jar, "via_session_id", sid, sv->run->o->target.host);
}

/* --no-cookies: ignore every cookie a balancer set; keep only php-via's
 * session. */
static void keep_only_session(sticky_vu *sv)
{
    char sid[128] = "";
    const char *v = hm_cookie_jar_get(&sv->jar, "via_session_id");
    if (v) snprintf(sid, sizeof(sid), "%s", v);
    hm_cookie_jar_free(&sv->jar);
    hm_cookie_jar_init(&sv->jar);
    if (sid[0]) hm_cookie_jar_put(&sv->jar, "via_session_id", sid, sv->run->o->target.host);
}

/* The pool's open: the VU's page load (on c itself in the keepalive
 * variant, whose actions reuse it), the SSE probe (cookie variant), and
 * its action request. Over HTTP/2 the cookie variant is a tab: page, SSE
 * and actions on c's one connection (a balancer sees one connection per
 * tab); legacy's actions take a new connection each (own_conns). */
static int vu_open(void *user, hm_http_conn *c, void **token)
{
    const sticky_pool *sp = user;
    sticky_run *run = sp->run;
    const hm_options *o = run->o;
    sticky_thread *t = &run->threads[sp->thread];
    sticky_vu *sv = hm_calloc(1, sizeof(*sv));
    if (!sv) return -ENOMEM;
    *token = sv;
    sv->run = run;
    sv->thread = sp->thread;
    hm_cookie_jar_init(&sv->jar);
    hm_http_conn *page = c;
    if (run->v != V_KEEPALIVE) {
        hm_http_conn_init_shared(&sv->page, &o->target, NULL, run->v == V_COOKIE ? c->h2 : NULL);
        sv->own_page = true;
        page = &sv->page;
    }
    if (run->v == V_COOKIE && !o->no_cookies) choose_session(sv);
    char why[512];
    int64_t t0 = hm_now_ns();
    int rc = hm_via_load_page(page, &sv->jar, o->route, o->action, t0 + o->timeout_ns, &sv->pg, why,
                              sizeof(why));
    hm_thread_stats_note_conn(&t->st, page); /* its connect: the actions may reuse it */
    count_worker(t, page);
    if (rc < 0) {
        hm_thread_stats_count(&t->st, page->resp.status, page->fail);
        return rc;
    }
    hm_thread_stats_record(&t->st, HM_PHASE_PAGE, (hm_now_ns() - t0) / 1000);
    if (o->no_cookies) keep_only_session(sv);
    sv->cookie = hm_via_cookie_dup(&sv->jar, &o->target, "/");
    if (!sv->cookie) return -ENOMEM;
    if (run->v == V_COOKIE) {
        hm_http_conn sse;
        hm_http_conn_init_shared(&sse, &o->target, NULL, c->h2);
        probe_sse(sv, &sse, sv->pg.ctx, sv->cookie);
        hm_thread_stats_note_conn(&t->st, &sse);
        hm_thread_stats_add_conn(&t->st, &sse);
        hm_http_conn_free(&sse);
    }
    char *body = NULL;
    if (hm_workload_body(o->workload, sv->pg.ctx, o->signals_json, NULL, false, &body) < 0)
        return -ENOMEM;
    sv->req = hm_via_action_request(&o->target, sv->pg.action_url, sv->cookie, body, strlen(body),
                                    o->no_origin ? NULL : o->target.origin, &sv->len);
    hm_free(body);
    if (!sv->req) return -ENOMEM;
    snprintf(sv->where, sizeof(sv->where), "action POST %.40s, %s variant", sv->pg.action_url,
             variant_names[run->v]);
    return 0;
}

/* Every action is the VU's one request; legacy sends each on a new
 * connection. */
static int vu_pick(void *user, hm_pick *p, void **token)
{
    const sticky_pool *sp = user;
    const sticky_vu *sv = *token;
    p->req = sv->req;
    p->len = sv->len;
    p->what = sv->where;
    p->new_conn = sp->run->v == V_LEGACY;
    return HM_PICK_ACTION;
}

/* Which worker answered, when the server says. */
static void vu_result(void *user, hm_thread_stats *st, const hm_http_conn *c, int status,
                      void *token)
{
    const sticky_pool *sp = user;
    (void)st;
    (void)token;
    if (status) count_worker(&sp->run->threads[sp->thread], c);
}

/* The VU's session ends where its page was loaded. */
static void vu_close(void *user, hm_http_conn *c, void *token)
{
    (void)user;
    sticky_vu *sv = token;
    hm_via_close_session(sv->own_page ? &sv->page : c, sv->pg.ctx, sv->cookie,
                         hm_now_ns() + sv->run->o->timeout_ns);
}

static void vu_free(void *user, void *token)
{
    (void)user;
    sticky_vu *sv = token;
    if (!sv) return;
    if (sv->own_page) {
        hm_thread_stats_add_conn(&sv->run->threads[sv->thread].st, &sv->page);
        hm_http_conn_free(&sv->page);
    }
    hm_free(sv->req);
    hm_free(sv->cookie);
    hm_via_page_free(&sv->pg);
    hm_cookie_jar_free(&sv->jar);
    hm_free(sv);
}

/* A thread's VUs: one sender pool, which ends when -n is spent. */
static void vus_driver(void *p)
{
    sticky_pool *sp = p;
    sticky_run *run = sp->run;
    const hm_options *o = run->o;
    hm_sender_pool_cfg cfg = {.o = o,
                              .next_seq = &run->claimed,
                              .t_base = hm_now_ns(),
                              .live = &run->live,
                              .start_err = &run->start_err,
                              .what = "action POST",
                              .open = vu_open,
                              .pick = vu_pick,
                              .req_per_exchange = true,
                              .on_result = vu_result,
                              .keep_headers = true, /* X-Via-Worker */
                              .close = vu_close,
                              .on_end = vu_free,
                              .own_conns = run->v == V_LEGACY,
                              .user = sp};
    int first = 0;
    for (int i = 0; i < sp->thread; i++)
        first += hm_share(o->concurrency, o->threads, i);
    hm_sender_pool_run(&cfg, &run->threads[sp->thread].st, first,
                       hm_share(o->concurrency, o->threads, sp->thread));
    if (atomic_fetch_sub(&run->threads_left, 1) == 1) run->t_end = hm_now_ns();
    hm_free(sp);
}

static void thread_main(hm_loop *loop, int idx, void *arg)
{
    sticky_run *run = arg;
    sticky_pool *sp = hm_alloc(sizeof(*sp));
    int rc = sp ? 0 : -ENOMEM;
    if (sp) *sp = (sticky_pool){run, idx};
    if (rc == 0 && (rc = hm_coro_spawn(loop, vus_driver, sp, NULL)) < 0) hm_free(sp);
    if (rc < 0) {
        int none = 0;
        atomic_compare_exchange_strong(&run->start_err, &none, rc);
        if (atomic_fetch_sub(&run->threads_left, 1) == 1) run->t_end = hm_now_ns();
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
        atomic_store(&run.threads_left, o->threads);
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
        const char *dead = hm_liveness_fatal(&run.live);
        if (dead) r->fatal = dead;
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
