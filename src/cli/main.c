/* hammer's command line: parse and check the options (options.c), reach
 * the target (or start the embedded bench_app, embedded.c), run each pass
 * of the scenario, report, and choose the exit code (options.h): 0 every
 * check held, 1 the run completed with failures (or was interrupted before
 * anything ran), 2 usage error or unreachable target. Every path out of a
 * run goes through finish(), which writes --json whenever the options were
 * good, however the run ended.
 *
 * Ctrl-C (SIGINT, SIGTERM): the first stops new work, ends pauses and
 * waits, lets requests in flight finish (up to --timeout) and reports what
 * ran; the second ends everything at once (engine interrupts, engine.h). */
#include "base/hm_file.h"
#include "cli/embedded.h"
#include "cli/import_har.h"
#include "cli/live_view.h"
#include "cli/matrix.h"
#include "cli/merge.h"
#include "cli/metrics.h"
#include "cli/options.h"
#include "cli/report.h"
#include "cli/server_resources.h"
#include "cli/server_watch.h"
#include "stats/json_text.h"
#include "stats/hdr_log.h"
#include "stats/steps.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Everything one invocation holds, released by finish(). */
typedef struct run_state {
    hm_cli cli;
    hm_live_gauges gauges;                      /* the live line's, over every pass */
    char url_buf[128];                          /* the embedded bench_app's URL */
    hm_tls_config *tls_cfg;                     /* https targets */
    FILE *ijson;                                /* --interval-json */
    hm_hlog hlog;                               /* --hdr-log */
    char full_target[4200];                     /* the URL the reports name */
    json_t *options;                            /* the resolved options, for the JSON document */
    hm_results *runs;                           /* one per pass */
    int ran;                                    /* passes that ran */
    int rc;                                     /* the last pass's error, 0 if none */
    int64_t load_started_ns[HM_CLI_MAX_PASSES]; /* wall clock, per pass (shard.started) */
    bool options_good;                          /* parsed and validated: --json is owed */
    bool json_written;
    bool write_failed;   /* an output could not be written at the end: exit 1 */
    const char *refused; /* the output refused before the run, not tried again */
    bool watch_off;      /* /_health failed once: the server watch is not tried again */
    char fatal[600];     /* why the run ended before a pass reported */
} run_state;

static _Atomic int signals_seen;
static _Atomic int64_t first_signal_ns;
static int64_t started_ns;

static void on_signal(int sig)
{
    (void)sig;
    int n = atomic_fetch_add(&signals_seen, 1);
    if (n == 0) atomic_store(&first_signal_ns, hm_now_ns());
    atomic_store(&hm_stop_requested, true);
    hm_interrupt_raise(n == 0 ? HM_INTERRUPT_STOP : HM_INTERRUPT_ABORT);
}

/* Right after the options are good, so a Ctrl-C at any later moment is
 * reported rather than fatal. */
