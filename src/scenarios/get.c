/* The get scenario: a plain GET flood over keep-alive connections, like
 * wrk, so hammer's HTTP path can be compared with the peers. Each of the -c
 * connections sends its next request as soon as the previous response is
 * complete, until -n requests in total or -d elapses. -m, -H and --body
 * change the request (as wrk's, oha's and hey's do). Over HTTP/2 each
 * connection carries --streams such senders, as h2load's -m.
 *
 * Each thread's connections are state machines in one array
 * (load/sender_pool.h), driven by the loop's callbacks, so a keep-alive
 * connection holds its socket, parser and TLS state and its deadline, and
 * no stack. Over HTTP/2 the array's records are the --streams stream slots
 * of each connection. */
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

/* A thread's connections could not be started: the run fails, and nobody
 * waits for the workers that never ran. */
static void start_failed(get_run *run, int err, int workers)
{
    int none = 0;
    atomic_compare_exchange_strong(&run->start_err, &none, err);
    if (atomic_fetch_sub(&run->workers_left, workers) == workers) run->t_end = hm_now_ns();
}

typedef struct get_thread {
    get_run *run;
    int thread, first, n; /* first: its first connection's number; n: senders */
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
                              .what = what,
                              .streams = o->http2 ? o->streams : 1};
    hm_sender_pool_run(&cfg, &run->stats[gt->thread], gt->first, gt->n);
    if (atomic_fetch_sub(&run->workers_left, gt->n) == gt->n) run->t_end = hm_now_ns();
    hm_free(gt);
}

static void thread_main(hm_loop *loop, int idx, void *arg)
{
    get_run *run = arg;
    const hm_options *o = run->o;
    int first = 0;
    for (int i = 0; i < idx; i++)
        first += hm_share(o->concurrency, o->threads, i);
    int streams = o->http2 ? o->streams : 1;
    int mine = hm_share(o->concurrency, o->threads, idx) * streams;
    get_thread *gt = hm_alloc(sizeof(*gt));
    int rc = gt ? 0 : -ENOMEM;
    if (gt) *gt = (get_thread){run, idx, first, mine};
    if (rc == 0 && (rc = hm_coro_spawn(loop, pool_driver, gt, NULL)) < 0) hm_free(gt);
    if (rc < 0) start_failed(run, rc, mine);
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
    return hm_run_note_end(r, rc, &run.live, NULL, atomic_load(&run.start_err), "a connection");
}

const hm_scenario_def hm_scenario_get = {
    .name = "get",
    .help = "plain GET flood over keep-alive connections, like wrk (needs --url)",
    .run = get_run_fn,
    .caps = {.needs_url = true, .rate = true, .custom_request = true, .streams = true},
};
