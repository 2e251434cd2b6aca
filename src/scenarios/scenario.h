/* scenario.h — how the CLI hands a run to a scenario, and what the built-in
 * scenarios share.
 *
 * The CLI parses options into hm_options, resolves the target and starts
 * the embedded bench_app when there is no --url. A scenario's run function
 * drives the engine threads and fills hm_results; the CLI reports them.
 * hm_options and everything it points to are owned by the CLI and outlive
 * the run. */
#ifndef HM_SCENARIOS_SCENARIO_H
#define HM_SCENARIOS_SCENARIO_H

#include "engine/engine.h"
#include "hammer/scenario.h"
#include "proto/http_client.h"
#include "scenarios/workload.h"
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
    const char *flow_file;          /* hammer flow FILE.yaml (scenarios/flow.h) */
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

typedef int (*hm_scenario_run_fn)(const hm_options *o, hm_results *r);

/* What a scenario can be combined with. The CLI checks a run's options
 * against these before it starts anything, so no scenario name appears in
 * the CLI. */
typedef struct hm_scenario_caps {
    bool needs_url;          /* nothing of the embedded bench_app to drive (get) */
    bool browser;            /* --mode browser is accepted */
    bool browser_only;       /* runs in the browser model only (plugins) */
    bool rate;               /* -R: an open-loop schedule (in the hammer model) */
    const char *no_duration; /* why -d is refused ("compares variants by -n"), or NULL */
    bool is_workload;        /* may be named by --workload */
    bool takes_workload;     /* --workload NAME picks its page, action and check */
    int app_workers;         /* the embedded bench_app's workers (0: one); more than one
                              * dispatch by session, as php-via's dispatch_func */
    bool flow_file;          /* reads its steps from a flow file (hammer flow FILE) */
    bool custom_request;     /* takes -m, -H and --body (get) */
    bool streams;            /* --streams: several HTTP/2 streams per connection (in the
                              * hammer model; a browser VU has its own connection) */
} hm_scenario_caps;

typedef struct hm_scenario_def {
    const char *name;
    const char *help;            /* one line */
    const char *route;           /* default --route, NULL when not a php-via scenario */
    const char *action;          /* default --action */
    const char *signal;          /* default --signal */
    const hm_workload *workload; /* php-via scenarios: what is checked */
    const char *check_name;      /* one line for the summary */
    hm_scenario_run_fn run;      /* its own run (get, sticky); NULL: the two php-via load models */
    /* Checks the scenario's input (a flow file) before the target is
     * reached: 0, or a negative code and why (a usage error). NULL: none. */
    int (*prepare)(const hm_options *o, char *why, size_t whylen);
    const hammer_scenario *plugin; /* loaded with --plugin (browser model) */
    hm_scenario_caps caps;
} hm_scenario_def;

/* The two load models of php-via scenarios. */
int hm_via_hammer_run(const hm_options *o, hm_results *r);
int hm_via_browser_run(const hm_options *o, hm_results *r);
/* The sticky scenario: every variant in turn (src/scenarios/sticky.c). */
int hm_sticky_run(const hm_options *o, hm_results *r);

/* Runs one pass of scenario sc: its own run function, or the load model
 * o->browser picks (which it records in r->mode). */
int hm_scenario_run(const hm_scenario_def *sc, const hm_options *o, hm_results *r);

/* Built-in scenarios, NULL-terminated. */
extern const hm_scenario_def *const hm_builtin_scenarios[];
const hm_scenario_def *hm_scenario_find(const char *name);
/* Writes the names of the scenarios (built-in, then plugins) whose
 * capability `pick` is true, joined by sep, into buf: "counter|cpu|io". */
void hm_scenario_names(bool (*pick)(const hm_scenario_caps *c), const char *sep, char *buf,
                       size_t len);
/* The scenario whose name `name` is a slip of ("countr": "counter"), or
 * NULL. */
const char *hm_scenario_nearest(const char *name);

/* What `hammer scenario NAME --help` prints: the scenario's page, action,
 * signal, check, load models and the options that apply to it. */
void hm_scenario_help(FILE *f, const hm_scenario_def *sc);