static void install_signal_handlers(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (hm_interrupt_init() < 0) return; /* the default action, then */
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static bool interrupted(void)
{
    return atomic_load(&hm_stop_requested);
}

static double interrupted_at_s(void)
{
    int64_t at = atomic_load(&first_signal_ns);
    return at ? (double)(at - started_ns) / 1e9 : 0;
}

/* The run could not go on before a pass reported: says why on stderr and
 * keeps it for the JSON. An interruption is not a usage error: nothing ran,
 * so nothing passed (exit 1). */
static int early_exit(run_state *rs, const char *why)
{
    snprintf(rs->fatal, sizeof(rs->fatal), "%s", why);
    fprintf(stderr, "hammer: %s\n", why);
    return interrupted() ? HM_EXIT_FAILED : HM_EXIT_USAGE;
}

/* "hammer: why" on stderr; the run cannot start (or its set-up failed). */
static int usage_error(const char *why)
{
    fprintf(stderr, "hammer: %s\n", why);
    return HM_EXIT_USAGE;
}

/* The embedded bench_app or --url, resolved, with TLS set up, and reachable:
 * an unreachable target is a usage-level failure. */
static int open_target(run_state *rs)
{
    hm_options *o = &rs->cli.o;
    char why[512] = "";
    if (!o->url) {
        int port =
            hm_embedded_start(o->backend, rs->cli.sc->caps.app_workers, o->http2, why, sizeof(why));
        if (port < 0)
            return early_exit(rs, interrupted() ? "interrupted while the embedded bench_app started"
                                                : why);
        snprintf(rs->url_buf, sizeof(rs->url_buf), "http://127.0.0.1:%d", port);
        o->url = rs->url_buf;
        o->embedded = true;
    }
    char msg[1200];
    int rc = hm_http_target_from_url(o->url, &o->target, &o->target_path);
    if (rc < 0) {
        snprintf(msg, sizeof(msg), "bad --url '%s': %s", o->url, hm_strerror(rc));
        return early_exit(rs, msg);
    }
    o->target.http2 = o->http2;
    if (o->target.tls) {
        rc = hm_tls_config_create(&rs->tls_cfg, rs->cli.insecure, rs->cli.cafile, why, sizeof(why));
        if (rc < 0) return early_exit(rs, why);
        hm_tls_config_set_handshakes(rs->tls_cfg, rs->cli.tls_handshakes);
        if (o->http2) hm_tls_config_offer_h2(rs->tls_cfg); /* ALPN h2 alone */
        o->target.tls_cfg = rs->tls_cfg;
    }
    /* A browser asks for compression; the other models only when told. */
    if (rs->cli.compressed > 0 || (rs->cli.compressed < 0 && o->browser))
        o->target.accept_encoding = HM_ACCEPT_ENCODING;
    int status;
    const char *probe_path = o->embedded ? "/_health" : (o->target_path ? o->target_path : "/");
    rc = hm_probe_get(o->backend, &o->target, probe_path, o->timeout_ns, &status, why, sizeof(why));
    if (rc < 0 && interrupted())
        return early_exit(rs, "interrupted while checking that the target is reachable");
    if (rc < 0) {
        snprintf(msg, sizeof(msg), "target %s is unreachable: %s", o->url, why);
        return early_exit(rs, msg);
    }
    return HM_CLI_GO;
}

static json_t *seconds_or_null(int64_t ns)
{
    return ns ? json_real((double)ns / 1e9) : json_null();
}

static json_t *strings(const char *const *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, hm_json_text(v[i]));
    return a;
}

/* Every option as the run used it, defaults and the scenario's included
 * (docs/output.md, "options"). */
static json_t *resolved_options(const run_state *rs)
{
    const hm_cli *cli = &rs->cli;
    const hm_options *o = &cli->o;
    const char *th[HM_MAX_THRESHOLDS];
    for (int i = 0; i < cli->n_thresholds; i++)
        th[i] = cli->thresholds[i].text;
    json_t *j = json_object();
    json_object_set_new(j, "url", hm_json_text(o->url));
    json_object_set_new(j, "embedded", json_boolean(o->embedded));
    json_object_set_new(j, "concurrency", json_integer(o->concurrency));
    json_object_set_new(j, "threads", json_integer(o->threads));
    json_object_set_new(j, "actions", o->actions ? json_integer(o->actions) : json_null());
    json_object_set_new(j, "duration_s", seconds_or_null(o->duration_ns));
    json_object_set_new(j, "rate", o->rate > 0 ? json_real(o->rate) : json_null());
    json_object_set_new(j, "timeout_s", seconds_or_null(o->timeout_ns));
    json_object_set_new(j, "engine", json_string(hm_backend_name(o->backend)));
    json_object_set_new(j, "mode",
                        hm_json_text(cli->sc->route ? (o->browser ? "browser" : "hammer") : NULL));
    json_object_set_new(
        j, "think_s",
        json_pack("[f,f]", (double)o->think_min_ns / 1e9, (double)o->think_max_ns / 1e9));
    json_object_set_new(j, "observers", json_integer(o->observers));
    json_object_set_new(j, "route", hm_json_text(cli->sc->route ? o->route : NULL));
    json_object_set_new(j, "action", hm_json_text(cli->sc->route ? o->action : NULL));
    json_object_set_new(j, "signal", hm_json_text(cli->sc->route ? o->signal : NULL));
    json_object_set_new(j, "signals", hm_json_text(o->signals_json));
    json_object_set_new(j, "workload", hm_json_text(cli->workload_name));
    json_object_set_new(j, "no_origin", json_boolean(o->no_origin));
    json_object_set_new(j, "no_cookies", json_boolean(o->no_cookies));
    json_object_set_new(j, "compressed", json_boolean(o->target.accept_encoding != NULL));
    json_object_set_new(j, "server_watch", json_boolean(!cli->no_server_watch));
    json_object_set_new(j, "watch_grace_s", json_real((double)cli->watch_grace_ns / 1e9));
    json_object_set_new(j, "no_reload", json_boolean(o->no_reload));
    json_object_set_new(j, "insecure", json_boolean(cli->insecure));
    json_object_set_new(j, "cacert", hm_json_text(cli->cafile));
    json_object_set_new(j, "tls_handshakes", json_integer(cli->tls_handshakes));
    json_object_set_new(j, "method", hm_json_text(o->method));
    json_object_set_new(j, "headers", strings(o->headers, o->n_headers));
    json_object_set_new(j, "body_bytes",
                        cli->body_path ? json_integer((json_int_t)o->body_len) : json_null());
    json_object_set_new(j, "plugin_opts", strings(o->plugin_opts, o->n_plugin_opts));
    json_object_set_new(j, "interval_s",
                        json_real(cli->interval_ns ? (double)cli->interval_ns / 1e9 : 1.0));
    json_object_set_new(j, "passes", strings(cli->pass_names, cli->n_passes));
    json_object_set_new(j, "thresholds", strings(th, cli->n_thresholds));
    return j;
}

