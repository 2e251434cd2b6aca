/* The get scenario: a plain GET flood over keep-alive connections, like
 * wrk, so hammer's HTTP path can be compared with the peers. Each of the -c
 * connections sends its next request as soon as the previous response is
 * complete, until -n requests in total or -d elapses. -m, -H and --body
 * change the request (as wrk's, oha's and hey's do). Over HTTP/2 each
 * connection carries --streams such senders, as h2load's -m.
 *
 * HTTP/1.1, plain or over TLS: each thread's connections are state
 * machines in one array (load/sender_pool.h), driven by one coroutine per thread, so a
 * keep-alive connection holds its socket, parser and TLS state and its
 * deadline, and no stack.
 * HTTP/2: a pump coroutine per connection drives its streams (-R: a
 * coroutine per stream). */
#include "proto/h2_client.h"
#include "load/sender_pool.h"
#include "scenarios/scenario.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct get_run {
    const hm_options *o;
    hm_thread_stats *stats;
    char *req;
    size_t req_len;
    bool idempotent, head; /* what the method allows and implies */
    _Atomic int64_t next_seq;
    int64_t t_start, t_end;
    hm_liveness live;
    atomic_int workers_left;
    _Atomic int start_err; /* a connection could not be started: the run fails */
} get_run;

/* One connection of the -c: over HTTP/2 the one its getters' streams
 * share (freed by the last of them); over HTTP/1.1 each getter's own. */
typedef struct get_conn {
    hm_h2_conn *h2;
    int users;
} get_conn;

typedef struct getter {
    get_run *run;
    int thread;
    int index; /* connection number over all threads */
    get_conn *gc;
} getter;

/* The run's one request as connection `index` sends it; where (the
 * caller's, cap bytes) names it in failure examples. A flood keeps no
 * bodies: it counts their bytes (memory stays flat whatever the server
 * sends). */
static hm_request flood_request(const get_run *run, int index, char *where, size_t cap)
{
    const hm_options *o = run->o;
    snprintf(where, cap, "%s %.60s, connection %d", o->method ? o->method : "GET",
             o->target_path ? o->target_path : "/", index);
    return (hm_request){.req = run->req,
                        .len = run->req_len,
                        .idempotent = run->idempotent,
                        .head = run->head,
                        .discard_body = true,
                        .timeout_ns = o->timeout_ns,
                        .where = where};
}

static void getter_coro(void *p)
{
    getter *g = p;
    get_run *run = g->run;
    const hm_options *o = run->o;
    hm_thread_stats *st = &run->stats[g->thread];
    hm_http_conn c;
    hm_http_conn_init_shared(&c, &o->target, NULL, g->gc->h2);
    hm_gauge_vus(o, 1);
    char where[96];
    hm_request rq = flood_request(run, g->index, where, sizeof(where));
    rq.req_outlives = true;
    rq.retry_until_ns = o->duration_ns ? run->t_start + o->duration_ns : 0;
    for (;;) {
        if (atomic_load_explicit(&hm_stop_requested, memory_order_relaxed)) break;
        if (atomic_load_explicit(&run->start_err, memory_order_relaxed)) break;
        int64_t seq = atomic_fetch_add(&run->next_seq, 1);
        if (!hm_budget_allows(o, seq, run->t_start)) break;
        int status;
        rq.intended_ns = hm_intended_ns(o, seq, run->t_start);
        if (hm_request_send(&c, &rq, st, &run->live, &status)) break;
    }
    hm_thread_stats_add_conn(st, &c);
    hm_gauge_vus(o, -1);
    hm_http_conn_free(&c);
    if (--g->gc->users == 0) {
        hm_h2_conn_free(g->gc->h2);
        hm_free(g->gc);
    }
    if (atomic_fetch_sub(&run->workers_left, 1) == 1) run->t_end = hm_now_ns();
    hm_free(g);
}

/* Starts c's next request unless the run is over (then true); `again`:
 * the last one, whose connect failed, instead of a new one. A request that
 * cannot start (no connection) is accounted for at once: a refused connect
 * is tried again after the connection's backoff, anything else counts and
 * the next one is tried. */
