/* hammer's command line: argv into a hm_cli, then the checks that need the
 * scenario (its capabilities), the open-file limit and the engine. */
#include "cli/options.h"

#include "proto/tls.h"
#include "cli/metrics.h"

#include <ctype.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hammer [options] scenario NAME [options]\n"
            "       hammer [options] flow FILE.yaml     (user flows from a file; docs/flows.md)\n"
            "       hammer import-har FILE.har > flow.yaml  (a browser recording as a flow)\n"
            "       hammer matrix [options] PROFILES.ini  (profiles compared; matrix --help)\n"
            "       hammer merge [options] SHARD.json...  (shards into one run; merge --help)\n"
            "       hammer [options] URL | get URL    (scenario get against URL, as wrk does)\n"
            "       hammer report RUN.json [--html F]   (a saved run's summary; HTML, Markdown)\n"
            "       hammer list | --help | --version\n"
            "\n"
            "Drives php-via apps (PHP + OpenSwoole + Datastar over SSE) like browsers do and\n"
            "records latency histograms. Without --url, hammer starts its embedded bench_app\n"
            "(a php-via stand-in) on a free loopback port and stops it at the end.\n"
            "\n"
            "options:\n"
            "  -c, --concurrency N   connections / actions in flight (200)\n"
            "  -n, --actions N       actions (or requests) in total (5000)\n"
            "  -d, --duration T      run for T (e.g. 30s, 10m, 2h; a bare number is seconds)\n"
            "                        instead of -n\n"
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
            "      --think T[..T2]   --mode browser only: pause between a VU's actions (0)\n"
            "      --no-reload       on a lost context (400 Invalid context, php-via's reload\n"
            "                        script) count it, do not reload the page as a browser does\n"
            "      --timeout T       per-request timeout (5s)\n"
            "                        (durations other than -d need a unit: us, ms, s, m, h)\n"
            "      --http2           HTTP/2: h2 through ALPN for https URLs, h2c with prior\n"
            "                        knowledge for http ones; a browser VU runs its page,\n"
            "                        SSE stream and actions on one connection\n"
            "      --streams N       with --http2: N concurrent streams on each of the -c\n"
            "                        connections (h2load's -m; hammer model and get) (1)\n"
            "      --engine E        auto | io_uring | epoll (auto)\n"
            "      --compressed      send Accept-Encoding: gzip, deflate, br and decode the\n"
            "                        answers (default in browser mode)\n"
            "      --no-compressed   ask for no compression (default in the other modes)\n"
            "  -k, --insecure        https: do not verify the server's certificate\n"
            "      --cacert FILE     https: trust these CA certificates (default: system)\n"
            "      --tls-handshakes N  https: at most N TLS handshakes at once per thread, the\n"
            "                        other connections waiting their turn (256; 0: all at once)\n"
            "      --json FILE       write the results as JSON (see docs/output.md)\n"
            "      --html FILE       write an HTML report: tables and charts (docs/reports.md)\n"
            "  -m, --method M        get: the request method (GET)\n"
            "  -H, --header 'N: V'   get: a request header (repeatable)\n"
            "      --body FILE       get: the request body, from FILE or - (stdin)\n"
            "      --workload NAME   sticky: counter | cpu | io | spreadsheet (counter)\n"
            "      --no-cookies      sticky: VUs keep no cookies (what a balancer ignoring\n"
            "                        them sees)\n"
            "      --plugin FILE.so  load scenarios from a plugin (include/hammer/scenario.h)\n"
            "      --opt KEY=VALUE   an option for a plugin scenario (repeatable)\n"
            "      --interval T      print one progress line per T (default on a terminal:\n"
            "                        the live view, full-screen; q stops as Ctrl-C)\n"
            "      --no-tui          on a terminal, a live line instead of the live view\n"
            "      --interval-json F write one JSON line per interval to F\n"
            "      --hdr-log FILE    write an HdrHistogram interval log (compressed V2,\n"
            "                        microseconds; one histogram per interval)\n"
            "      --metrics-listen HOST:PORT  serve OpenMetrics for Prometheus while the run\n"
            "                        goes (e.g. 127.0.0.1:9464; /metrics; docs/metrics.md)\n"
            "      --metrics-linger T  keep /metrics up for T after the run (final counts\n"
            "                        for a last scrape), then exit; Ctrl-C ends it sooner\n"
            "      --watch-grace T   after the run, wait up to T (10s) for the server's\n"
            "                        /_health counts to come back to where they were\n"
            "      --no-server-watch do not sample the target's /_health\n"
            "      --server-pid PID  sample this process's RSS, CPU, fds and threads (with\n"
            "                        its descendants) each interval; repeatable; the\n"
            "                        embedded bench_app is sampled without it\n"
            "      --server-metrics URL  the same from a Prometheus endpoint (process-\n"
            "                        exporter, or a client library's process_* metrics),\n"
            "                        reported apart from --server-pid's (\"Server exporter\")\n"
            "      --hgrm FILE       write the latency distribution in HdrHistogram's .hgrm\n"
            "                        layout (milliseconds), for its plotters\n"
            "      --passes A,B      run the scenario once per name, back to back against\n"
            "                        the same server (e.g. cold,warm), and compare them\n"
            "      --threshold EXPR  fail the run (exit 1) unless EXPR holds: p99<50ms,\n"
            "                        patch_p99<200ms, max<1s, ok>=100%%, rps>=1000 (repeatable)\n"
            "      --shard I/N       do shard I's share (0-based) of a run spread over N\n"
            "                        processes: -c, -n and -R are split; merge the shards'\n"
            "                        --json files with hammer merge (docs/distributed.md)\n"
            "      --start-at TIME   start the load at TIME (UTC RFC 3339, e.g.\n"
            "                        2026-12-01T10:00:00Z, or +10s from now), after set-up\n"
            "      --run-id ID       name the run the shards belong to (default: derived\n"
            "                        from the options and --start-at)\n"
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