/* --hgrm's file for pass pi: with several passes, FILE with the pass's
 * name before the extension. */
static void hgrm_name(const hm_cli *cli, int pi, char *name, size_t len)
{
    const char *path = cli->hgrm_path;
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (cli->n_passes == 1)
        snprintf(name, len, "%s", path);
    else if (dot && (!slash || dot > slash))
        snprintf(name, len, "%.*s.%s%s", (int)(dot - path), path, cli->pass_names[pi], dot);
    else
        snprintf(name, len, "%s.%s", path, cli->pass_names[pi]);
}

/* The files written after the run (--json, --html, --hgrm): each must be
 * writable before the load starts, so a run never ends without its report. */
static int check_outputs(run_state *rs)
{
    const hm_cli *cli = &rs->cli;
    char msg[4400];
    int n = 0;
    const char *paths[2 + HM_CLI_MAX_PASSES];
    char hgrm[HM_CLI_MAX_PASSES][4200];
    if (cli->o.json_path) paths[n++] = cli->o.json_path;
    if (cli->html_path) paths[n++] = cli->html_path;
    for (int pi = 0; cli->hgrm_path && pi < cli->n_passes; pi++) {
        hgrm_name(cli, pi, hgrm[pi], sizeof(hgrm[pi]));
        paths[n++] = hgrm[pi];
    }
    for (int i = 0; i < n; i++) {
        int rc = hm_file_writable(paths[i]);
        if (rc == 0) continue;
        snprintf(msg, sizeof(msg), "cannot write %s: %s", paths[i], hm_strerror(rc));
        rs->refused = paths[i] == cli->o.json_path || paths[i] == cli->html_path ? paths[i] : NULL;
        return early_exit(rs, msg);
    }
    return HM_CLI_GO;
}

/* The interval outputs (--interval-json, --hdr-log) and the pass results. */
static int open_outputs(run_state *rs)
{
    const hm_cli *cli = &rs->cli;
    char msg[600];
    int checked = check_outputs(rs);
    if (checked != HM_CLI_GO) return checked;
    if (cli->interval_json && !(rs->ijson = fopen(cli->interval_json, "w"))) {
        snprintf(msg, sizeof(msg), "cannot write %s: %s", cli->interval_json, strerror(errno));
        return early_exit(rs, msg);
    }
    int rc;
    if (cli->hdr_log_path && (rc = hm_hlog_open(&rs->hlog, cli->hdr_log_path)) < 0) {
        snprintf(msg, sizeof(msg), "cannot write %s: %s", cli->hdr_log_path, hm_strerror(rc));
        return early_exit(rs, msg);
    }
    const hm_options *o = &cli->o;
    snprintf(rs->full_target, sizeof(rs->full_target), "%s%s", o->url,
             cli->sc->route && o->target_path && !strcmp(o->target_path, "/") ? o->route : "");
    rs->runs = hm_calloc((size_t)cli->n_passes, sizeof(hm_results));
    rs->options = resolved_options(rs);
    if (!rs->runs) return HM_EXIT_FAILED;
    if (cli->metrics_listen) {
        hm_metrics_options mo = {.listen = cli->metrics_listen,
                                 .scenario = cli->sc->name,
                                 .target = rs->full_target,
                                 .gauges = &rs->gauges,
                                 .shard_index = cli->shard.index,
                                 .shard_count = cli->shard.count,
                                 .run_id = cli->shard.run_id};
        char why[512];
        int port;
        if (hm_metrics_start(&mo, &port, why, sizeof(why)) < 0) return usage_error(why);
        /* the port bound (":0" picks one), where a scraper finds it */
        fprintf(stderr, "hammer: metrics on port %d, path /metrics\n", port);
    }
    if (cli->server_metrics) {
        hm_http_target t;
        char *path = NULL;
        int urc = hm_http_target_from_url(cli->server_metrics, &t, &path);
        hm_free(path);
        if (urc < 0 || t.tls) {
            char why[600];
            snprintf(why, sizeof(why), "--server-metrics %s: %s", cli->server_metrics,
                     urc == -HM_EPARSE || (urc == 0 && t.tls) ? "not an http:// URL"
                                                              : hm_strerror(urc));
            return usage_error(why);
        }
    }
    return HM_CLI_GO;
}

