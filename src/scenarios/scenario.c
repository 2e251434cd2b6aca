/* The built-in scenario table and helpers every scenario uses. */
#include "scenarios/scenario.h"

#include "scenarios/flow.h"

#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

atomic_bool hm_stop_requested;

extern const hm_scenario_def hm_scenario_get;

static const hm_workload net_increment = {.check = HM_CHECK_NET_INCREMENT};
static const hm_workload mandelbrot = {.check = HM_CHECK_CONSTANT, .expected = 65451};
static const hm_workload spreadsheet = {.check = HM_CHECK_SPREADSHEET};
static const hm_workload spreadsheet_live = {
    .check = HM_CHECK_TABLE, .set_signal = "direction", .set_value = "ArrowDown"};

/* A php-via page in either load model, paced by -R in the hammer model. */
#define VIA_CAPS .browser = true, .rate = true, .streams = true

static const hm_scenario_def counter = {
    .name = "counter",
    .help = "trivial increment; net increment of count must equal HTTP OK",
    .route = "/bench/counter",
    .action = "increment",
    .signal = "count",
    .workload = &net_increment,
    .check_name = "net increment equals HTTP OK",
    .caps = {VIA_CAPS, .is_workload = true}};
static const hm_scenario_def cpu = {
    .name = "cpu",
    .help = "Mandelbrot 50x50, 100 iterations; every patched count must be 65451",
    .route = "/bench/cpu",
    .action = "increment",
    .signal = "count",
    .workload = &mandelbrot,
    .check_name = "every patched count equals 65451",
    .caps = {VIA_CAPS, .is_workload = true}};
static const hm_scenario_def io = {
    .name = "io",
    .help = "2 ms non-blocking sleep per action; net increment must equal HTTP OK",
    .route = "/bench/io",
    .action = "increment",
    .signal = "count",
    .workload = &net_increment,
    .check_name = "net increment equals HTTP OK",
    .caps = {VIA_CAPS, .is_workload = true}};
static const hm_scenario_def sheet = {
    .name = "spreadsheet",
    .help = "SQLite 20x10 viewport query + HTML build; count increments, viewRow advances",
    .route = "/bench/spreadsheet",
    .action = "increment",
    .signal = "count",
    .workload = &spreadsheet,
    .check_name = "net increment equals HTTP OK; viewRow = focusRow = count mod 100",
    .caps = {VIA_CAPS, .is_workload = true}};
static const hm_scenario_def sheet_live = {
    .name = "spreadsheet-live",
    .help = "the live spreadsheet: navigate ArrowDown; element patches hold a 20x10 table",
    .route = "/examples/spreadsheet",
    .action = "navigate",
    .signal = "count",
    .workload = &spreadsheet_live,
    .check_name = "element patches hold a well-formed 20x10 table",
    .caps = {VIA_CAPS}};
static const hm_scenario_def custom = {
    .name = "custom",
    .help = "any php-via app: --route --action --signal [--signals JSON]; net increment check",
    .route = "/bench/counter",
    .action = "increment",
    .signal = "count",
    .workload = &net_increment,
    .check_name = "net increment equals HTTP OK",
    .caps = {VIA_CAPS}};

static const hm_scenario_def sticky = {
    .name = "sticky",
    .help = "multi-worker session affinity: legacy vs cookie vs keepalive (--workload NAME)",
    .route = "/bench/counter",
    .action = "increment",
    .signal = "count",
    .workload = &net_increment,
    .check_name = "cookie variant reaches 100% HTTP OK",
    .run = hm_sticky_run,
    /* --mode browser is accepted (and changes only the summary's connection
     * count): each variant fixes its own connections. */
    .caps = {.browser = true,
             .no_duration = "compares variants by -n",
             .takes_workload = true,
             .app_workers = 4}};

/* hammer flow FILE.yaml: steps from a YAML file (docs/flows.md). */
static const hm_scenario_def flow = {
    .name = "flow",
    .help = "user flows from a YAML file: hammer flow FILE.yaml (docs/flows.md)",
    .route = "/",
    .signal = "",
    .workload = &(const hm_workload){.check = HM_CHECK_NONE},
    .check_name = "flow",
    .run = hm_flow_run,
    .prepare = hm_flow_prepare,
    .caps = {VIA_CAPS, .flow_file = true}};

