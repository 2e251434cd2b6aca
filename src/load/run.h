/* run.h — what a run is asked to do (hm_options, filled by the CLI), and
 * what every load model uses to run it: the engine threads, the budget
 * (-n, -d, -R), the liveness watch that stops a run whose target died,
 * the live gauges, and one-off requests from a temporary loop.
 *
 * hm_options and everything it points to are owned by the CLI and outlive
 * the run. */
#ifndef HM_LOAD_RUN_H
#define HM_LOAD_RUN_H

#include "engine/engine.h"
#include "hammer/scenario.h"
#include "load/workload.h"
#include "proto/http_client.h"
#include "stats/results.h"

#include <stdatomic.h>

#define HM_MAX_REQUEST_HEADERS 32 /* -H, at most */

typedef struct hm_options {
    const char *scenario;
    int concurrency;     /* -c: connections (hammer mode: actions in flight) */
    int threads;         /* -t */
    int64_t actions;     /* -n: actions or requests in total; 0 with a duration */
    int64_t duration_ns; /* -d: run for this long instead of -n */
    double rate;         /* -R: open-loop actions (requests) per second over all; 0 = closed */
    int64_t timeout_ns;  /* --timeout: per request */
    int observers;       /* --observers */
    hm_backend_kind backend;
    const char *url; /* --url, or the embedded bench_app's */
    bool embedded;   /* the target is the embedded bench_app */
    const char *route, *action, *signal;
    const char *signals_json; /* --signals: extra JSON fields of each action body */
    bool no_origin;
    const char *json_path;
    bool quiet;
    bool no_cookies; /* sticky: a VU keeps no cookies (balancers cannot stick) */
    bool no_reload;  /* --no-reload: a lost context is counted, the page not reloaded */
    bool browser;    /* --mode browser: -c virtual users, one tab each */
    int64_t think_min_ns, think_max_ns; /* --think: pause between a VU's actions */
    const hm_workload *workload;
    const char *flow_file;          /* hammer flow FILE.yaml (flow/flow.h) */
    const hammer_scenario *plugin;  /* a plugin's scenario, or NULL */
    const char *const *plugin_opts; /* --opt KEY=VALUE, for plugin setup */
    int n_plugin_opts;
    hm_live_gauges *gauges;   /* the run's live-line gauges, or NULL */
    int64_t start_at_ns;      /* --start-at: CLOCK_REALTIME ns the load waits for; 0: none */
    int64_t *load_started_ns; /* where the run notes (CLOCK_REALTIME ns) when its load
                               * began, if it is 0; NULL: nowhere */
    /* -m, -H and --body (scenarios with caps.custom_request): NULL, 0 when
     * not given. Header lines are "Name: value". */
    const char *method;
    const char *const *headers;
    int n_headers;
    const char *body;
    size_t body_len;
    bool http2;  /* --http2: h2 (https) or h2c with prior knowledge (http) */
    int streams; /* --streams: concurrent streams per HTTP/2 connection (1) */

    /* Resolved by the CLI. */
    hm_http_target target;
    char *target_path; /* request target of --url (path?query) */
} hm_options;

/* Set by SIGINT/SIGTERM: stop sending, finish what is in flight, report. */
extern atomic_bool hm_stop_requested;

/* Notices a target that stopped answering: every sender reports each
 * outcome; the run stops instead of spinning through -n failures (or,
 * for browser VUs whose pages never load, forever) once nothing has
 * succeeded for `timeout_ns` while connects fail, or for twice that while
 * requests time out without a byte back (a hung server: the kernel's
 * backlog still completes connects, and nothing comes back). Any answer,
 * whatever its status, is a success here. */
typedef struct hm_liveness {
    _Atomic int64_t last_ok_ns;
    atomic_bool dead;
    _Atomic int dead_kind; /* hm_fail_kind that ended it: CONNECT or TIMEOUT */
} hm_liveness;

static inline void hm_liveness_start(hm_liveness *l)
{
    atomic_store(&l->last_ok_ns, hm_now_ns());
    atomic_store(&l->dead, false);
    atomic_store(&l->dead_kind, HM_FAIL_NONE);
}

/* What an outcome on c tells the watch: a failed connect, a timeout with
 * not a byte received (a server that answers slowly is no hung one), or
 * neither (HM_FAIL_OTHER). */
static inline hm_fail_kind hm_liveness_kind(const hm_http_conn *c)
{
    if (c->fail == HM_FAIL_CONNECT) return HM_FAIL_CONNECT;
    if (c->fail == HM_FAIL_TIMEOUT && c->resp_bytes == 0) return HM_FAIL_TIMEOUT;
    return HM_FAIL_OTHER;
}

/* Records one outcome (fail: hm_liveness_kind's); returns true when the
 * run should stop. */