static bool pump_send(get_run *run, const hm_request *rq, hm_thread_stats *st, hm_http_conn *c,
                      int64_t *t0, int *in_flight, hm_backoff *backoff, bool again)
{
    const hm_options *o = run->o;
    for (;;) {
        if (atomic_load_explicit(&hm_stop_requested, memory_order_relaxed)) return true;
        if (atomic_load_explicit(&run->start_err, memory_order_relaxed)) return true;
        int64_t seq = again ? 0 : atomic_fetch_add(&run->next_seq, 1);
        if (!hm_budget_allows(o, seq, run->t_start)) return true;
        const char *req = *t0 ? NULL : rq->req; /* after the first: the same again */
        *t0 = hm_now_ns();
        /* get counts statuses and body bytes: no field is of use, unless
         * the body is to be decoded (--compressed: Content-Encoding). */
        hm_http_xopts xo = {.idempotent = rq->idempotent,
                            .head = rq->head,
                            .status_only = !o->target.accept_encoding,
                            .discard_body = true,
                            .deadline = *t0 + rq->timeout_ns,
                            .span_ns = rq->timeout_ns};
        hm_thread_stats_in_flight(st, 1);
        int rc = hm_h2_start(c, req, rq->len, &xo);
        if (rc == 0) {
            (*in_flight)++;
            return false;
        }
        int status;
        hm_thread_stats_in_flight(st, -1);
        if (hm_request_account(c, rq, rc, *t0, hm_now_ns(), st, &run->live, &status)) return true;
        again = hm_request_unsent(c, status);
        if (again && hm_coro_sleep(hm_backoff_next(backoff)) == -ECANCELED) return true;
    }
}

/* Over HTTP/2 without -R, one coroutine drives a connection's --streams
 * streams (hm_h2_start, hm_h2_wait_done, hm_h2_finish), as h2load drives
 * them from its event loop: no coroutine per stream, and no switch per
 * response, which cost hammer more CPU per request than h2load (stacks
 * and waits touched per request: docs/PERFORMANCE.md, "HTTP/2"). */
static void pump_coro(void *p)
{
    getter *g = p;
    get_run *run = g->run;
    const hm_options *o = run->o;
    hm_thread_stats *st = &run->stats[g->thread];
    hm_h2_conn *h2 = g->gc->h2;
    int n = o->streams;
    hm_http_conn *cs = hm_calloc((size_t)n, sizeof(*cs));
    int64_t *t0 = hm_calloc((size_t)n, sizeof(*t0));
    char where[96];
    hm_request rq = flood_request(run, g->index, where, sizeof(where));
    int in_flight = 0;
    hm_backoff backoff = HM_BACKOFF_CONNECT; /* the connection's refused connects in a row */
    if (cs && t0) {
        for (int k = 0; k < n; k++)
            hm_http_conn_init_shared(&cs[k], &o->target, NULL, h2);
        hm_gauge_vus(o, n);
        bool stop = false;
        for (int k = 0; k < n && !stop; k++)
            stop = pump_send(run, &rq, st, &cs[k], &t0[k], &in_flight, &backoff, false);
        while (in_flight > 0) {
            hm_http_conn *c;
            if (hm_h2_wait_done(h2, &c) < 0) break; /* aborted: the rest is not counted */
            int rc = hm_h2_finish(c);
            if (rc == -EINPROGRESS) continue; /* sent again */
            in_flight--;
            int status;
            size_t k = (size_t)(c - cs);
            hm_thread_stats_in_flight(st, -1);
            if (hm_request_account(c, &rq, rc, t0[k], hm_now_ns(), st, &run->live, &status))
                stop = true;
            bool again = hm_request_unsent(c, status);
            if (!again) hm_backoff_reset(&backoff);
            if (!stop && again && hm_coro_sleep(hm_backoff_next(&backoff)) == -ECANCELED)
                stop = true;
            if (!stop) stop = pump_send(run, &rq, st, c, &t0[k], &in_flight, &backoff, again);
        }
        hm_thread_stats_in_flight(st, -in_flight);
        for (int k = 0; k < n; k++) {
            hm_thread_stats_add_conn(st, &cs[k]);
            hm_http_conn_free(&cs[k]);
        }
        hm_gauge_vus(o, -n);
    }
    hm_free(cs);
    hm_free(t0);
    hm_h2_conn_free(h2);
    hm_free(g->gc);
    if (atomic_fetch_sub(&run->workers_left, n) == n) run->t_end = hm_now_ns();
    hm_free(g);
}