const hm_scenario_def *const hm_builtin_scenarios[] = {
    &counter, &cpu, &io, &sheet, &sheet_live, &custom, &sticky, &hm_scenario_get, &flow, NULL,
};

#define MAX_PLUGIN_SCENARIOS 64
static hm_scenario_def plugin_defs[MAX_PLUGIN_SCENARIOS];
static hammer_scenario plugin_structs[MAX_PLUGIN_SCENARIOS]; /* as this hammer sees them */
static size_t n_plugin_defs;

const hm_scenario_def *hm_scenario_find(const char *name)
{
    for (size_t i = 0; hm_builtin_scenarios[i]; i++)
        if (!strcmp(hm_builtin_scenarios[i]->name, name)) return hm_builtin_scenarios[i];
    for (size_t i = 0; i < n_plugin_defs; i++)
        if (!strcmp(plugin_defs[i].name, name)) return &plugin_defs[i];
    return NULL;
}

/* Keeps in *best the nearer of it and `known` to `name`. */
static void keep_nearer(const char *name, const char *known, const char **best, size_t *best_d)
{
    size_t d = hm_edit_distance(name, known);
    if (d < *best_d) *best_d = d, *best = known;
}

const char *hm_scenario_nearest(const char *name)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    for (size_t i = 0; hm_builtin_scenarios[i]; i++)
        keep_nearer(name, hm_builtin_scenarios[i]->name, &best, &best_d);
    for (size_t i = 0; i < n_plugin_defs; i++)
        keep_nearer(name, plugin_defs[i].name, &best, &best_d);
    return best && hm_near_miss(name, best) ? best : NULL;
}

void hm_scenario_help(FILE *f, const hm_scenario_def *sc)
{
    const hm_scenario_caps *c = &sc->caps;
    fprintf(f, "scenario %s: %s\n", sc->name, sc->help);
    if (c->flow_file) {
        fprintf(f, "  usage     hammer [options] flow FILE.yaml (docs/flows.md)\n");
    } else {
        fprintf(f, "  usage     hammer [options]%s scenario %s\n", c->needs_url ? " --url URL" : "",
                sc->name);
    }
    if (sc->route && !c->flow_file && !c->needs_url) {
        fprintf(f, "  page      %s (--route)\n", sc->route);
        fprintf(f, "  action    %s (--action); signal %s (--signal)\n", sc->action, sc->signal);
    }
    if (sc->check_name && !c->flow_file) fprintf(f, "  check     %s\n", sc->check_name);
    if (c->browser_only)
        fprintf(f, "  models    browser only: -c virtual users, one tab each\n");
    else if (c->browser)
        fprintf(f, "  models    hammer (default: one context, -c actions in flight) or "
                   "--mode browser (-c virtual users, one tab each; --think)\n");
    if (c->rate) fprintf(f, "  open loop -R N%s\n", c->browser ? " (hammer model)" : "");
    if (c->streams)
        fprintf(f, "  HTTP/2    --http2 --streams N%s\n", c->browser ? " (hammer model)" : "");
    if (c->custom_request) fprintf(f, "  request   -m METHOD, -H 'Name: value', --body FILE\n");
    if (c->takes_workload)
        fprintf(f, "  workload  --workload NAME picks the page, action and check\n");
    if (c->no_duration) fprintf(f, "  duration  -n only: %s\n", c->no_duration);
    if (c->app_workers > 1)
        fprintf(f, "  server    the embedded bench_app runs %d workers\n", c->app_workers);
    fprintf(f, "The options every scenario takes: hammer --help; the scenarios: hammer list; "
               "docs/scenarios.md.\n");
}

void hm_thread_stats_note_conn(hm_thread_stats *s, hm_http_conn *c)
{
    hm_thread_stats_take_bytes(s, c);
    const hm_tls *tls = hm_http_conn_tls(c); /* over HTTP/2, its connection's */
    if (c->fail == HM_FAIL_TLS && tls) {
        hm_tls_fail k = hm_tls_last_fail(tls);
        s->tls_fail[(unsigned)k < HM_ARRAY_LEN(s->tls_fail) ? k : HM_TLS_PROTOCOL]++;
        if (!s->tls_first_reason[0])
            snprintf(s->tls_first_reason, sizeof(s->tls_first_reason), "%s",
                     hm_tls_last_reason(tls));
    }
    if (c->connect_ns) hm_thread_stats_record(s, HM_PHASE_CONNECT, c->connect_ns / 1000);
    if (c->tls_ns && tls) {
        hm_thread_stats_record(s, HM_PHASE_TLS, c->tls_ns / 1000);
        if (hm_tls_resumed(tls))
            s->tls_resumed++;
        else
            s->tls_full++;
    }
}