/* What the summary says about the run besides what the scenario measures. */
static void describe_pass(run_state *rs, hm_results *rp, const char *pass)
{
    const hm_options *o = &rs->cli.o;
    const hm_scenario_def *sc = rs->cli.sc;
    rp->pass = pass;
    rp->scenario = sc->name;
    rp->target = rs->full_target;
    rp->target_note = o->embedded ? "embedded bench_app" : NULL;
    rp->engine = hm_backend_name(o->backend);
    rp->threads = o->threads;
    rp->concurrency = o->concurrency;
    /* A browser VU's tab: page and SSE on two HTTP/1.1 connections, on one
     * HTTP/2 connection. */
    rp->conns_requested = o->browser
                              ? (o->http2 ? 1 : 2) * (uint64_t)o->concurrency
                              : (uint64_t)o->concurrency + (sc->route ? (uint64_t)o->observers : 0);
    rp->protocol = !o->http2 ? "http/1.1" : o->target.tls ? "h2" : "h2c";
    rp->streams = o->http2 && !o->browser ? o->streams : 1;
    rp->unit = sc->route ? "actions" : "requests";
    rp->tls = o->target.tls;
    rp->tls_insecure = rs->cli.insecure;
    rp->check_name = sc->check_name;
    rp->rate_target = o->rate;
    rp->argc = rs->cli.argc;
    rp->argv = rs->cli.argv;
    rp->options = rs->options;
}

/* Progress: one line per --interval, or a live line on a terminal; the
 * reporter always runs, as it records the pass's time series. */
/* Progress as a line refreshed on a terminal, not one line per interval. */
static bool live_line(const hm_cli *cli)
{
    return !cli->interval_ns && !cli->o.quiet && isatty(STDOUT_FILENO);
}

/* The full-screen live view instead of the line: on a terminal (stdin too,
 * for its keys), unless --no-tui or --interval asked for lines. */
static bool live_view(const hm_cli *cli)
{
    return live_line(cli) && !cli->no_tui && isatty(STDIN_FILENO);
}

/* At each interval's end: /_health (when watched) and the server's resources. */
static void sample_server(void *arg)
{
    const hm_results *rp = arg;
    if (rp->server.sampled) hm_server_watch_sample(NULL);
    hm_server_resources_sample();
}

/* The server's processes: --server-pid, the embedded bench_app, and
 * --server-metrics (its URL checked at start-up: check_server_metrics). */
static void start_resources(run_state *rs)
{
    const hm_cli *cli = &rs->cli;
    hm_server_resources_options ro = {
        .metrics_url = cli->server_metrics,
        .timeout_ns = cli->o.timeout_ns,
        .duration_ns = cli->o.duration_ns,
        .gauges = &rs->gauges,
    };
    for (int i = 0; i < cli->n_server_pids; i++)
        ro.pids[ro.n_pids++] = cli->server_pids[i];
    if (hm_embedded_pid() > 0 && ro.n_pids < HM_SERVER_PIDS_MAX)
        ro.pids[ro.n_pids++] = hm_embedded_pid();
    char why[400];
    if (hm_server_resources_begin(&ro, why, sizeof(why)) < 0)
        fprintf(stderr, "hammer: not sampling the server's resources: %s\n", why);
}

