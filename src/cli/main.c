/* hammer's command line: parse options, pick the target (or start the
 * embedded bench_app), run the scenario, report, and choose the exit code:
 * 0 every check held, 1 the run completed with failures, 2 usage error or
 * unreachable target. */
#include "bench_app/app.h"

#include <jansson.h>
#include "scenarios/scenario.h"
#include "cli/matrix.h"
#include "stats/hdr_log.h"

#include <getopt.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

enum { EXIT_PASS = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hammer [options] scenario NAME [options]\n"
            "       hammer matrix [options] PROFILES.ini  (profiles compared; matrix --help)\n"
            "       hammer list | --help | --version\n"
            "\n"
            "Drives php-via apps (PHP + OpenSwoole + Datastar over SSE) like browsers do and\n"
            "records latency histograms. Without --url, hammer starts its embedded bench_app\n"
            "(a php-via stand-in) on a free loopback port and stops it at the end.\n"
            "\n"
            "options:\n"
            "  -c, --concurrency N   connections / actions in flight (200)\n"
            "  -n, --actions N       actions (or requests) in total (5000)\n"
            "  -d, --duration T      run for T (e.g. 30s, 10m, 2h) instead of -n\n"
            "  -t, --threads N       engine threads (one per CPU hammer may run on)\n"
            "  -R, --rate N          open loop: N actions (requests) per second in total,\n"
            "                        sent on schedule; latency is measured from the intended\n"
            "                        send time (corrected) and from the actual one (service)\n"
            "      --url URL         target server (default: embedded bench_app)\n"
            "      --route PATH      page to load (scenario default, e.g. /bench/counter)\n"
            "      --action NAME     action to fire (increment)\n"
            "      --signal NAME     signal to check (count)\n"
            "      --signals JSON    extra JSON fields sent in every action body\n"
            "      --no-origin       send no Origin header (php-via dev mode only)\n"
            "      --observers N     SSE observers (1; hammer mode)\n"
            "      --mode M          hammer (one context, -c actions in flight) or browser\n"
            "                        (-c virtual users, one tab each) (hammer)\n"
            "      --think T[..T2]   browser mode: pause between a VU's actions (0)\n"
            "      --timeout T       per-request timeout (5s)\n"
            "      --engine E        auto | io_uring | epoll (auto)\n"
            "  -k, --insecure        https: do not verify the server's certificate\n"
            "      --cacert FILE     https: trust these CA certificates (default: system)\n"
            "      --json FILE       write the results as JSON (see docs/output.md)\n"
            "      --workload NAME   sticky: counter | cpu | io | spreadsheet (counter)\n"
            "      --no-cookies      sticky: VUs keep no cookies (what a balancer ignoring\n"
            "                        them sees)\n"
            "      --plugin FILE.so  load scenarios from a plugin (include/hammer/scenario.h)\n"
            "      --opt KEY=VALUE   an option for a plugin scenario (repeatable)\n"
            "      --interval T      print one progress line per T (default on a terminal:\n"
            "                        a live line, refreshed every second)\n"
            "      --interval-json F write one JSON line per interval to F\n"
            "      --hdr-log FILE    write an HdrHistogram interval log (compressed V2,\n"
            "                        microseconds; one histogram per interval)\n"
            "      --passes A,B      run the scenario once per name, back to back against\n"
            "                        the same server (e.g. cold,warm), and compare them\n"
            "      --threshold EXPR  fail the run (exit 1) unless EXPR holds: p99<50ms,\n"
            "                        patch_p99<200ms, max<1s, ok>=100%%, rps>=1000 (repeatable)\n"
            "  -q, --quiet           no summary on stdout\n"
            "  -h, --help            this help\n"
            "  -V, --version         version and compiled-in engines\n"
            "\n"
            "scenarios (hammer list):\n");
    hm_scenario_list(f);
}