int hm_scenario_run(const hm_scenario_def *sc, const hm_options *o, hm_results *r)
{
    if (sc->run) return sc->run(o, r);
    r->mode = o->browser ? "browser" : "hammer";
    return o->browser ? hm_via_browser_run(o, r) : hm_via_hammer_run(o, r);
}

void hm_scenario_names(bool (*pick)(const hm_scenario_caps *c), const char *sep, char *buf,
                       size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    size_t n_builtin = 0;
    while (hm_builtin_scenarios[n_builtin])
        n_builtin++;
    for (size_t i = 0; i < n_builtin + n_plugin_defs; i++) {
        const hm_scenario_def *sc =
            i < n_builtin ? hm_builtin_scenarios[i] : &plugin_defs[i - n_builtin];
        if (!pick(&sc->caps) || n >= len) continue;
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? sep : "", sc->name);
    }
}

void hm_thread_stats_note_outcome(hm_thread_stats *st, const hm_http_conn *c, int rc,
                                  const char *where)
{
    char bytes[sizeof(st->sse_first.bytes)];
    if (rc == 0) {
        int status = c->resp.status;
        if (status >= 200 && status < 300) return;
        bool latest = hm_thread_stats_latest_due(st);
        int i = 0;
        while (i < HM_STATUS_EXAMPLES && st->status_first_code[i] &&
               st->status_first_code[i] != status)
            i++;
        if (!latest && (i == HM_STATUS_EXAMPLES || st->status_first_code[i] == status))
            return; /* kept, or full */
        const char *eol = memchr(c->head, '\r', c->head_len);
        hm_escape_bytes(c->head, eol ? (size_t)(eol - c->head) : c->head_len, bytes, sizeof(bytes));
        /* php-via says why in the body ("Invalid context"): show its start. */
        char reason[160], body[100] = "";
        if (c->resp.body_len) hm_escape_bytes(c->resp.body, c->resp.body_len, body, 64);
        snprintf(reason, sizeof(reason), "answered HTTP %d%s%s", status, body[0] ? ": " : "", body);
        if (latest) hm_thread_stats_latest(st, reason);
        hm_thread_stats_status_example(st, status, reason, where, bytes);
        return;
    }
    hm_fail_kind k = c->fail ? c->fail : HM_FAIL_OTHER;
    bool latest = hm_thread_stats_latest_due(st);
    if (st->fail_first[k].reason[0] && !latest) return;
    const char *reason = hm_http_conn_fail_reason(c, rc);
    if (latest) {
        char line[160];
        snprintf(line, sizeof(line), "%s: %s", hm_fail_kind_name(k), reason ? reason : "");
        hm_thread_stats_latest(st, line);
    }
    hm_escape_bytes(c->head, c->head_len, bytes, sizeof(bytes));
    hm_thread_stats_fail_example(st, k, reason, where, bytes);
}

hm_sse_fail hm_sse_note_end(hm_thread_stats *st, const hm_http_conn *c, int rc, const hm_watch *w,
                            const char *where)
{
    if (rc == -ECANCELED) return HM_SSE_FAIL_NONE;
    char bytes[sizeof(st->sse_first.bytes)], reason[200];
    hm_escape_bytes(c->head, c->head_len, bytes, sizeof(bytes));
    hm_sse_fail kind;
    if (w->error[0]) {
        kind = HM_SSE_FAIL_PROTOCOL;
        snprintf(reason, sizeof(reason), "%s", w->error);
    } else if (rc == -HM_ESTATUS) {
        kind = HM_SSE_FAIL_STATUS;
        snprintf(reason, sizeof(reason), "answered HTTP %d", c->resp.status);
        const char *eol = memchr(c->head, '\r', c->head_len);
        hm_escape_bytes(c->head, eol ? (size_t)(eol - c->head) : c->head_len, bytes, sizeof(bytes));
    } else if (rc == 0) {
        kind = HM_SSE_FAIL_CLOSED;
        snprintf(reason, sizeof(reason), "the server ended the stream while the run was live");
    } else {
        kind = hm_sse_fail_of(c->fail);
        snprintf(reason, sizeof(reason), "%s", hm_http_conn_fail_reason(c, rc));
    }
    hm_thread_stats_sse_fail(st, kind, reason, where, bytes);
    return kind;
}