static void start_progress(run_state *rs, const hm_results *rp)
{
    const hm_cli *cli = &rs->cli;
    bool live = live_line(cli), view = live_view(cli);
    hm_progress_options po = {
        .interval_ns = cli->interval_ns ? cli->interval_ns : 1000000000LL,
        .live_line = live && !view,
        .view = view ? hm_live_view_show : NULL,
        .view_arg = (void *)cli->sc->name,
        .lines = cli->interval_ns > 0,
        .quiet = cli->o.quiet,
        .json = rs->ijson,
        .hlog = rs->hlog.f ? &rs->hlog : NULL,
        .hlog_tag = cli->n_passes > 1 ? rp->pass : NULL,
        .unit = rp->unit,
        .gauges = &rs->gauges,
        .total = cli->o.actions,
        .duration_ns = cli->o.duration_ns,
        .before_tick = sample_server,
        .before_tick_arg = (void *)rp,
        .stop_ns = &first_signal_ns,
        .timeout_ns = cli->o.timeout_ns,
    };
    hm_progress_start(&po);
}

static double cpu_seconds(const struct rusage *a, const struct rusage *b)
{
    return (double)(b->ru_utime.tv_sec - a->ru_utime.tv_sec) +
           (double)(b->ru_utime.tv_usec - a->ru_utime.tv_usec) / 1e6 +
           (double)(b->ru_stime.tv_sec - a->ru_stime.tv_sec) +
           (double)(b->ru_stime.tv_usec - a->ru_stime.tv_usec) / 1e6;
}

/* One pass of the scenario into rp; false when hm_results cannot be set up. */
static bool run_pass(run_state *rs, hm_results *rp, const char *pass)
{
    const hm_cli *cli = &rs->cli;
    if (hm_thread_stats_init(&rp->total) < 0) return false;
    describe_pass(rs, rp, pass);
    /* The baseline goes first, so the first interval already shows it. */
    bool watching = false;
    if (!cli->no_server_watch && !rs->watch_off) {
        hm_server_watch_options wo = {
            .target = &cli->o.target,
            .interval_ns = cli->interval_ns ? cli->interval_ns : 1000000000LL,
            .timeout_ns = cli->o.timeout_ns,
            .gauges = &rs->gauges,
        };
        watching = hm_server_watch_begin(&wo, &rp->server) == 0;
        rs->watch_off = !watching;
    }
    start_resources(rs);
    rp->t0_ns = hm_now_ns(); /* the interval lines' zero, for the outage window */
    start_progress(rs, rp);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    clock_gettime(CLOCK_REALTIME, &rp->started);
    int64_t streams_before = atomic_load(&rs->gauges.sse_opened);
    rs->rc = hm_scenario_run(cli->sc, &cli->o, rp);
    hm_progress_stop(&rp->intervals);
    hm_server_resources_end();
    getrusage(RUSAGE_SELF, &ru1);
    if (rp->wall_seconds > 0)
        rp->client_cpu_pct = 100.0 * cpu_seconds(&ru0, &ru1) / (rp->wall_seconds * cli->o.threads);
    /* Before the server watch's wait: a Ctrl-C there skips the wait, it
     * does not cut the run short. */
    rp->interrupted = interrupted();
    rp->interrupted_at_s = interrupted_at_s();
    rp->interrupted_twice = atomic_load(&signals_seen) > 1;
    /* The VUs closed their sessions: a soak (or --watch-grace) waits to see
     * the server let go of what they held. */
    if (watching) {
        bool live = live_line(cli);
        hm_server_watch_end_options we = {
            .check = cli->o.duration_ns > 0 || cli->watch_grace_given,
            .grace_ns = cli->watch_grace_ns,
            .own_contexts = (uint64_t)hm_hdr_count(&rp->total.page_us),
            .own_streams = (uint64_t)(atomic_load(&rs->gauges.sse_opened) - streams_before),
            .live_line = live,
            .lines = !live && !cli->o.quiet,
        };
        hm_server_watch_end(&rp->server, &we);
    }
    memcpy(rp->thresholds, cli->thresholds, sizeof(cli->thresholds));
    /* A shard's share cannot answer for the whole run: hammer merge does. */
    rp->n_thresholds = hm_shard_defers_thresholds(cli) ? 0 : cli->n_thresholds;
    hm_thresholds_evaluate(rp);
    return true;
}