/* Loads a plugin's scenarios (see include/hammer/scenario.h); they are
 * found by hm_scenario_find and listed by hm_scenario_list. */
int hm_plugin_load(const char *path, char *why, size_t whylen);
/* Prints "name  help" for built-in and loaded scenarios. */
void hm_scenario_list(FILE *f);

/* Set by SIGINT/SIGTERM: stop sending, finish what is in flight, report. */
extern atomic_bool hm_stop_requested;

/* Notices a target that stopped answering: every sender reports each
 * outcome; once nothing has succeeded for `timeout_ns` and connects fail,
 * the run stops instead of spinning through -n failures. */
typedef struct hm_liveness {
    _Atomic int64_t last_ok_ns;
    atomic_bool dead;
} hm_liveness;

static inline void hm_liveness_start(hm_liveness *l)
{
    atomic_store(&l->last_ok_ns, hm_now_ns());
    atomic_store(&l->dead, false);
}

/* Records one outcome; returns true when the run should stop. */
static inline bool hm_liveness_report(hm_liveness *l, int64_t now, bool ok, hm_fail_kind fail,
                                      int64_t timeout_ns)
{
    if (ok) {
        atomic_store_explicit(&l->last_ok_ns, now, memory_order_relaxed);
        return false;
    }
    if (fail == HM_FAIL_CONNECT &&
        now - atomic_load_explicit(&l->last_ok_ns, memory_order_relaxed) > timeout_ns)
        atomic_store(&l->dead, true);
    return atomic_load_explicit(&l->dead, memory_order_relaxed);
}

/* The wait before the next try of what the server refused, doubling from
 * first_ns to cap_ns; hm_backoff_reset after a success. */
typedef struct hm_backoff {
    int64_t first_ns, cap_ns, next_ns;
} hm_backoff;
/* A refused (or timed out) connect: 10 ms doubling to 250 ms, so a
 * restarted server is found within a quarter second and a dead one costs
 * a connection a few attempts a second, not a hundred. */
#define HM_BACKOFF_CONNECT ((hm_backoff){10000000LL, 250000000LL, 10000000LL})
/* A page reload or an SSE reconnect while the server is away: 100 ms
 * doubling to 2 s, as Datastar's retry. */
#define HM_BACKOFF_RELOAD ((hm_backoff){100000000LL, 2000000000LL, 100000000LL})

/* The wait to sit out now; the next one doubles (up to the cap). */
static inline int64_t hm_backoff_next(hm_backoff *b)
{
    int64_t d = b->next_ns;
    b->next_ns = d > b->cap_ns / 2 ? b->cap_ns : d * 2;
    return d;
}
static inline void hm_backoff_reset(hm_backoff *b)
{
    b->next_ns = b->first_ns;
}

/* One request as a scenario sends it (hm_request_send). */
typedef struct hm_request {
    const char *req; /* the serialized request */
    size_t len;
    bool idempotent;     /* GET: may be re-sent (see http_client.h) */
    bool head;           /* a HEAD request: the response has no body */
    bool discard_body;   /* count the body's bytes, keep none (get, probes) */
    bool req_outlives;   /* req stays valid until the engine threads end (one
                          * serialized for the run): sent without waiting */
    int64_t timeout_ns;  /* --timeout: covers the whole exchange */
    int64_t intended_ns; /* -R: the intended send time; 0 without -R */
    const char *where;   /* for a failure's first example, e.g.
                          * "action POST /_action/increment, connection 3" */
    /* A refused connect is tried again (HM_BACKOFF_CONNECT) until this
     * hm_now_ns() value, the end of -d; 0: while the run lasts. */
    int64_t retry_until_ns;
} hm_request;

/* Whether the request whose outcome was `status` never went out: its
 * connect failed (a connect attempt, not an action). */
static inline bool hm_request_unsent(const hm_http_conn *c, int status)
{
    return status == 0 && c->fail == HM_FAIL_CONNECT;
}