static void set_defaults(hm_cli *cli)
{
    memset(cli, 0, sizeof(*cli));
    cli->o = (hm_options){
        .concurrency = 200,
        .actions = 5000,
        .timeout_ns = 5000000000LL,
        .observers = 1,
        .backend = HM_BACKEND_AUTO,
        .streams = 1,
    };
    cli->tls_handshakes = HM_TLS_HANDSHAKES_DEFAULT;
    /* One thread per CPU hammer may run on: under taskset (or hammer
     * matrix's hammer_cpus) that is fewer than the machine has. */
    cpu_set_t runnable;
    long cpus = sched_getaffinity(0, sizeof(runnable), &runnable) == 0
                    ? CPU_COUNT(&runnable)
                    : sysconf(_SC_NPROCESSORS_ONLN);
    cli->o.threads = cpus > 0 ? (int)cpus : 1;
    cli->pass_names[0] = "run";
    cli->n_passes = 1;
    cli->compressed = -1;
    cli->watch_grace_ns = 10000000000LL;
}

enum {
    OPT_URL = 1000,
    OPT_ROUTE,
    OPT_ACTION,
    OPT_SIGNAL,
    OPT_SIGNALS,
    OPT_NO_ORIGIN,
    OPT_NO_RELOAD,
    OPT_OBSERVERS,
    OPT_TIMEOUT,
    OPT_ENGINE,
    OPT_JSON,
    OPT_MODE,
    OPT_THINK,
    OPT_PLUGIN,
    OPT_OPT,
    OPT_WORKLOAD,
    OPT_NO_COOKIES,
    OPT_CACERT,
    OPT_THRESHOLD,
    OPT_INTERVAL,
    OPT_INTERVAL_JSON,
    OPT_PASSES,
    OPT_HDR_LOG,
    OPT_SHARD,
    OPT_START_AT,
    OPT_RUN_ID,
    OPT_HGRM,
    OPT_HTML,
    OPT_METRICS_LISTEN,
    OPT_METRICS_LINGER,
    OPT_BODY,
    OPT_COMPRESSED,
    OPT_NO_COMPRESSED,
    OPT_WATCH_GRACE,
    OPT_NO_SERVER_WATCH,
    OPT_NO_TUI,
    OPT_SERVER_PID,
    OPT_SERVER_METRICS,
    OPT_HTTP2,
    OPT_STREAMS,
    OPT_TLS_HANDSHAKES,
};

static const struct option longopts[] = {
    {"concurrency", required_argument, 0, 'c'},
    {"actions", required_argument, 0, 'n'},
    {"duration", required_argument, 0, 'd'},
    {"rate", required_argument, 0, 'R'},
    {"threads", required_argument, 0, 't'},
    {"url", required_argument, 0, OPT_URL},
    {"route", required_argument, 0, OPT_ROUTE},
    {"action", required_argument, 0, OPT_ACTION},
    {"signal", required_argument, 0, OPT_SIGNAL},
    {"signals", required_argument, 0, OPT_SIGNALS},
    {"no-origin", no_argument, 0, OPT_NO_ORIGIN},
    {"no-reload", no_argument, 0, OPT_NO_RELOAD},
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
    {"tls-handshakes", required_argument, 0, OPT_TLS_HANDSHAKES},
    {"threshold", required_argument, 0, OPT_THRESHOLD},
    {"interval", required_argument, 0, OPT_INTERVAL},
    {"interval-json", required_argument, 0, OPT_INTERVAL_JSON},
    {"hdr-log", required_argument, 0, OPT_HDR_LOG},
    {"hgrm", required_argument, 0, OPT_HGRM},
    {"html", required_argument, 0, OPT_HTML},
    {"metrics-listen", required_argument, 0, OPT_METRICS_LISTEN},
    {"metrics-linger", required_argument, 0, OPT_METRICS_LINGER},
    {"passes", required_argument, 0, OPT_PASSES},
    {"shard", required_argument, 0, OPT_SHARD},
    {"start-at", required_argument, 0, OPT_START_AT},
    {"run-id", required_argument, 0, OPT_RUN_ID},
    {"method", required_argument, 0, 'm'},
    {"header", required_argument, 0, 'H'},
    {"body", required_argument, 0, OPT_BODY},
    {"compressed", no_argument, 0, OPT_COMPRESSED},
    {"no-compressed", no_argument, 0, OPT_NO_COMPRESSED},
    {"watch-grace", required_argument, 0, OPT_WATCH_GRACE},
    {"no-server-watch", no_argument, 0, OPT_NO_SERVER_WATCH},
    {"no-tui", no_argument, 0, OPT_NO_TUI},
    {"server-pid", required_argument, 0, OPT_SERVER_PID},
    {"server-metrics", required_argument, 0, OPT_SERVER_METRICS},
    {"http2", no_argument, 0, OPT_HTTP2},
    {"streams", required_argument, 0, OPT_STREAMS},
    {"quiet", no_argument, 0, 'q'},
    {"help", no_argument, 0, 'h'},
    {"version", no_argument, 0, 'V'},
    {0, 0, 0, 0},
};