static void version(void)
{
    const char *why = NULL;
    hm_backend_kind k = hm_backend_resolve(HM_BACKEND_AUTO, &why);
    printf("hammer %s\n", HM_VERSION);
    printf("engines: io_uring epoll (auto selects %s here%s%s)\n", hm_backend_name(k),
           why ? ": " : "", why ? why : "");
}

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&hm_stop_requested, true);
}

/* ---- embedded bench_app ------------------------------------------------- */

static pid_t app_pid = -1;

/* Forks a child running bench_app on a free loopback port; returns the port. */
static int start_embedded(hm_backend_kind backend, bool multi_worker, char *why, size_t whylen)
{
    int fds[2];
    if (pipe(fds) < 0) return -errno;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -errno;
    if (pid == 0) {
        /* Own process group: a Ctrl-C at the terminal stops hammer's
         * sending, not the server under test. */
        setpgid(0, 0);
        close(fds[0]);
        hm_bench_app_install_signal_handlers(); /* SIGTERM from stop_embedded() */
        hm_bench_app_options ao;
        hm_bench_app_defaults(&ao);
        ao.port = 0;
        ao.quiet = true;
        ao.backend = backend;
        if (multi_worker) { /* sticky: php-via's intended affinity, 4 workers */
            ao.workers = 4;
            ao.dispatch = "session";
        }
        int rc = hm_bench_app_run(&ao, fds[1]);
        _exit(rc < 0 ? 1 : 0);
    }
    close(fds[1]);
    app_pid = pid;
    struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
    char buf[32] = {0};
    int port = -1;
    if (poll(&pfd, 1, 10000) == 1) {
        ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
        if (n > 0) port = atoi(buf);
    }
    close(fds[0]);
    if (port <= 0) {
        snprintf(why, whylen, "the embedded bench_app did not start");
        return -ECHILD;
    }
    return port;
}

static void stop_embedded(void)
{
    if (app_pid <= 0) return;
    kill(app_pid, SIGTERM);
    for (int i = 0; i < 200; i++) { /* up to 2 s, then insist */
        if (waitpid(app_pid, NULL, WNOHANG) == app_pid) {
            app_pid = -1;
            return;
        }
        usleep(10000);
    }
    kill(app_pid, SIGKILL);
    waitpid(app_pid, NULL, 0);
    app_pid = -1;
}