static inline bool hm_liveness_report(hm_liveness *l, int64_t now, bool ok, hm_fail_kind fail,
                                      int64_t timeout_ns)
{
    if (ok) {
        atomic_store_explicit(&l->last_ok_ns, now, memory_order_relaxed);
        return false;
    }
    int64_t quiet = now - atomic_load_explicit(&l->last_ok_ns, memory_order_relaxed);
    if ((fail == HM_FAIL_CONNECT && quiet > timeout_ns) ||
        (fail == HM_FAIL_TIMEOUT && quiet > 2 * timeout_ns)) {
        atomic_store(&l->dead_kind, (int)fail);
        atomic_store(&l->dead, true);
    }
    return atomic_load_explicit(&l->dead, memory_order_relaxed);
}

/* Moves the run's live-line gauges (nothing when the run keeps none). */
static inline void hm_gauge_sse_open(const hm_options *o, int delta)
{
    if (!o->gauges) return;
    atomic_fetch_add(&o->gauges->sse_open, delta);
    if (delta > 0) atomic_fetch_add(&o->gauges->sse_opened, delta);
}
static inline void hm_gauge_reconnect(const hm_options *o)
{
    if (o->gauges) atomic_fetch_add(&o->gauges->reconnects, 1);
}
/* A page was reloaded after its context was lost. */
static inline void hm_gauge_reload(const hm_options *o)
{
    if (o->gauges) atomic_fetch_add(&o->gauges->reloads, 1);
}
/* A virtual user (or sender) started (+1) or finished (-1). */
static inline void hm_gauge_vus(const hm_options *o, int delta)
{
    if (o->gauges) atomic_fetch_add(&o->gauges->vus, delta);
}

#define HM_TARGET_DEAD_MSG                                                                         \
    "target stopped answering: connects failing and no success within --timeout"
#define HM_TARGET_HUNG_MSG                                                                         \
    "target stopped answering: connections open but no answer at all within twice --timeout"
/* The run's fatal line when the watch stopped it, else NULL. */
static inline const char *hm_liveness_fatal(const hm_liveness *l)
{
    if (!atomic_load(&l->dead)) return NULL;
    return atomic_load(&l->dead_kind) == HM_FAIL_TIMEOUT ? HM_TARGET_HUNG_MSG : HM_TARGET_DEAD_MSG;
}

/* True while the run may start another action: the claimed sequence number
 * is below -n (when -n is set) and -d has not elapsed since start_ns (when
 * -d is set). */
static inline bool hm_budget_allows(const hm_options *o, int64_t seq, int64_t start_ns)
{
    if (o->actions && seq >= o->actions) return false;
    if (o->duration_ns && hm_now_ns() - start_ns >= o->duration_ns) return false;
    return true;
}

/* With -R, the intended send time of action number seq (open loop: the
 * schedule does not wait for responses); 0 without -R. */
static inline int64_t hm_intended_ns(const hm_options *o, int64_t seq, int64_t start_ns)
{
    return o->rate > 0 ? start_ns + (int64_t)((double)seq * 1e9 / o->rate) : 0;
}

/* Runs `main` on o->threads engine threads, with the interval reporter
 * attached to the per-thread stats (o->threads records, stride bytes
 * apart). First waits for o->start_at_ns if it is still ahead (SIGINT or
 * SIGTERM end the wait; the threads then see hm_stop_requested) and notes
 * the wall-clock start in *o->load_started_ns. Sets *t_start and starts the
 * liveness watch just before; sets *t_end to the end time unless a thread
 * already did. */
int hm_scenario_engine_run(const hm_options *o, void *stats, size_t stride, hm_thread_main main,
                           void *arg, hm_liveness *live, int64_t *t_start, int64_t *t_end);

/* How a load model's run ended, said once for every model: the target
 * died (live->dead), the input does not fit the app (usage_why, a usage
 * error; NULL: it fits), or `what` could not be started (start_err, a
 * negative errno; 0: all started). The last that applies is r->fatal.
 * Returns rc, or start_err when rc was 0. */
int hm_run_note_end(hm_results *r, int rc, const hm_liveness *live, const char *usage_why,
                    int start_err, const char *what);

/* Runs fn(arg) as the only coroutine of a temporary loop on the calling
 * thread (for set-up and tear-down steps; Ctrl-C ends them at once).
 * Returns the loop's error. */
int hm_run_on_temp_loop(hm_backend_kind backend, hm_coro_fn fn, void *arg);

/* One GET of path on target from a temporary loop (reachability and health
 * checks; the body is counted, not kept). 0 with *status set when a
 * response arrived, whatever its status, or when the server sent bytes
 * that were no good response (*status 0, the reason in why); else a
 * negative errno with the reason in why. */
int hm_probe_get(hm_backend_kind backend, const hm_http_target *target, const char *path,
                 int64_t timeout_ns, int *status, char *why, size_t whylen);

/* Splits n items over `parts` parts: how many part i gets. */
static inline int hm_share(int n, int parts, int i)
{
    return n / parts + (i < n % parts ? 1 : 0);
}

#endif