/* Results of one option besides HM_CLI_GO and the exit codes. */
enum { BAD_VALUE = -2 };

/* The bounds parse_one holds values to, and allowed_values words. */
#define MAX_CONCURRENCY 1000000
#define MAX_THREADS 1024
#define MAX_OBSERVERS 100000
#define MAX_STREAMS 1000
#define MAX_TLS_HANDSHAKES 100000
#define MAX_RATE 1e8
#define MIN_INTERVAL_NS 100000000LL

/* What a bad value of option ch should have been, for its error line. */
static const char *allowed_values(int ch)
{
    static char buf[160];
    switch (ch) {
    case 'c':
        snprintf(buf, sizeof(buf), "a whole number from 1 to %d", MAX_CONCURRENCY);
        return buf;
    case 'n':
        return "a whole number of at least 1";
    case 'd':
        return "a duration above 0, e.g. 30s, 10m, 1m30s, or a bare number of seconds";
    case 'R':
        snprintf(buf, sizeof(buf), "a rate above 0 and at most %.0f per second", MAX_RATE);
        return buf;
    case 't':
        snprintf(buf, sizeof(buf), "a whole number from 1 to %d", MAX_THREADS);
        return buf;
    case OPT_OBSERVERS:
        snprintf(buf, sizeof(buf), "a whole number from 0 to %d", MAX_OBSERVERS);
        return buf;
    case OPT_STREAMS:
        snprintf(buf, sizeof(buf), "a whole number from 1 to %d", MAX_STREAMS);
        return buf;
    case OPT_TLS_HANDSHAKES:
        snprintf(buf, sizeof(buf), "a whole number from 0 (no bound) to %d", MAX_TLS_HANDSHAKES);
        return buf;
    case OPT_TIMEOUT:
        return "a duration above 0 with a unit (us, ms, s, m, h), e.g. 5s or 1m30s";
    case OPT_WATCH_GRACE:
        return "a duration with a unit (us, ms, s, m, h), e.g. 10s; 0s waits not at all";
    case OPT_INTERVAL:
        snprintf(buf, sizeof(buf), "a duration of at least %lldms with a unit, e.g. 10s",
                 MIN_INTERVAL_NS / 1000000);
        return buf;
    case OPT_THINK:
        return "a duration with a unit, or a range LOW..HIGH with LOW <= HIGH, e.g. "
               "50ms..200ms";
    case OPT_ENGINE:
        return "auto, io_uring or epoll";
    case OPT_MODE:
        return "hammer or browser";
    case OPT_METRICS_LISTEN:
        return "HOST:PORT, e.g. 127.0.0.1:9464";
    case OPT_PASSES:
        snprintf(buf, sizeof(buf), "1 to %d names separated by commas, e.g. cold,warm",
                 HM_CLI_MAX_PASSES);
        return buf;
    case OPT_SHARD:
        return "I/N with 0 <= I < N, e.g. 0/4";
    case OPT_START_AT:
        return "a UTC time in RFC 3339 (2026-12-01T10:00:00Z) or +DURATION from now";
    case OPT_RUN_ID:
        snprintf(buf, sizeof(buf), "a name of 1 to %zu characters",
                 sizeof(((hm_shard *)0)->run_id) - 1);
        return buf;
    case 'm':
        return "a method token such as GET, POST or PURGE";
    case OPT_THRESHOLD:
        snprintf(buf, sizeof(buf), "at most %d --threshold options", HM_MAX_THRESHOLDS);
        return buf;
    case OPT_OPT:
        snprintf(buf, sizeof(buf), "KEY=VALUE, at most %d of them", HM_CLI_MAX_PLUGIN_OPTS);
        return buf;
    default:
        return NULL;
    }
}

