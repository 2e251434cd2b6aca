/* The engine threads of a run, its start time, one-off requests from a
 * temporary loop (run.h). */
#include "load/run.h"

#include "load/request.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

atomic_bool hm_stop_requested;

static int64_t wall_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sleeps until the wall clock reads start_ns (--start-at: shards on several
 * machines start their load together). SIGINT and SIGTERM stay blocked
 * except inside ppoll, so one arriving between the check and the sleep
 * still ends the sleep. */
static void wait_for_start(int64_t start_ns)
{
    sigset_t stops, old;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stops, &old);
    for (;;) {
        int64_t left = start_ns - wall_now_ns();
        if (left <= 0 || atomic_load(&hm_stop_requested)) break;
        /* Re-read the wall clock now and then: NTP may step it meanwhile. */
        if (left > 10 * INT64_C(1000000000)) left = 10 * INT64_C(1000000000);
        struct timespec rel = {.tv_sec = left / 1000000000, .tv_nsec = left % 1000000000};
        ppoll(NULL, 0, &rel, &old);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int hm_scenario_engine_run(const hm_options *o, void *stats, size_t stride, hm_thread_main main,
                           void *arg, hm_liveness *live, int64_t *t_start, int64_t *t_end)
{
    hm_loop_options lo = {.backend = o->backend};
    if (o->start_at_ns) wait_for_start(o->start_at_ns);
    if (o->load_started_ns && !*o->load_started_ns) *o->load_started_ns = wall_now_ns();
    *t_start = hm_now_ns();
    hm_liveness_start(live);
    hm_progress_attach(stats, o->threads, stride);
    int rc = hm_engine_run(o->threads, &lo, main, arg);
    hm_progress_detach();
    if (!*t_end) *t_end = hm_now_ns();
    return rc;
}

int hm_run_note_end(hm_results *r, int rc, const hm_liveness *live, const char *usage_why,
                    int start_err, const char *what)
{
    const char *dead = hm_liveness_fatal(live);
    if (dead) r->fatal = dead;
    if (usage_why) {
        snprintf(r->fatal_buf, sizeof(r->fatal_buf), "%s", usage_why);
        r->fatal = r->fatal_buf;
        r->fatal_usage = true;
    }
    if (start_err) {
        snprintf(r->fatal_buf, sizeof(r->fatal_buf), "cannot start %s: %s", what,
                 hm_strerror(start_err));
        r->fatal = r->fatal_buf;
        if (!rc) rc = start_err;
    }
    return rc;
}

int hm_run_on_temp_loop(hm_backend_kind backend, hm_coro_fn fn, void *arg)
{
    /* A set-up or tear-down step has nothing worth finishing after Ctrl-C. */
    hm_loop_options lo = {.backend = backend, .stop_aborts = true};
    hm_loop *loop;
    int rc = hm_loop_create(&loop, &lo);
    if (rc < 0) return rc;
    rc = hm_coro_spawn(loop, fn, arg, NULL);
    if (rc == 0) rc = hm_loop_run(loop);
    hm_loop_destroy(loop);
    return rc;
}

typedef struct probe {
    const hm_http_target *target;
    const char *path;
    int64_t timeout_ns;
    int status, err;
    bool answered_badly;
    char why[300];
} probe;

static void probe_coro(void *p)
{
    probe *pr = p;
    hm_http_conn c;
    hm_http_conn_init(&c, pr->target, NULL);
    char req[1024];
    ssize_t len = hm_http_write_request(req, sizeof(req), "GET", pr->path, pr->target->host_header,
                                        NULL, 0, NULL, 0);
    /* Whatever the body, only the answer matters: count it, keep nothing. */
    hm_http_xopts xo = {
        .idempotent = true, .discard_body = true, .deadline = hm_now_ns() + pr->timeout_ns};
    pr->err = len < 0 ? (int)len : hm_http_conn_exchange(&c, req, (size_t)len, &xo);
    /* Reachable means something answered: a server that answers badly
     * (endless 1xx, an endless body, garbage) is for the run to report,
     * with its errors counted and explained, not "unreachable". */
    if (pr->err < 0 && pr->err != -ECANCELED && c.resp_bytes > 0) {
        pr->answered_badly = true;
        snprintf(pr->why, sizeof(pr->why), "%s", hm_http_conn_fail_reason(&c, pr->err));
        pr->err = 0;
    }
    pr->status = pr->err == 0 ? c.resp.status : 0;
    if (pr->err < 0)
        snprintf(pr->why, sizeof(pr->why), "%s", hm_http_conn_fail_reason(&c, pr->err));
    hm_http_conn_free(&c);
}

int hm_probe_get(hm_backend_kind backend, const hm_http_target *target, const char *path,
                 int64_t timeout_ns, int *status, char *why, size_t whylen)
{
    probe pr = {.target = target, .path = path, .timeout_ns = timeout_ns};
    int rc = hm_run_on_temp_loop(backend, probe_coro, &pr);
    if (rc < 0) {
        snprintf(why, whylen, "cannot create an event loop: %s", hm_strerror(rc));
        return rc;
    }
    if (pr.err < 0 || pr.answered_badly) snprintf(why, whylen, "%s", pr.why);
    *status = pr.status;
    return pr.err;
}