/* A getter could not be started: the run fails, and nobody waits for the
 * workers that never ran. */
static void start_failed(get_run *run, int err, int workers)
{
    int none = 0;
    atomic_compare_exchange_strong(&run->start_err, &none, err);
    if (atomic_fetch_sub(&run->workers_left, workers) == workers) run->t_end = hm_now_ns();
}

typedef struct get_thread {
    get_run *run;
    int thread, first, n;
} get_thread;

/* One thread's connections, without a coroutine each. */
static void pool_driver(void *p)
{
    get_thread *gt = p;
    get_run *run = gt->run;
    const hm_options *o = run->o;
    char what[80];
    snprintf(what, sizeof(what), "%s %.60s", o->method ? o->method : "GET",
             o->target_path ? o->target_path : "/");
    /* A flood keeps no bodies: it counts their bytes (memory stays flat
     * whatever the server sends). */
    hm_sender_pool_cfg cfg = {.o = o,
                              .req = run->req,
                              .len = run->req_len,
                              .idempotent = run->idempotent,
                              .head = run->head,
                              .discard_body = true,
                              .next_seq = &run->next_seq,
                              .t_base = run->t_start,
                              .live = &run->live,
                              .start_err = &run->start_err,
                              .what = what};
    hm_sender_pool_run(&cfg, &run->stats[gt->thread], gt->first, gt->n);
    if (atomic_fetch_sub(&run->workers_left, gt->n) == gt->n) run->t_end = hm_now_ns();
    hm_free(gt);
}

static void thread_main(hm_loop *loop, int idx, void *arg)
{
    get_run *run = arg;
    const hm_options *o = run->o;
    if (!o->http2) {
        get_thread *gt = hm_alloc(sizeof(*gt));
        int first = 0;
        for (int i = 0; i < idx; i++)
            first += hm_share(o->concurrency, o->threads, i);
        int mine = hm_share(o->concurrency, o->threads, idx);
        int rc = gt ? 0 : -ENOMEM;
        if (gt) *gt = (get_thread){run, idx, first, mine};
        if (rc == 0 && (rc = hm_coro_spawn(loop, pool_driver, gt, NULL)) < 0) hm_free(gt);
        if (rc < 0) start_failed(run, rc, mine);
        return;
    }
    int first = 0;
    for (int i = 0; i < idx; i++)
        first += hm_share(o->concurrency, o->threads, i);
    int mine = hm_share(o->concurrency, o->threads, idx);
    int streams = o->http2 ? o->streams : 1;
    for (int i = 0; i < mine; i++) {
        get_conn *gc = hm_calloc(1, sizeof(*gc));
        if (!gc) {
            start_failed(run, -ENOMEM, (mine - i) * streams);
            break;
        }
        gc->users = streams;
        if (o->http2) hm_h2_conn_create(&gc->h2, &o->target); /* NULL: each its own */
        if (gc->h2 && o->rate <= 0) {
            getter *g = hm_alloc(sizeof(*g));
            int rc = g ? 0 : -ENOMEM;
            if (g) *g = (getter){run, idx, first + i, gc};
            if (rc == 0 && (rc = hm_coro_spawn(loop, pump_coro, g, NULL)) < 0) hm_free(g);
            if (rc < 0) {
                hm_h2_conn_free(gc->h2);
                hm_free(gc);
                start_failed(run, rc, streams);
            }
            continue;
        }
        for (int k = 0; k < streams; k++) {
            getter *g = hm_alloc(sizeof(*g));
            int rc = g ? 0 : -ENOMEM;
            if (g) *g = (getter){run, idx, first + i, gc};
            if (rc == 0 && (rc = hm_coro_spawn(loop, getter_coro, g, NULL)) < 0) hm_free(g);
            if (rc < 0) {
                start_failed(run, rc, 1);
                if (--gc->users == 0) {
                    hm_h2_conn_free(gc->h2);
                    hm_free(gc);
                }
            }
        }
    }
}