static int parse_passes(hm_cli *cli, const char *arg)
{
    snprintf(cli->passes_buf, sizeof(cli->passes_buf), "%s", arg);
    cli->n_passes = 0;
    for (char *save, *tok = strtok_r(cli->passes_buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (cli->n_passes == HM_CLI_MAX_PASSES || !*tok) return BAD_VALUE;
        cli->pass_names[cli->n_passes++] = tok;
    }
    return cli->n_passes == 0 ? BAD_VALUE : HM_CLI_GO;
}

/* The option's name as the user knows it ("--think", "-d"). */
static const char *option_name(int ch)
{
    static char buf[40];
    for (const struct option *lo = longopts; lo->name; lo++)
        if (lo->val == ch) {
            snprintf(buf, sizeof(buf), "--%s", lo->name);
            return buf;
        }
    snprintf(buf, sizeof(buf), "-%c", ch);
    return buf;
}

/* Durations other than -d take a unit: "--think 100" would otherwise be
 * 100 seconds per click without a word. */
static int unit_missing(int ch, const char *arg)
{
    if (strstr(arg, "..")) {
        fprintf(stderr, "hammer: %s %s needs a unit on both ends, e.g. 50ms..200ms\n",
                option_name(ch), arg);
        return HM_EXIT_USAGE;
    }
    fprintf(stderr,
            "hammer: %s %s needs a unit, e.g. %sms or %ss (only -d takes bare seconds, as in "
            "wrk)\n",
            option_name(ch), arg, arg, arg);
    return HM_EXIT_USAGE;
}

static bool has_unit(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && isalpha((unsigned char)s[n - 1]);
}

/* A duration with a unit into *ns (> 0 unless zero_ok). */
static int parse_duration_opt(int ch, const char *arg, int64_t *ns, bool zero_ok)
{
    if (hm_parse_duration(arg, ns) < 0) return BAD_VALUE;
    if (!has_unit(arg)) return unit_missing(ch, arg);
    return *ns > 0 || zero_ok ? HM_CLI_GO : BAD_VALUE;
}

/* --think T or T..T2 */
static int parse_think(hm_options *o, const char *arg)
{
    char lo[64];
    const char *dots = strstr(arg, "..");
    snprintf(lo, sizeof(lo), "%.*s", dots ? (int)(dots - arg) : (int)strlen(arg), arg);
    if (hm_parse_duration(lo, &o->think_min_ns) < 0) return BAD_VALUE;
    if (!has_unit(lo) || (dots && !has_unit(dots + 2))) return unit_missing(OPT_THINK, arg);
    o->think_max_ns = o->think_min_ns;
    if (dots &&
        (hm_parse_duration(dots + 2, &o->think_max_ns) < 0 || o->think_max_ns < o->think_min_ns))
        return BAD_VALUE;
    return HM_CLI_GO;
}

/* --url needs a scheme: "127.0.0.1:3000" is a common slip. */
static int check_url(const char *url)
{
    if (strstr(url, "://")) {
        if (!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8)) return HM_CLI_GO;
        fprintf(stderr, "hammer: --url %s: only http:// and https:// URLs are supported\n", url);
        return HM_EXIT_USAGE;
    }
    fprintf(stderr, "hammer: --url %s has no scheme; did you mean http://%s ?\n", url, url);
    return HM_EXIT_USAGE;
}

/* -H "Name: value": a header a request line can carry. */
static int add_header(hm_cli *cli, const char *arg)
{
    hm_options *o = &cli->o;
    const char *colon = strchr(arg, ':');
    size_t name_len = colon ? (size_t)(colon - arg) : 0;
    if (!colon || name_len == 0 || strcspn(arg, " \t\r\n") < name_len || strpbrk(colon, "\r\n")) {
        fprintf(stderr, "hammer: -H '%s' is not a header line (e.g. -H 'Accept: text/html')\n",
                arg);
        return HM_EXIT_USAGE;
    }
    if (o->n_headers == HM_MAX_REQUEST_HEADERS) {
        fprintf(stderr, "hammer: at most %d -H headers\n", HM_MAX_REQUEST_HEADERS);
        return HM_EXIT_USAGE;
    }
    cli->headers[o->n_headers++] = arg;
    o->headers = cli->headers;
    return HM_CLI_GO;
}

/* --body FILE or - (stdin), read whole. */
static int read_body(hm_cli *cli, const char *path)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "hammer: cannot read --body %s: %s\n", path, strerror(errno));
        return HM_EXIT_USAGE;
    }
    size_t len = 0, cap = 4096;
    char *buf = hm_alloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            char *bigger = cap < (64u << 20) ? hm_realloc(buf, cap * 2) : NULL;
            if (!bigger) {
                hm_free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    bool failed = !buf || ferror(f);
    if (f != stdin) fclose(f);
    if (failed) {
        hm_free(buf);
        fprintf(stderr, "hammer: cannot read --body %s (read error, or over 64 MiB)\n", path);
        return HM_EXIT_USAGE;
    }
    hm_free(cli->body);
    cli->body = buf;
    cli->body_path = path;
    cli->o.body = buf;
    cli->o.body_len = len;
    return HM_CLI_GO;
}