static int raise_nofile(int need, char *why, size_t whylen)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0) return 0;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur != RLIM_INFINITY && (rlim_t)need > rl.rlim_cur) {
        snprintf(why, whylen,
                 "this run needs about %d open files but the limit is %llu (ulimit -n); "
                 "lower -c or --observers",
                 need, (unsigned long long)rl.rlim_cur);
        return -EMFILE;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "matrix")) return hm_matrix_main(argc - 1, argv + 1);
    hm_options o = {
        .concurrency = 200,
        .actions = 5000,
        .timeout_ns = 5000000000LL,
        .observers = 1,
        .backend = HM_BACKEND_AUTO,
    };
    /* One thread per CPU hammer may run on: under taskset (or hammer
     * matrix's hammer_cpus) that is fewer than the machine has. */
    cpu_set_t runnable;
    long cpus = sched_getaffinity(0, sizeof(runnable), &runnable) == 0
                    ? CPU_COUNT(&runnable)
                    : sysconf(_SC_NPROCESSORS_ONLN);
    o.threads = cpus > 0 ? (int)cpus : 1;
    static hm_live_gauges gauges; /* the live line's, over every pass */
    o.gauges = &gauges;
    bool actions_given = false;

    enum { OPT_URL = 1000, OPT_ROUTE, OPT_ACTION, OPT_SIGNAL, OPT_SIGNALS, OPT_NO_ORIGIN,
           OPT_OBSERVERS, OPT_TIMEOUT, OPT_ENGINE, OPT_JSON, OPT_MODE, OPT_THINK, OPT_PLUGIN,
           OPT_OPT, OPT_WORKLOAD, OPT_NO_COOKIES, OPT_CACERT, OPT_THRESHOLD, OPT_INTERVAL,
           OPT_INTERVAL_JSON, OPT_PASSES, OPT_HDR_LOG };
    static const char *pass_names[4] = {"run"};
    static char passes_buf[256];
    int n_passes = 1;
    int64_t interval_ns = 0;
    const char *interval_json = NULL;
    const char *hdr_log_path = NULL;
    static hm_threshold thresholds[HM_MAX_THRESHOLDS];
    int n_thresholds = 0;
    bool insecure = false;
    const char *cafile = NULL;
    const char *workload_name = NULL;
    static const char *plugin_opts[64];
    bool mode_given = false;
    static const struct option longopts[] = {
        {"concurrency", required_argument, 0, 'c'}, {"actions", required_argument, 0, 'n'},
        {"duration", required_argument, 0, 'd'},    {"rate", required_argument, 0, 'R'},    {"threads", required_argument, 0, 't'},
        {"url", required_argument, 0, OPT_URL},     {"route", required_argument, 0, OPT_ROUTE},
        {"action", required_argument, 0, OPT_ACTION},
        {"signal", required_argument, 0, OPT_SIGNAL},
        {"signals", required_argument, 0, OPT_SIGNALS},
        {"no-origin", no_argument, 0, OPT_NO_ORIGIN},
        {"observers", required_argument, 0, OPT_OBSERVERS},
        {"timeout", required_argument, 0, OPT_TIMEOUT},
        {"engine", required_argument, 0, OPT_ENGINE},
        {"json", required_argument, 0, OPT_JSON},
        {"mode", required_argument, 0, OPT_MODE},
        {"think", required_argument, 0, OPT_THINK},
        {"plugin", required_argument, 0, OPT_PLUGIN},
        {"opt", required_argument, 0, OPT_OPT},
        {"workload", required_argument, 0, OPT_WORKLOAD},
        {"no-cookies", no_argument, 0, OPT_NO_COOKIES},
        {"insecure", no_argument, 0, 'k'},
        {"cacert", required_argument, 0, OPT_CACERT},
        {"threshold", required_argument, 0, OPT_THRESHOLD},
        {"interval", required_argument, 0, OPT_INTERVAL},
        {"interval-json", required_argument, 0, OPT_INTERVAL_JSON},
        {"hdr-log", required_argument, 0, OPT_HDR_LOG},
        {"passes", required_argument, 0, OPT_PASSES},   {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},              {"version", no_argument, 0, 'V'},
        {0, 0, 0, 0}};
    int ch;
    long long v;
    while ((ch = getopt_long(argc, argv, "c:n:d:t:R:kqhV", longopts, NULL)) != -1) {
        switch (ch) {
        case 'c':
            if (hm_parse_int(optarg, 1, 1000000, &v) < 0) goto bad_value;
            o.concurrency = (int)v;
            break;
        case 'n':
            if (hm_parse_int(optarg, 1, (long long)1 << 50, &v) < 0) goto bad_value;
            o.actions = v;
            actions_given = true;
            break;
        case 'd':
            if (hm_parse_duration(optarg, &o.duration_ns) < 0 || o.duration_ns <= 0) goto bad_value;
            break;
        case 'R': {
            char *end;
            o.rate = strtod(optarg, &end);
            if (end == optarg || *end || !(o.rate > 0) || o.rate > 1e8) goto bad_value;
            break;
        }
        case 't':
            if (hm_parse_int(optarg, 1, 1024, &v) < 0) goto bad_value;
            o.threads = (int)v;
            break;
        case OPT_URL: o.url = optarg; break;
        case OPT_ROUTE: o.route = optarg; break;
        case OPT_ACTION: o.action = optarg; break;
        case OPT_SIGNAL: o.signal = optarg; break;
        case OPT_SIGNALS: o.signals_json = optarg; break;
        case OPT_NO_ORIGIN: o.no_origin = true; break;
        case OPT_OBSERVERS:
            if (hm_parse_int(optarg, 0, 100000, &v) < 0) goto bad_value;
            o.observers = (int)v;
            break;
        case OPT_TIMEOUT:
            if (hm_parse_duration(optarg, &o.timeout_ns) < 0 || o.timeout_ns <= 0) goto bad_value;
            break;
        case OPT_ENGINE:
            if (hm_backend_parse(optarg, &o.backend) < 0) goto bad_value;
            break;
        case OPT_JSON: o.json_path = optarg; break;
        case OPT_PLUGIN: {
            char why[512];
            if (hm_plugin_load(optarg, why, sizeof(why)) < 0) {
                fprintf(stderr, "hammer: %s\n", why);
                return EXIT_USAGE;
            }
            break;
        }
        case OPT_WORKLOAD: workload_name = optarg; break;
        case OPT_NO_COOKIES: o.no_cookies = true; break;
        case 'k': insecure = true; break;
        case OPT_CACERT: cafile = optarg; break;
        case OPT_INTERVAL:
            if (hm_parse_duration(optarg, &interval_ns) < 0 || interval_ns < 100000000) goto bad_value;
            break;
        case OPT_INTERVAL_JSON: interval_json = optarg; break;
        case OPT_HDR_LOG: hdr_log_path = optarg; break;
        case OPT_PASSES: {
            snprintf(passes_buf, sizeof(passes_buf), "%s", optarg);
            n_passes = 0;
            for (char *save, *tok = strtok_r(passes_buf, ",", &save); tok;
                 tok = strtok_r(NULL, ",", &save)) {
                if (n_passes == (int)HM_ARRAY_LEN(pass_names) || !*tok) goto bad_value;
                pass_names[n_passes++] = tok;
            }
            if (n_passes == 0) goto bad_value;
            break;
        }
        case OPT_THRESHOLD: {
            char why[256];
            if (n_thresholds == HM_MAX_THRESHOLDS) goto bad_value;
            if (hm_threshold_parse(optarg, &thresholds[n_thresholds], why, sizeof(why)) < 0) {
                fprintf(stderr, "hammer: %s\n", why);
                return EXIT_USAGE;
            }
            n_thresholds++;
            break;
        }
        case OPT_OPT:
            if (!strchr(optarg, '=') || o.n_plugin_opts == (int)HM_ARRAY_LEN(plugin_opts))
                goto bad_value;
            plugin_opts[o.n_plugin_opts++] = optarg;
            o.plugin_opts = plugin_opts;
            break;
        case OPT_MODE:
            mode_given = true;
            if (!strcmp(optarg, "browser")) o.browser = true;
            else if (!strcmp(optarg, "hammer")) o.browser = false;
            else goto bad_value;
            break;
        case OPT_THINK: {
            char lo[64];
            const char *dots = strstr(optarg, "..");
            snprintf(lo, sizeof(lo), "%.*s", dots ? (int)(dots - optarg) : (int)strlen(optarg),
                     optarg);
            if (hm_parse_duration(lo, &o.think_min_ns) < 0) goto bad_value;
            o.think_max_ns = o.think_min_ns;
            if (dots && (hm_parse_duration(dots + 2, &o.think_max_ns) < 0 ||
                         o.think_max_ns < o.think_min_ns))
                goto bad_value;
            break;
        }
        case 'q': o.quiet = true; break;
        case 'h': usage(stdout); return EXIT_PASS;
        case 'V': version(); return EXIT_PASS;
        default: usage(stderr); return EXIT_USAGE;
        }
        continue;
    bad_value:
        /* "-c abc": the option is the word before its value; "--concurrency=abc"
         * and "-cabc": the same word. */
        fprintf(stderr, "hammer: bad value '%s' for %s\n", optarg,
                optind >= 2 && argv[optind - 1] == optarg ? argv[optind - 2] : argv[optind - 1]);
        return EXIT_USAGE;
    }
    if (optind < argc && !strcmp(argv[optind], "list")) {
        hm_scenario_list(stdout);
        return EXIT_PASS;
    }
    if (optind + 2 != argc || strcmp(argv[optind], "scenario")) {
        fprintf(stderr, "hammer: expected 'scenario NAME' (see hammer --help)\n");
        return EXIT_USAGE;
    }
    const hm_scenario_def *sc = hm_scenario_find(argv[optind + 1]);
    if (!sc) {
        fprintf(stderr, "hammer: unknown scenario '%s' (hammer list shows them)\n",
                argv[optind + 1]);
        return EXIT_USAGE;
    }
    o.scenario = sc->name;
    const hm_scenario_def *wl_def = sc;
    if (workload_name) {
        static const char *const allowed[] = {"counter", "cpu", "io", "spreadsheet", NULL};
        bool ok = false;
        for (int i = 0; allowed[i]; i++) ok |= !strcmp(allowed[i], workload_name);
        wl_def = ok ? hm_scenario_find(workload_name) : NULL;
        if (!wl_def || strcmp(sc->name, "sticky")) {
            fprintf(stderr, "hammer: --workload takes counter|cpu|io|spreadsheet (sticky only)\n");
            return EXIT_USAGE;
        }
    }
    if (!o.route) o.route = wl_def->route;
    if (!o.action) o.action = wl_def->action;
    if (!o.signal) o.signal = wl_def->signal;
    o.workload = wl_def->workload;
    o.plugin = sc->plugin;
    if (sc->plugin) {
        if (mode_given && !o.browser) {
            fprintf(stderr, "hammer: plugin scenarios run in the browser model only\n");
            return EXIT_USAGE;
        }
        o.browser = true;
    }
    if (o.duration_ns && !actions_given) o.actions = 0;
    if (o.duration_ns && !strcmp(sc->name, "sticky")) {
        fprintf(stderr, "hammer: sticky compares variants by -n; -d is not supported there\n");
        return EXIT_USAGE;
    }
    if (!sc->route && !o.url) {
        fprintf(stderr, "hammer: scenario %s needs --url\n", sc->name);
        return EXIT_USAGE;
    }
    if (o.threads > o.concurrency) o.threads = o.concurrency;
    if (o.rate > 0 && (o.browser || (sc->run && strcmp(sc->name, "get")))) {
        fprintf(stderr, "hammer: -R applies to the hammer load model and to get: browser VUs and "
                        "sticky are paced by the server's patches\n");
        return EXIT_USAGE;
    }
    if (o.browser && !sc->workload) {
        fprintf(stderr, "hammer: --mode browser applies to php-via scenarios, not %s\n", sc->name);
        return EXIT_USAGE;
    }

    char why[512] = "";
    int need = o.browser ? 2 * o.concurrency + 64 : o.concurrency + o.observers + 64;
    if (raise_nofile(need, why, sizeof(why)) < 0) {
        fprintf(stderr, "hammer: %s\n", why);
        return EXIT_USAGE;
    }
    o.backend = hm_backend_resolve(o.backend, NULL);
    if (o.backend == HM_BACKEND_IO_URING && hm_io_uring_probe(NULL) < 0) {
        const char *r = NULL;
        hm_io_uring_probe(&r);
        fprintf(stderr, "hammer: --engine io_uring is not available here: %s\n", r ? r : "?");
        return EXIT_USAGE;
    }
    const char *fallback = NULL;
    hm_backend_resolve(HM_BACKEND_AUTO, &fallback);
    if (fallback && o.backend == HM_BACKEND_EPOLL && !o.quiet)
        fprintf(stderr, "hammer: io_uring unavailable (%s); using epoll\n", fallback);

    signal(SIGPIPE, SIG_IGN);
    char url_buf[128];
    if (!o.url) {
        int port = start_embedded(o.backend, !strcmp(sc->name, "sticky"), why, sizeof(why));
        if (port < 0) {
            fprintf(stderr, "hammer: %s\n", why);
            stop_embedded();
            return EXIT_USAGE;
        }
        snprintf(url_buf, sizeof(url_buf), "http://127.0.0.1:%d", port);
        o.url = url_buf;
        o.embedded = true;
    }
    int rc = hm_http_target_from_url(o.url, &o.target, &o.target_path);
    if (rc < 0) {
        fprintf(stderr, "hammer: bad --url '%s': %s\n", o.url, hm_strerror(rc));
        stop_embedded();
        return EXIT_USAGE;
    }
    hm_tls_config *tls_cfg = NULL;
    if (o.target.tls) {
        if (hm_tls_config_create(&tls_cfg, insecure, cafile, why, sizeof(why)) < 0) {
            fprintf(stderr, "hammer: %s\n", why);
            stop_embedded();
            hm_free(o.target_path);
            return EXIT_USAGE;
        }
        o.target.tls_cfg = tls_cfg;
    }

    /* Reachability first: an unreachable target is a usage-level failure. */
    int status;
    char unreachable[300];
    const char *probe_path = o.embedded ? "/_health" : (o.target_path ? o.target_path : "/");
    if (hm_probe_get(o.backend, &o.target, probe_path, o.timeout_ns, &status, unreachable,
                     sizeof(unreachable)) < 0) {
        fprintf(stderr, "hammer: target %s is unreachable: %s\n", o.url, unreachable);
        stop_embedded();
        hm_free(o.target_path);
        hm_tls_config_free(tls_cfg);
        return EXIT_USAGE;
    }

    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    FILE *ijson = NULL;
    if (interval_json && !(ijson = fopen(interval_json, "w"))) {
        fprintf(stderr, "hammer: cannot write %s: %s\n", interval_json, strerror(errno));
        stop_embedded();
        return EXIT_USAGE;
    }
    hm_hlog hlog = {0};
    if (hdr_log_path && (rc = hm_hlog_open(&hlog, hdr_log_path)) < 0) {
        fprintf(stderr, "hammer: cannot write %s: %s\n", hdr_log_path, hm_strerror(rc));
        if (ijson) fclose(ijson);
        stop_embedded();
        return EXIT_USAGE;
    }
    char full_target[4200];
    snprintf(full_target, sizeof(full_target), "%s%s", o.url,
             sc->route && o.target_path && !strcmp(o.target_path, "/") ? o.route : "");
    /* Each pass runs the scenario again against the same server. */
    hm_results *runs = hm_calloc((size_t)n_passes, sizeof(hm_results));
    if (!runs) return EXIT_FAILED;
    int ran = 0;
    for (int pi = 0; pi < n_passes && !atomic_load(&hm_stop_requested); pi++, ran++) {
        hm_results *rp = &runs[pi];
        if (hm_thread_stats_init(&rp->total) < 0) return EXIT_FAILED;
        rp->pass = pass_names[pi];
        rp->scenario = sc->name;
        rp->target = full_target;
        rp->target_note = o.embedded ? "embedded bench_app" : NULL;
        rp->engine = hm_backend_name(o.backend);
        rp->threads = o.threads;
        rp->concurrency = o.concurrency;
        rp->conns_requested = o.browser ? 2 * (uint64_t)o.concurrency
                                        : (uint64_t)o.concurrency +
                                              (sc->route ? (uint64_t)o.observers : 0);
        rp->unit = sc->route ? "actions" : "requests";
        rp->tls = o.target.tls;
        rp->tls_insecure = insecure;
        rp->check_name = sc->check_name;
        rp->rate_target = o.rate;
        /* Progress: one line per --interval, or a live line on a terminal. */
        bool live = !interval_ns && !o.quiet && isatty(STDOUT_FILENO);
        if (interval_ns || live || ijson || hlog.f) {
            hm_progress_options po = {
                .interval_ns = interval_ns ? interval_ns : (live ? 1000000000LL : 10000000000LL),
                .live_line = live,
                .quiet = o.quiet,
                .json = ijson,
                .hlog = hlog.f ? &hlog : NULL,
                .hlog_tag = n_passes > 1 ? rp->pass : NULL,
                .unit = rp->unit,
                .gauges = &gauges,
            };
            hm_progress_start(&po);
        }
        struct rusage ru0, ru1;
        getrusage(RUSAGE_SELF, &ru0);
        if (sc->run) {
            rc = sc->run(&o, rp);
        } else {
            rp->mode = o.browser ? "browser" : "hammer";
            rc = o.browser ? hm_via_browser_run(&o, rp) : hm_via_hammer_run(&o, rp);
        }
        hm_progress_stop();
        getrusage(RUSAGE_SELF, &ru1);
        double cpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) +
                     (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6 +
                     (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
                     (double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
        if (rp->wall_seconds > 0) rp->client_cpu_pct = 100.0 * cpu / (rp->wall_seconds * o.threads);
        rp->interrupted = atomic_load(&hm_stop_requested);
        memcpy(rp->thresholds, thresholds, sizeof(thresholds));
        rp->n_thresholds = n_thresholds;
        hm_thresholds_evaluate(rp);
        if (rp->fatal && rp->total.sent == 0) {
            ran++;
            break;
        }
    }
    if (ijson) fclose(ijson);
    if (hlog.f && hm_hlog_close(&hlog) < 0)
        fprintf(stderr, "hammer: writing %s failed: %s\n", hdr_log_path, strerror(EIO));
    stop_embedded();

    bool all_passed = ran > 0;
    for (int pi = 0; pi < ran; pi++) {
        if (!o.quiet) {
            if (n_passes > 1) printf("\n--- pass %s ---", runs[pi].pass);
            hm_report_print(stdout, &runs[pi]);
        }
        all_passed = all_passed && hm_results_passed(&runs[pi]);
    }
    if (!o.quiet && ran > 1) hm_report_print_passes(stdout, runs, ran);
    if (o.json_path) {
        json_t *doc = ran > 1 ? hm_report_passes_json(runs, ran) : hm_report_json(&runs[0]);
        int jrc = hm_json_write_atomic(o.json_path, doc);
        json_decref(doc);
        if (jrc < 0)
            fprintf(stderr, "hammer: cannot write %s: %s\n", o.json_path, hm_strerror(jrc));
    }
    const char *fatal = NULL;
    bool nothing_sent = true;
    for (int pi = 0; pi < ran; pi++) {
        if (runs[pi].fatal && !fatal) fatal = runs[pi].fatal;
        if (runs[pi].total.sent) nothing_sent = false;
    }
    char fatal_copy[512] = "";
    if (fatal) snprintf(fatal_copy, sizeof(fatal_copy), "%s", fatal);
    for (int pi = 0; pi < ran; pi++) {
        hm_thread_stats_destroy(&runs[pi].total);
        for (int i = 0; i < runs[pi].n_variants; i++)
            hm_thread_stats_destroy(&runs[pi].variants[i].stats);
    }
    hm_free(runs);
    hm_free(o.target_path);
    hm_tls_config_free(tls_cfg);
    if (fatal_copy[0] && nothing_sent) {
        fprintf(stderr, "hammer: %s\n", fatal_copy);
        return EXIT_USAGE;
    }
    if (rc < 0 && !fatal_copy[0]) fprintf(stderr, "hammer: run failed: %s\n", hm_strerror(rc));
    return all_passed ? EXIT_PASS : EXIT_FAILED;
}