void hm_sse_note_cut(hm_thread_stats *st, const hm_watch *w, int64_t timeout_ns, const char *where)
{
    size_t held = hm_sse_pending(&w->sse);
    if (!held) {
        /* Heartbeats only, for longer than --timeout: a note, not a
         * failure (a tab with nothing to show is quiet too). */
        if (w->sse.comments > w->comments_at_event && hm_now_ns() - w->last_event_ns > timeout_ns)
            st->sse_comments_only++;
        return;
    }
    st->sse_cut++;
    if (held > st->sse_cut_bytes) st->sse_cut_bytes = held;
    int64_t quiet_ns = hm_now_ns() - w->last_event_ns;
    if (quiet_ns <= timeout_ns) return; /* an event on its way when the run ended */
    char reason[200];
    snprintf(reason, sizeof(reason),
             "the run ended the stream inside an unfinished line or event of %zu bytes, "
             "%.1f s after its last complete event (over --timeout %.1f s)",
             held, (double)quiet_ns / 1e9, (double)timeout_ns / 1e9);
    hm_thread_stats_sse_fail(st, HM_SSE_FAIL_TIMEOUT, reason, where, "");
}

void hm_sse_note_events(hm_thread_stats *st, const hm_watch *w, const char *where)
{
    if (!w->undecodable) return;
    hm_thread_stats_sse_fail(st, HM_SSE_FAIL_PROTOCOL, w->undecodable_why, where, "");
    st->sse_fail[HM_SSE_FAIL_PROTOCOL] += w->undecodable - 1;
}

bool hm_request_send(hm_http_conn *c, const hm_request *rq, hm_thread_stats *st, hm_liveness *live,
                     int *status)
{
    int64_t intended_ns = rq->intended_ns;
    *status = 0;
    if (intended_ns > 0 && hm_now_ns() < intended_ns) hm_coro_sleep_until(intended_ns);
    if (atomic_load_explicit(&hm_stop_requested, memory_order_relaxed) && intended_ns > 0)
        return true; /* the wait was cut short by Ctrl-C: send nothing new */
    hm_backoff backoff = HM_BACKOFF_CONNECT;
    for (;;) {
        int64_t t0 = hm_now_ns();
        hm_http_xopts xo = {.idempotent = rq->idempotent,
                            .head = rq->head,
                            .discard_body = rq->discard_body,
                            .req_outlives = rq->req_outlives,
                            .deadline = t0 + rq->timeout_ns};
        hm_thread_stats_in_flight(st, 1);
        int rc = hm_http_conn_exchange(c, rq->req, rq->len, &xo);
        hm_thread_stats_in_flight(st, -1);
        bool stop = hm_request_account(c, rq, rc, t0, hm_now_ns(), st, live, status);
        if (stop || rc == -ECANCELED || !hm_request_unsent(c, *status)) return stop;
        int64_t wake = hm_now_ns() + hm_backoff_next(&backoff);
        if (rq->retry_until_ns && wake >= rq->retry_until_ns) return false;
        if (atomic_load_explicit(&hm_stop_requested, memory_order_relaxed) ||
            hm_coro_sleep_until(wake) == -ECANCELED)
            return false;
    }
}

bool hm_request_account(hm_http_conn *c, const hm_request *rq, int rc, int64_t t0, int64_t t1,
                        hm_thread_stats *st, hm_liveness *live, int *status)
{
    int64_t intended_ns = rq->intended_ns;
    *status = 0;
    hm_thread_stats_note_conn(st, c);
    if (rc == -ECANCELED) return true; /* a second Ctrl-C: it never finished */
    hm_thread_stats_note_outcome(st, c, rc, rq->where);
    if (rc < 0 && c->fail == HM_FAIL_CONNECT) { /* never sent: an attempt, not an action */
        hm_thread_stats_connect_failed(st);
        return hm_liveness_report(live, t1, false, c->fail, rq->timeout_ns);
    }
    if (rc == 0) {
        *status = c->resp.status;
        if (intended_ns > 0)
            hm_thread_stats_record_scheduled(st, (t1 - intended_ns) / 1000, (t1 - t0) / 1000);
        else
            hm_thread_stats_record_action(st, (t1 - t0) / 1000);
        hm_thread_stats_count(st, c->resp.status, HM_FAIL_NONE);
        hm_liveness_report(live, t1, true, HM_FAIL_NONE, rq->timeout_ns);
        return false;
    }
    hm_thread_stats_count(st, 0, c->fail);
    return hm_liveness_report(live, t1, false, c->fail, rq->timeout_ns);
}

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