/* One option: HM_CLI_GO, BAD_VALUE, or an exit code (message printed). */
static int parse_one(hm_cli *cli, int ch, const char *arg)
{
    hm_options *o = &cli->o;
    long long v;
    char why[512];
    switch (ch) {
    case 'c':
        if (hm_parse_int(arg, 1, MAX_CONCURRENCY, &v) < 0) return BAD_VALUE;
        o->concurrency = (int)v;
        return HM_CLI_GO;
    case 'n':
        if (hm_parse_int(arg, 1, (long long)1 << 50, &v) < 0) return BAD_VALUE;
        o->actions = v;
        cli->actions_given = true;
        return HM_CLI_GO;
    case 'd':
        cli->duration_arg = arg;
        return hm_parse_duration(arg, &o->duration_ns) < 0 || o->duration_ns <= 0 ? BAD_VALUE
                                                                                  : HM_CLI_GO;
    case 'R': {
        char *end;
        o->rate = strtod(arg, &end);
        return end == arg || *end || !(o->rate > 0) || o->rate > MAX_RATE ? BAD_VALUE : HM_CLI_GO;
    }
    case 't':
        if (hm_parse_int(arg, 1, MAX_THREADS, &v) < 0) return BAD_VALUE;
        o->threads = (int)v;
        return HM_CLI_GO;
    case OPT_URL:
        o->url = arg;
        return check_url(arg);
    case OPT_ROUTE:
        o->route = arg;
        return HM_CLI_GO;
    case OPT_ACTION:
        o->action = arg;
        return HM_CLI_GO;
    case OPT_SIGNAL:
        o->signal = arg;
        return HM_CLI_GO;
    case OPT_SIGNALS:
        o->signals_json = arg;
        return HM_CLI_GO;
    case OPT_NO_ORIGIN:
        o->no_origin = true;
        return HM_CLI_GO;
    case OPT_OBSERVERS:
        if (hm_parse_int(arg, 0, MAX_OBSERVERS, &v) < 0) return BAD_VALUE;
        o->observers = (int)v;
        return HM_CLI_GO;
    case OPT_TIMEOUT:
        return parse_duration_opt(ch, arg, &o->timeout_ns, false);
    case OPT_ENGINE:
        return hm_backend_parse(arg, &o->backend) < 0 ? BAD_VALUE : HM_CLI_GO;
    case OPT_JSON:
        o->json_path = arg;
        return HM_CLI_GO;
    case OPT_PLUGIN:
        if (hm_plugin_load(arg, why, sizeof(why)) < 0) {
            fprintf(stderr, "hammer: %s\n", why);
            return HM_EXIT_USAGE;
        }
        return HM_CLI_GO;
    case OPT_WORKLOAD:
        cli->workload_name = arg;
        return HM_CLI_GO;
    case OPT_NO_RELOAD:
        o->no_reload = true;
        return HM_CLI_GO;
    case OPT_NO_COOKIES:
        o->no_cookies = true;
        return HM_CLI_GO;
    case 'k':
        cli->insecure = true;
        return HM_CLI_GO;
    case OPT_CACERT:
        cli->cafile = arg;
        return HM_CLI_GO;
    case OPT_TLS_HANDSHAKES:
        if (hm_parse_int(arg, 0, MAX_TLS_HANDSHAKES, &v) < 0) return BAD_VALUE;
        cli->tls_handshakes = (int)v;
        return HM_CLI_GO;
    case OPT_INTERVAL: {
        int rc = parse_duration_opt(ch, arg, &cli->interval_ns, false);
        return rc == HM_CLI_GO && cli->interval_ns < MIN_INTERVAL_NS ? BAD_VALUE : rc;
    }
    case OPT_INTERVAL_JSON:
        cli->interval_json = arg;
        return HM_CLI_GO;
    case OPT_HDR_LOG:
        cli->hdr_log_path = arg;
        return HM_CLI_GO;
    case OPT_HGRM:
        cli->hgrm_path = arg;
        return HM_CLI_GO;
    case OPT_HTML:
        cli->html_path = arg;
        return HM_CLI_GO;
    case OPT_COMPRESSED:
    case OPT_NO_COMPRESSED:
        cli->compressed = ch == OPT_COMPRESSED;
        return HM_CLI_GO;
    case OPT_WATCH_GRACE:
        cli->watch_grace_given = true;
        return parse_duration_opt(ch, arg, &cli->watch_grace_ns, true);
    case OPT_NO_SERVER_WATCH:
        cli->no_server_watch = true;
        return HM_CLI_GO;
    case OPT_NO_TUI:
        cli->no_tui = true;
        return HM_CLI_GO;
    case OPT_SERVER_PID:
        if (cli->n_server_pids == HM_SERVER_PIDS_MAX || hm_parse_int(arg, 1, INT32_MAX, &v) < 0)
            return BAD_VALUE;
        cli->server_pids[cli->n_server_pids++] = (pid_t)v;
        return HM_CLI_GO;
    case OPT_SERVER_METRICS:
        cli->server_metrics = arg;
        return HM_CLI_GO;
    case OPT_METRICS_LISTEN:
        cli->metrics_listen = arg;
        return hm_metrics_parse_listen(arg) < 0 ? BAD_VALUE : HM_CLI_GO;
    case OPT_METRICS_LINGER:
        return parse_duration_opt(ch, arg, &cli->metrics_linger_ns, false);
    case OPT_PASSES:
        return parse_passes(cli, arg);
    case OPT_SHARD:
        return hm_shard_parse_spec(&cli->shard, arg) < 0 ? BAD_VALUE : HM_CLI_GO;
    case OPT_START_AT:
        cli->shard.start_at_arg = arg;
        return hm_shard_parse_start_at(arg, &cli->shard.start_at_ns) < 0 ? BAD_VALUE : HM_CLI_GO;
    case OPT_RUN_ID:
        cli->shard.run_id_arg = arg;
        return *arg && strlen(arg) < sizeof(cli->shard.run_id) ? HM_CLI_GO : BAD_VALUE;
    case 'm':
        /* a token (RFC 9110): what a request line can carry */
        if (!*arg || strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                                 "!#$%&'*+-.^_`|~") != strlen(arg))
            return BAD_VALUE;
        o->method = arg;
        return HM_CLI_GO;
    case 'H':
        return add_header(cli, arg);
    case OPT_BODY:
        return read_body(cli, arg);
    case OPT_THRESHOLD:
        if (cli->n_thresholds == HM_MAX_THRESHOLDS) return BAD_VALUE;
        if (hm_threshold_parse(arg, &cli->thresholds[cli->n_thresholds], why, sizeof(why)) < 0) {
            fprintf(stderr, "hammer: %s\n", why);
            return HM_EXIT_USAGE;
        }
        cli->n_thresholds++;
        return HM_CLI_GO;
    case OPT_OPT:
        if (!strchr(arg, '=') || o->n_plugin_opts == HM_CLI_MAX_PLUGIN_OPTS) return BAD_VALUE;
        cli->plugin_opts[o->n_plugin_opts++] = arg;
        o->plugin_opts = cli->plugin_opts;
        return HM_CLI_GO;
    case OPT_MODE:
        cli->mode_given = true;
        if (!strcmp(arg, "browser"))
            o->browser = true;
        else if (!strcmp(arg, "hammer"))
            o->browser = false;
        else
            return BAD_VALUE;
        return HM_CLI_GO;
    case OPT_THINK:
        return parse_think(o, arg);
    case OPT_HTTP2:
        o->http2 = true;
        return HM_CLI_GO;
    case OPT_STREAMS:
        if (hm_parse_int(arg, 1, MAX_STREAMS, &v) < 0) return BAD_VALUE;
        o->streams = (int)v;
        return HM_CLI_GO;
    case 'q':
        o->quiet = true;
        return HM_CLI_GO;
    case 'h':
        cli->help_asked = true; /* after the loop: `scenario NAME --help` is NAME's */
        return HM_CLI_GO;
    case 'V':
        version();
        return HM_EXIT_PASS;
    default:
        return HM_EXIT_USAGE; /* reported by hm_cli_parse */
    }
}