/* Sends one request on c and accounts for it in st: latency when a
 * response came (with -R: sleeps until intended_ns if early, and records
 * both corrected and service latency), its status or the failure kind with
 * the first example of each, connect and TLS timings, and liveness. A
 * refused connect is a connect attempt (hm_thread_stats_connect_failed),
 * not the request: it is tried again after HM_BACKOFF_CONNECT until it
 * connects, the run stops or rq->retry_until_ns passes (then *status is 0
 * and hm_request_unsent holds: nothing was sent). A request cancelled by
 * an interrupt is not counted. *status gets the HTTP status (0 when the
 * request failed). Returns true when the run should stop. */
bool hm_request_send(hm_http_conn *c, const hm_request *rq, hm_thread_stats *st, hm_liveness *live,
                     int *status);
/* The accounting half of hm_request_send, for an exchange that ran from
 * t0 to t1 and ended with rc (hm_http_conn_exchange's, the result an
 * hm_http_conn_start reported, or hm_h2_finish's: get over HTTP/2 drives
 * many streams from one coroutine): everything hm_request_send records,
 * a refused connect as a connect attempt (hm_request_unsent then holds),
 * except the in-flight gauge and the retry after a refused connect, which
 * are the caller's. Returns true when the run should stop. */
bool hm_request_account(hm_http_conn *c, const hm_request *rq, int rc, int64_t t0, int64_t t1,
                        hm_thread_stats *st, hm_liveness *live, int *status);

/* The first example of c's last outcome into st, when it was a failure
 * (rc < 0: c->fail with c->why and the response's first bytes) or a non-2xx
 * answer (the status line, and the body's start when kept). where says
 * which request on which VU or connection. */
void hm_thread_stats_note_outcome(hm_thread_stats *st, const hm_http_conn *c, int rc,
                                  const char *where);

/* How an SSE stream ended, into st (sse.failures and the first example),
 * unless the run ended it itself (rc -ECANCELED): rc is
 * hm_http_conn_stream's result on c, w the stream's watch (its own refusal
 * comes first). A stream the server ended (rc 0) while the run still
 * wanted it is "closed". Returns the kind counted (NONE when none). */
hm_sse_fail hm_sse_note_end(hm_thread_stats *st, const hm_http_conn *c, int rc, const hm_watch *w,
                            const char *where);
/* The run ended an SSE stream itself (rc -ECANCELED): when its parser
 * still held an unfinished line or event, counts it (sse_cut, the most
 * bytes held), and when that stream also sent no complete event for
 * longer than timeout_ns, counts an SSE "timeout" failure saying so: a
 * server stuck in an endless line never says failures: none. */
/* A stream that, without an unfinished line, sent only comments for longer
 * than timeout_ns is counted apart (sse_comments_only), not a failure. */
void hm_sse_note_cut(hm_thread_stats *st, const hm_watch *w, int64_t timeout_ns, const char *where);
/* The watch's undecodable events into st as SSE protocol failures (call
 * once, when the watch is done). */
void hm_sse_note_events(hm_thread_stats *st, const hm_watch *w, const char *where);

/* A connection's outcome into the thread's stats: the adapter between
 * proto (hm_http_conn) and stats (hm_thread_stats), so neither includes the
 * other. Records the connect and TLS handshake the conn's last request
 * made, if it made them, and a TLS failure's kind and first reason. Call
 * after every request. */
void hm_thread_stats_note_conn(hm_thread_stats *s, hm_http_conn *c);

/* Moves the bytes c read and wrote (and its coded body bytes, as received
 * and decoded) since the last call into st. */
static inline void hm_thread_stats_take_bytes(hm_thread_stats *st, hm_http_conn *c)
{
    if (c->bytes_read || c->bytes_written)
        hm_thread_stats_add_bytes(st, c->bytes_read, c->bytes_written);
    c->bytes_read = c->bytes_written = 0;
    if (c->resp.coded_in) hm_thread_stats_add_coded(st, c->resp.coded_in, c->resp.decoded_out);
    c->resp.coded_in = c->resp.decoded_out = 0;
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

/* Adds a finished connection's counters to st. */
static inline void hm_thread_stats_add_conn(hm_thread_stats *st, hm_http_conn *c)
{
    hm_thread_stats_take_bytes(st, c);
    st->connects += c->connects;
    st->reconnects += c->reconnects;
    st->retries += c->retries;
}

#define HM_TARGET_DEAD_MSG                                                                         \
    "target stopped answering: connects failing and no success within --timeout"

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