/* Is the header line h ("Name: value") named name? */
static bool header_is(const char *h, const char *name)
{
    size_t n = strlen(name);
    return !strncasecmp(h, name, n) && h[n] == ':';
}

/* The request every connection sends: -m (GET), the URL's path, -H (with
 * Accept and Host added unless given), --body. */
static int build_request(get_run *run, const hm_options *o)
{
    const char *method = o->method ? o->method : "GET";
    hm_http_header h[HM_MAX_REQUEST_HEADERS + 2];
    size_t n = 0;
    bool accept = false, host = false, coding = false;
    for (int i = 0; i < o->n_headers && n < HM_MAX_REQUEST_HEADERS; i++) {
        const char *line = o->headers[i], *colon = strchr(line, ':');
        if (!colon) return -EINVAL;
        /* name and value as separate strings, kept in the request's own buffer */
        char *name = hm_strndup(line, (size_t)(colon - line));
        const char *value = colon + 1;
        while (*value == ' ' || *value == '\t')
            value++;
        h[n++] = (hm_http_header){name, value};
        accept = accept || header_is(line, "Accept");
        host = host || header_is(line, "Host");
        coding = coding || header_is(line, "Accept-Encoding");
    }
    if (!accept) h[n++] = (hm_http_header){hm_strdup("Accept"), "*/*"};
    if (!coding && o->target.accept_encoding)
        h[n++] = (hm_http_header){hm_strdup("Accept-Encoding"), o->target.accept_encoding};
    size_t cap = 8192 + o->body_len;
    for (size_t i = 0; i < n; i++)
        cap += strlen(h[i].name) + strlen(h[i].value) + 4;
    run->req = hm_alloc(cap);
    ssize_t len =
        run->req
            ? hm_http_write_request(run->req, cap, method, o->target_path ? o->target_path : "/",
                                    host ? NULL : o->target.host_header, h, n, o->body, o->body_len)
            : -ENOMEM;
    for (size_t i = 0; i < n; i++)
        hm_free((char *)h[i].name);
    if (len < 0) return (int)len;
    run->req_len = (size_t)len;
    /* RFC 9110 9.2.2: these may be repeated without harm. */
    const char *idem[] = {"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"};
    for (size_t i = 0; i < HM_ARRAY_LEN(idem); i++)
        if (!strcmp(method, idem[i])) run->idempotent = true;
    run->head = !strcmp(method, "HEAD");
    return 0;
}

static int get_run_fn(const hm_options *o, hm_results *r)
{
    get_run run = {.o = o};
    int brc = build_request(&run, o);
    if (brc < 0) {
        hm_free(run.req);
        r->fatal = brc == -ENOMEM ? "out of memory" : "the request cannot be written (URL or -H)";
        return brc;
    }
    run.stats = hm_calloc((size_t)o->threads, sizeof(*run.stats));
    if (!run.stats) return -ENOMEM;
    for (int i = 0; i < o->threads; i++)
        hm_thread_stats_init(&run.stats[i]);
    atomic_store(&run.workers_left, o->concurrency * (o->http2 ? o->streams : 1));
    int rc = hm_scenario_engine_run(o, run.stats, sizeof(*run.stats), thread_main, &run, &run.live,
                                    &run.t_start, &run.t_end);
    for (int i = 0; i < o->threads; i++) {
        hm_thread_stats_merge(&r->total, &run.stats[i]);
        hm_thread_stats_destroy(&run.stats[i]);
    }
    hm_free(run.stats);
    hm_free(run.req);
    r->wall_seconds = (double)(run.t_end - run.t_start) / 1e9;
    if (atomic_load(&run.live.dead)) r->fatal = HM_TARGET_DEAD_MSG;
    if (atomic_load(&run.start_err)) {
        snprintf(r->fatal_buf, sizeof(r->fatal_buf), "cannot start a connection: %s",
                 hm_strerror(atomic_load(&run.start_err)));
        r->fatal = r->fatal_buf;
        if (!rc) rc = atomic_load(&run.start_err);
    }
    return rc;
}

const hm_scenario_def hm_scenario_get = {
    .name = "get",
    .help = "plain GET flood over keep-alive connections, like wrk (needs --url)",
    .run = get_run_fn,
    .caps = {.needs_url = true, .rate = true, .custom_request = true, .streams = true},
};