/* An option getopt did not know, or one missing its value: one line, with
 * the nearest option's name when one is near. */
static int unknown_option(int ch, const char *word)
{
    if (ch == ':') {
        fprintf(stderr, "hammer: %s needs a value (hammer --help)\n", word);
        return HM_EXIT_USAGE;
    }
    char name[64];
    snprintf(name, sizeof(name), "%s", word + strspn(word, "-"));
    name[strcspn(name, "=")] = 0;
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    for (const struct option *lo = longopts; lo->name; lo++) {
        size_t d = hm_edit_distance(name, lo->name);
        if (d < best_d) best_d = d, best = lo->name;
    }
    char shown[80];
    snprintf(shown, sizeof(shown), "%.*s", (int)strcspn(word, "="), word);
    if (best && hm_near_miss(name, best))
        fprintf(stderr, "hammer: unknown option '%s'; did you mean --%s? (hammer --help)\n", shown,
                best);
    else
        fprintf(stderr, "hammer: unknown option '%s' (hammer --help lists them)\n", shown);
    return HM_EXIT_USAGE;
}

/* A scenario name that is none, with the one it is a slip of. */
static int unknown_scenario(const char *name)
{
    const char *near = hm_scenario_nearest(name);
    if (near)
        fprintf(stderr,
                "hammer: unknown scenario '%s'; did you mean '%s'? (hammer list shows them)\n",
                name, near);
    else
        fprintf(stderr, "hammer: unknown scenario '%s' (hammer list shows them)\n", name);
    return HM_EXIT_USAGE;
}

static bool is_url(const char *word)
{
    return !strncmp(word, "http://", 7) || !strncmp(word, "https://", 8);
}

/* `hammer URL` and `hammer get URL`, as wrk, oha and hey are called: the
 * get scenario against URL. */
static int url_shorthand(hm_cli *cli, const char *url)
{
    if (cli->o.url) {
        fprintf(stderr, "hammer: the URL is given twice (--url %s and %s); give it once\n",
                cli->o.url, url);
        return HM_EXIT_USAGE;
    }
    cli->o.url = url;
    cli->scenario_name = "get";
    return check_url(url);
}

/* A word where a command belongs that is none: the command it is a slip
 * of, or the scenario it names ("spreadsheet": "scenario spreadsheet"). */
static int unknown_command(const char *word)
{
    static const char *const commands[] = {"scenario", "flow",   "list",       "matrix",
                                           "merge",    "report", "import-har", "get"};
    const char *cmd = NULL;
    for (size_t i = 0; i < HM_ARRAY_LEN(commands) && !cmd; i++)
        if (hm_near_miss(word, commands[i])) cmd = commands[i];
    const char *sc = hm_scenario_find(word) ? word : hm_scenario_nearest(word);
    if (sc && (!cmd || hm_scenario_find(word)))
        fprintf(stderr,
                "hammer: unknown command '%s'; did you mean 'scenario %s'? (hammer --help)\n", word,
                sc);
    else if (cmd)
        fprintf(stderr, "hammer: unknown command '%s'; did you mean '%s'? (hammer --help)\n", word,
                cmd);
    else
        fprintf(stderr,
                "hammer: unknown command '%s' (expected scenario NAME, flow FILE, URL, get URL, "
                "list, matrix, merge, report or import-har; hammer --help)\n",
                word);
    return HM_EXIT_USAGE;
}

/* --help: the general help, or with `scenario NAME` that scenario's. */
static int print_help(int rest, char **words)
{
    if (rest < 2 || strcmp(words[0], "scenario")) {
        usage(stdout);
        return HM_EXIT_PASS;
    }
    const hm_scenario_def *sc = hm_scenario_find(words[1]);
    if (!sc) return unknown_scenario(words[1]);
    hm_scenario_help(stdout, sc);
    return HM_EXIT_PASS;
}