/* Closes what the passes wrote to and stops the embedded server; once. */
static void close_outputs(run_state *rs)
{
    int rc = 0;
    if (rs->ijson) {
        bool bad = ferror(rs->ijson); /* an earlier line's write failed; its errno is gone */
        rc = fclose(rs->ijson) != 0 ? -errno : bad ? -EIO : 0;
    }
    if (rc < 0) {
        fprintf(stderr, "hammer: cannot write %s: %s\n", rs->cli.interval_json, hm_strerror(rc));
        rs->write_failed = true;
    }
    rs->ijson = NULL;
    if (rs->hlog.f && (rc = hm_hlog_close(&rs->hlog)) < 0) {
        fprintf(stderr, "hammer: cannot write %s: %s\n", rs->cli.hdr_log_path, hm_strerror(rc));
        rs->write_failed = true;
    }
    rs->hlog.f = NULL;
    hm_embedded_stop();
}

/* Each pass runs the scenario again against the same server. */
static int run_passes(run_state *rs)
{
    for (int pi = 0; pi < rs->cli.n_passes && !atomic_load(&hm_stop_requested); pi++) {
        hm_results *rp = &rs->runs[pi];
        rs->cli.o.load_started_ns = &rs->load_started_ns[pi];
        rs->ran++;
        if (!run_pass(rs, rp, rs->cli.pass_names[pi])) {
            rs->ran--;
            return HM_EXIT_FAILED;
        }
        if (rp->fatal && rp->total.sent == 0) break; /* the next pass would fail alike */
    }
    close_outputs(rs);
    return HM_CLI_GO;
}

static int print_hgrm(FILE *f, void *action_us)
{
    return hm_hdr_percentiles_print(action_us, f, 5, 1000.0);
}

/* --hgrm: the action (request) latency of each pass in HdrHistogram's
 * .hgrm layout, in milliseconds as wrk2 and jHiccup write it. */
static void write_hgrm(run_state *rs)
{
    for (int pi = 0; rs->cli.hgrm_path && pi < rs->ran; pi++) {
        char name[4200];
        hgrm_name(&rs->cli, pi, name, sizeof(name));
        int rc = hm_file_replace(name, print_hgrm, &rs->runs[pi].total.action_us);
        if (rc < 0) {
            fprintf(stderr, "hammer: cannot write %s: %s\n", name, hm_strerror(rc));
            rs->write_failed = true;
        }
    }
}

/* --json and --html from one document, each that was not refused before
 * the run; a failure is said with the system's errno and fails the run. */
static void write_documents(run_state *rs, json_t *doc)
{
    const hm_cli *cli = &rs->cli;
    const char *paths[] = {cli->o.json_path, cli->html_path};
    for (size_t i = 0; i < HM_ARRAY_LEN(paths); i++) {
        if (!paths[i] || paths[i] == rs->refused) continue;
        int rc = i == 0 ? hm_json_write_atomic(paths[i], doc) : hm_report_html_write(paths[i], doc);
        if (rc < 0) {
            fprintf(stderr, "hammer: cannot write %s: %s\n", paths[i], hm_strerror(rc));
            rs->write_failed = true;
        }
    }
}

/* The summaries, the JSON document, and the exit code. */
static int report(run_state *rs)
{
    const hm_cli *cli = &rs->cli;
    bool all_passed = rs->ran > 0;
    for (int pi = 0; pi < rs->ran; pi++) {
        if (!cli->o.quiet) {
            if (cli->n_passes > 1) printf("\n--- pass %s ---", rs->runs[pi].pass);
            hm_report_print(stdout, &rs->runs[pi]);
            if (hm_shard_defers_thresholds(cli) && cli->n_thresholds)
                printf("Thresholds        %d, evaluated over all shards by hammer merge\n",
                       cli->n_thresholds);
        }
        all_passed = all_passed && hm_results_passed(&rs->runs[pi]);
    }
    if (!cli->o.quiet && rs->ran > 1) hm_report_print_passes(stdout, rs->runs, rs->ran);
    write_hgrm(rs);
    if ((cli->o.json_path || cli->html_path) && rs->ran > 0) {
        /* The HTML is rendered from the same document the JSON file holds. */
        json_t *doc =
            rs->ran > 1 ? hm_report_passes_json(rs->runs, rs->ran) : hm_report_json(&rs->runs[0]);
        for (int pi = 0; pi < rs->ran; pi++) /* each run's own start, for hammer merge */
            json_object_set_new(rs->ran > 1 ? json_array_get(json_object_get(doc, "passes"), pi)
                                            : doc,
                                "shard", hm_shard_json(cli, rs->load_started_ns[pi]));
        write_documents(rs, doc);
        rs->json_written = true;
        json_decref(doc);
    }
    const char *fatal = NULL;
    bool nothing_sent = true, input_fault = false;
    for (int pi = 0; pi < rs->ran; pi++) {
        if (rs->runs[pi].fatal && !fatal) fatal = rs->runs[pi].fatal;
        if (rs->runs[pi].total.sent) nothing_sent = false;
        input_fault = input_fault || rs->runs[pi].fatal_usage;
    }
    /* Nothing was sent because of the scenario's set-up, or its input does
     * not fit the app: a usage-level failure, unless Ctrl-C cut the set-up
     * short. */
    if (fatal && (nothing_sent || input_fault) && !interrupted()) return usage_error(fatal);
    if (rs->rc < 0 && !fatal) fprintf(stderr, "hammer: run failed: %s\n", hm_strerror(rs->rc));
    /* A report that could not be written is a run CI must not take as green. */
    return all_passed && !rs->write_failed ? HM_EXIT_PASS : HM_EXIT_FAILED;
}