/* ---- plugins -------------------------------------------------------------- */

static const hm_workload no_check = {.check = HM_CHECK_NONE};

/* How many bytes of a plugin's hammer_scenario hammer may read: version 1
 * ends before struct_size; later versions say. 0 (and why) when the plugin
 * is newer than this hammer or its size is impossible. */
static size_t plugin_struct_size(const hammer_scenario *sc, const char *path, size_t i, char *why,
                                 size_t whylen)
{
    const size_t v1_size = offsetof(hammer_scenario, struct_size);
    const size_t v2_size = offsetof(hammer_scenario, struct_size) + sizeof(size_t);
    if (sc->api_version < 1 || sc->api_version > HAMMER_SCENARIO_API_VERSION) {
        /* name sits at the same place in every version */
        snprintf(why, whylen,
                 "plugin %s: scenario %zu ('%s') was built for plugin API version %d; this "
                 "hammer supports versions 1 to %d",
                 path, i, sc->name ? sc->name : "?", sc->api_version, HAMMER_SCENARIO_API_VERSION);
        return 0;
    }
    if (sc->api_version == 1) return v1_size;
    if (sc->struct_size < v2_size || sc->struct_size > sizeof(hammer_scenario)) {
        snprintf(why, whylen,
                 "plugin %s: scenario %zu says its struct has %zu bytes; API version %d needs "
                 "%zu to %zu",
                 path, i, sc->struct_size, sc->api_version, v2_size, sizeof(hammer_scenario));
        return 0;
    }
    return sc->struct_size;
}

int hm_plugin_load(const char *path, char *why, size_t whylen)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, whylen, "cannot load plugin %s: %s", path, dlerror());
        return -ENOENT;
    }
    const hammer_scenario *const *list = dlsym(h, "hammer_plugin_scenarios");
    if (!list) {
        snprintf(why, whylen, "plugin %s exports no hammer_plugin_scenarios", path);
        return -ENOENT;
    }
    for (size_t i = 0; list[i]; i++) {
        if (n_plugin_defs == MAX_PLUGIN_SCENARIOS) {
            snprintf(why, whylen, "too many plugin scenarios");
            return -ENOSPC;
        }
        size_t size = plugin_struct_size(list[i], path, i, why, whylen);
        if (!size) return -EINVAL;
        /* Fields the plugin's version lacks stay NULL in hammer's copy. */
        hammer_scenario *sc = &plugin_structs[n_plugin_defs];
        memset(sc, 0, sizeof(*sc));
        memcpy(sc, list[i], size);
        if (!sc->name || !sc->vu_body) {
            snprintf(why, whylen, "plugin %s: scenario %zu lacks a name or vu_body", path, i);
            return -EINVAL;
        }
        if (hm_scenario_find(sc->name)) {
            snprintf(why, whylen, "plugin %s: scenario '%s' exists already", path, sc->name);
            return -EEXIST;
        }
        plugin_defs[n_plugin_defs++] = (hm_scenario_def){
            .name = sc->name,
            .help = sc->help ? sc->help : "(plugin)",
            .route = sc->route ? sc->route : "/",
            .action = sc->action ? sc->action : "increment",
            .signal = sc->signal ? sc->signal : "count",
            .workload = &no_check,
            .check_name = "plugin check",
            .plugin = sc,
            .caps = {.browser = true, .browser_only = true},
        };
    }
    return 0; /* the handle stays open for the life of the process */
}

void hm_scenario_list(FILE *f)
{
    for (size_t i = 0; hm_builtin_scenarios[i]; i++)
        fprintf(f, "  %-17s %s\n", hm_builtin_scenarios[i]->name, hm_builtin_scenarios[i]->help);
    for (size_t i = 0; i < n_plugin_defs; i++)
        fprintf(f, "  %-17s %s (plugin)\n", plugin_defs[i].name, plugin_defs[i].help);
}