/* The words after the options: what to run. */
static int parse_command(hm_cli *cli, int rest, char **words)
{
    if (cli->help_asked) return print_help(rest, words);
    if (rest >= 1 && !strcmp(words[0], "list")) {
        if (rest > 1) {
            fprintf(stderr, "hammer: unexpected '%s' after list\n", words[1]);
            return HM_EXIT_USAGE;
        }
        hm_scenario_list(stdout);
        return HM_EXIT_PASS;
    }
    if (rest >= 1 && !strcmp(words[0], "flow")) {
        if (rest != 2) {
            fprintf(stderr,
                    rest < 2 ? "hammer: expected 'flow FILE.yaml' (see hammer --help)\n"
                             : "hammer: unexpected '%s' after 'flow %s'\n",
                    rest > 2 ? words[2] : "", rest > 2 ? words[1] : "");
            return HM_EXIT_USAGE;
        }
        cli->scenario_name = "flow";
        cli->o.flow_file = words[1];
        return HM_CLI_GO;
    }
    if (rest == 1 && is_url(words[0])) return url_shorthand(cli, words[0]);
    if (rest >= 1 && !strcmp(words[0], "get")) {
        if (rest == 2 && is_url(words[1])) return url_shorthand(cli, words[1]);
        if (rest > 2) {
            fprintf(stderr, "hammer: unexpected '%s' after 'get %s'\n", words[2], words[1]);
            return HM_EXIT_USAGE;
        }
        fprintf(stderr, "hammer: expected 'get http://HOST:PORT/PATH' (or --url URL scenario "
                        "get)\n");
        return HM_EXIT_USAGE;
    }
    if (rest == 0) {
        fprintf(stderr, "hammer: expected 'scenario NAME' or 'flow FILE' (see hammer --help)\n");
        return HM_EXIT_USAGE;
    }
    if (strcmp(words[0], "scenario")) return unknown_command(words[0]);
    if (rest == 1) {
        fprintf(stderr, "hammer: expected 'scenario NAME' or 'flow FILE' (see hammer --help)\n");
        return HM_EXIT_USAGE;
    }
    if (rest > 2) {
        fprintf(stderr, "hammer: unexpected '%s' after 'scenario %s'\n", words[2], words[1]);
        return HM_EXIT_USAGE;
    }
    cli->scenario_name = words[1];
    return HM_CLI_GO;
}

int hm_cli_parse(hm_cli *cli, int argc, char **argv)
{
    set_defaults(cli);
    /* getopt_long permutes argv (options before operands); the reports
     * quote the command line as it was typed, so they get a copy. */
    cli->argc = argc;
    cli->argv = hm_alloc(((size_t)argc + 1) * sizeof(char *));
    if (!cli->argv) {
        fprintf(stderr, "hammer: out of memory\n");
        return HM_EXIT_FAILED;
    }
    memcpy(cli->argv, argv, ((size_t)argc + 1) * sizeof(char *));
    int ch;
    opterr = 0; /* unknown options get one line from unknown_option, not getopt's */
    while ((ch = getopt_long(argc, argv, ":c:n:d:t:R:kqhVm:H:", longopts, NULL)) != -1) {
        if (ch == '?' || ch == ':') {
            /* optopt: the letter of a short option (argv may hold a cluster
             * such as -kx), or a long option's value (then argv names it) */
            char shortw[3] = {'-', (char)optopt, 0};
            bool letter = ch == '?' && optopt > 0 && optopt < 128;
            return unknown_option(ch, letter ? shortw : argv[optind - 1]);
        }
        int rc = parse_one(cli, ch, optarg);
        if (rc == HM_CLI_GO) continue;
        if (rc != BAD_VALUE) return rc;
        /* "-c abc": the option is the word before its value; "--concurrency=abc"
         * and "-cabc": the same word. */
        const char *allowed = allowed_values(ch);
        fprintf(stderr, "hammer: bad value '%s' for %s%s%s\n", optarg,
                optind >= 2 && argv[optind - 1] == optarg ? argv[optind - 2] : argv[optind - 1],
                allowed ? ": expected " : "", allowed ? allowed : "");
        return HM_EXIT_USAGE;
    }
    return parse_command(cli, argc - optind, argv + optind);
}

void hm_cli_free(hm_cli *cli)
{
    hm_free(cli->body);
    cli->body = NULL;
    hm_free(cli->argv);
    cli->argv = NULL;
}

/* ---- validation ----------------------------------------------------------- */

