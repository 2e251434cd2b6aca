/* The get scenario: a plain GET flood over keep-alive connections, like
 * wrk, so hammer's HTTP path can be compared with the peers. Each of the -c
 * connections sends its next request as soon as the previous response is
 * complete, until -n requests in total or -d elapses. */
#include "scenarios/scenario.h"

#include <stdio.h>
#include <string.h>

typedef struct get_run {
    const hm_options *o;
    hm_thread_stats *stats;
    char req[8192];
    size_t req_len;
    _Atomic int64_t next_seq;
    int64_t t_start, t_end;
    hm_liveness live;
    atomic_int workers_left;
} get_run;

typedef struct getter {
    get_run *run;
    int thread;
} getter;

static void getter_coro(void *p)
{
    getter *g = p;
    get_run *run = g->run;
    const hm_options *o = run->o;
    hm_thread_stats *st = &run->stats[g->thread];
    hm_http_conn c;
    hm_http_conn_init(&c, &o->target, NULL);
    for (;;) {
        if (atomic_load_explicit(&hm_stop_requested, memory_order_relaxed)) break;
        int64_t seq = atomic_fetch_add(&run->next_seq, 1);
        if (!hm_budget_allows(o, seq, run->t_start)) break;
        int status;
        if (hm_request_scheduled(&c, run->req, run->req_len, true, o->timeout_ns,
                                 hm_intended_ns(o, seq, run->t_start), st, &run->live, &status))
            break;
    }
    hm_thread_stats_add_conn(st, &c);
    hm_http_conn_free(&c);
    if (atomic_fetch_sub(&run->workers_left, 1) == 1) run->t_end = hm_now_ns();
    hm_free(g);
}

static void thread_main(hm_loop *loop, int idx, void *arg)
{
    get_run *run = arg;
    int mine = hm_share(run->o->concurrency, run->o->threads, idx);
    for (int i = 0; i < mine; i++) {
        getter *g = hm_alloc(sizeof(*g));
        *g = (getter){run, idx};
        hm_coro_spawn(loop, getter_coro, g, NULL);
    }
}

static int get_run_fn(const hm_options *o, hm_results *r)
{
    get_run run = {.o = o};
    hm_http_header h[] = {{"Accept", "*/*"}};
    ssize_t len = hm_http_write_request(run.req, sizeof(run.req), "GET",
                                        o->target_path ? o->target_path : "/",
                                        o->target.host_header, h, 1, NULL, 0);
    if (len < 0) {
        r->fatal = "URL too long";
        return (int)len;
    }
    run.req_len = (size_t)len;
    run.stats = hm_calloc((size_t)o->threads, sizeof(*run.stats));
    if (!run.stats) return -ENOMEM;
    for (int i = 0; i < o->threads; i++)
        hm_thread_stats_init(&run.stats[i]);
    atomic_store(&run.workers_left, o->concurrency);
    int rc = hm_scenario_engine_run(o, run.stats, sizeof(*run.stats), thread_main, &run, &run.live,
                                    &run.t_start, &run.t_end);
    for (int i = 0; i < o->threads; i++) {
        hm_thread_stats_merge(&r->total, &run.stats[i]);
        hm_thread_stats_destroy(&run.stats[i]);
    }
    hm_free(run.stats);
    r->wall_seconds = (double)(run.t_end - run.t_start) / 1e9;
    if (atomic_load(&run.live.dead)) r->fatal = HM_TARGET_DEAD_MSG;
    return rc;
}

const hm_scenario_def hm_scenario_get = {
    .name = "get",
    .help = "plain GET flood over keep-alive connections, like wrk (needs --url)",
    .run = get_run_fn,
    .caps = {.needs_url = true, .rate = true},
};