/* The JSON of a run that ended before any pass reported: what it was
 * going to do, and why it did not (docs/output.md: written on every exit
 * once the options are good). */
static void write_early_json(run_state *rs)
{
    hm_results *r = hm_calloc(1, sizeof(*r));
    if (!r || hm_thread_stats_init(&r->total) < 0) {
        hm_free(r);
        return;
    }
    describe_pass(rs, r, rs->cli.pass_names[0]);
    if (!rs->full_target[0])
        snprintf(rs->full_target, sizeof(rs->full_target), "%s",
                 rs->cli.o.url ? rs->cli.o.url : "(embedded bench_app)");
    r->target = rs->full_target;
    r->fatal = rs->fatal[0]    ? rs->fatal
               : interrupted() ? "interrupted before the run started"
                               : "the run ended before it started";
    r->interrupted = interrupted();
    r->interrupted_at_s = interrupted_at_s();
    r->interrupted_twice = atomic_load(&signals_seen) > 1;
    json_t *doc = hm_report_json(r);
    json_object_set_new(doc, "shard", hm_shard_json(&rs->cli, 0)); /* the load never began */
    write_documents(rs, doc);
    json_decref(doc);
    hm_thread_stats_destroy(&r->total);
    hm_free(r);
}

/* The one way out: whatever the run got to, released. */
static int finish(run_state *rs, int code)
{
    close_outputs(rs);
    if (rs->options_good && (rs->cli.o.json_path || rs->cli.html_path) && !rs->json_written)
        write_early_json(rs);
    for (int pi = 0; rs->runs && pi < rs->ran; pi++) {
        hm_thread_stats_destroy(&rs->runs[pi].total);
        for (int i = 0; i < rs->runs[pi].n_variants; i++)
            hm_thread_stats_destroy(&rs->runs[pi].variants[i].stats);
        hm_steps_free(rs->runs[pi].steps);
        hm_interval_series_free(&rs->runs[pi].intervals);
    }
    hm_metrics_linger(rs->cli.metrics_linger_ns, rs->cli.o.quiet, interrupted); /* final counts */
    hm_metrics_stop();
    hm_free(rs->runs);
    json_decref(rs->options);
    hm_free(rs->cli.o.target_path);
    hm_cli_free(&rs->cli);
    hm_tls_config_free(rs->tls_cfg);
    hm_shard_free(&rs->cli.shard);
    return code;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "matrix")) return hm_matrix_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "merge")) return hm_merge_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "import-har")) return hm_import_har_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "report")) return hm_report_main(argc - 1, argv + 1);
    static run_state rs; /* large (thresholds, URLs); one per process */
    started_ns = hm_now_ns();
    int code = hm_cli_parse(&rs.cli, argc, argv);
    if (code == HM_CLI_GO) code = hm_shard_split(&rs.cli);
    if (code == HM_CLI_GO) code = hm_cli_validate(&rs.cli);
    if (code == HM_CLI_GO) code = hm_shard_identify(&rs.cli);
    if (code == HM_CLI_GO) {
        rs.options_good = true;
        install_signal_handlers();
    }
    rs.cli.o.gauges = &rs.gauges;
    if (code == HM_CLI_GO) code = open_target(&rs);
    if (code == HM_CLI_GO) code = open_outputs(&rs);
    if (code == HM_CLI_GO) code = run_passes(&rs);
    if (code == HM_CLI_GO) code = report(&rs);
    return finish(&rs, code);
}