static bool is_workload(const hm_scenario_caps *c)
{
    return c->is_workload;
}
static bool takes_workload(const hm_scenario_caps *c)
{
    return c->takes_workload;
}
static bool takes_request_options(const hm_scenario_caps *c)
{
    return c->custom_request;
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("hammer: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return HM_EXIT_USAGE;
}

/* --workload picks the page, action and check of a scenario that takes one. */
static int pick_workload(hm_cli *cli, const hm_scenario_def **wl)
{
    *wl = cli->sc;
    if (!cli->workload_name) return HM_CLI_GO;
    *wl = hm_scenario_find(cli->workload_name);
    if (*wl && (*wl)->caps.is_workload && cli->sc->caps.takes_workload) return HM_CLI_GO;
    char names[256], takers[128];
    hm_scenario_names(is_workload, "|", names, sizeof(names));
    hm_scenario_names(takes_workload, ", ", takers, sizeof(takers));
    fprintf(stderr, "hammer: --workload takes %s (%s only)\n", names, takers);
    return HM_EXIT_USAGE;
}

/* Raises the soft open-file limit to the hard one; -EMFILE (and why) when
 * even that cannot hold the run's sockets. */
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

/* The engine the run will use; io_uring named explicitly must work here. */
static int pick_backend(hm_options *o)
{
    o->backend = hm_backend_resolve(o->backend, NULL);
    if (o->backend == HM_BACKEND_IO_URING && hm_io_uring_probe(NULL) < 0) {
        const char *r = NULL;
        hm_io_uring_probe(&r);
        return usage_error("--engine io_uring is not available here: %s", r ? r : "?");
    }
    const char *fallback = NULL;
    hm_backend_resolve(HM_BACKEND_AUTO, &fallback);
    if (fallback && o->backend == HM_BACKEND_EPOLL && !o->quiet)
        fprintf(stderr, "hammer: io_uring unavailable (%s); using epoll\n", fallback);
    return HM_CLI_GO;
}

int hm_cli_validate(hm_cli *cli)
{
    hm_options *o = &cli->o;
    const hm_scenario_def *sc = cli->sc = hm_scenario_find(cli->scenario_name);
    if (!sc) return unknown_scenario(cli->scenario_name);
    o->scenario = sc->name;
    const hm_scenario_def *wl;
    if (pick_workload(cli, &wl) != HM_CLI_GO) return HM_EXIT_USAGE;
    if (!o->route) o->route = wl->route;
    if (!o->action) o->action = wl->action;
    if (!o->signal) o->signal = wl->signal;
    o->workload = wl->workload;
    o->plugin = sc->plugin;
    if (sc->caps.browser_only) {
        if (cli->mode_given && !o->browser)
            return usage_error("%s", "plugin scenarios run in the browser model only");
        o->browser = true;
    }
    if (o->duration_ns && !cli->actions_given) o->actions = 0;
    if (o->duration_ns && cli->actions_given && !o->quiet && !sc->caps.no_duration)
        fprintf(stderr,
                "hammer: -n %lld and -d %s both given: the run ends at whichever is reached "
                "first\n",
                (long long)o->actions, cli->duration_arg);
    if (o->duration_ns && sc->caps.no_duration) {
        fprintf(stderr, "hammer: %s %s; -d is not supported there\n", sc->name,
                sc->caps.no_duration);
        return HM_EXIT_USAGE;
    }
    if (sc->caps.needs_url && !o->url) return usage_error("scenario %s needs --url", sc->name);
    if (cli->metrics_linger_ns && !cli->metrics_listen)
        return usage_error("%s", "--metrics-linger keeps --metrics-listen's endpoint up: give "
                                 "--metrics-listen HOST:PORT too");
    if ((o->method || o->n_headers || cli->body_path) && !sc->caps.custom_request) {
        char takers[128];
        hm_scenario_names(takes_request_options, ", ", takers, sizeof(takers));
        fprintf(stderr, "hammer: -m, -H and --body apply to %s, not %s\n", takers, sc->name);
        return HM_EXIT_USAGE;
    }
    if (o->threads > o->concurrency) o->threads = o->concurrency;
    if (o->rate > 0 && (o->browser || !sc->caps.rate))
        return usage_error("%s", "-R applies to the hammer load model and to get: browser VUs "
                                 "and sticky are paced by the server's patches");
    if (o->browser && !sc->caps.browser)
        return usage_error("--mode browser applies to php-via scenarios, not %s", sc->name);
    if (o->streams > 1 && !o->http2)
        return usage_error("%s", "--streams multiplexes HTTP/2 streams: it needs --http2 (an "
                                 "HTTP/1.1 connection carries one request at a time)");
    if (o->streams > 1 && (o->browser || !sc->caps.streams))
        return usage_error("--streams applies to the hammer load model and to get, not %s "
                           "(a browser VU runs its page, SSE and actions on one connection)",
                           o->browser ? "--mode browser" : sc->name);
    if (o->http2 && !o->url && sc->caps.app_workers > 1)
        return usage_error("%s needs --url over --http2: bench_app's several workers (php-via's "
                           "dispatch_mode 7) refuse HTTP/2, as OpenSwoole does; put a balancer "
                           "in front of `bench_app --processes N --http2` (docs/http2.md)",
                           sc->name);
    char why[1024];
    if (sc->caps.flow_file && !o->flow_file)
        return usage_error("scenario %s reads a flow file: hammer flow FILE.yaml", sc->name);
    if (sc->prepare && sc->prepare(o, why, sizeof(why)) < 0) return usage_error("%s", why);
    /* After prepare: a flow file says it its own way (think: steps). */
    if ((o->think_min_ns || o->think_max_ns) && !o->browser && sc->caps.browser)
        return usage_error("%s", "--think pauses a browser VU between its actions: it needs "
                                 "--mode browser (the hammer model keeps -c actions in flight "
                                 "without pauses; -R sets a rate)");
    if ((o->think_min_ns || o->think_max_ns) && !o->browser)
        return usage_error("--think applies to --mode browser, not %s", sc->name);
    int need =
        o->browser ? (o->http2 ? 1 : 2) * o->concurrency + 64 : o->concurrency + o->observers + 64;
    if (raise_nofile(need, why, sizeof(why)) < 0) return usage_error("%s", why);
    return pick_backend(o);
}
