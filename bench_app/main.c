/* main.c — the bench_app command line: parses options into
 * hm_bench_app_options, installs SIGTERM/SIGINT handlers and runs the server
 * until one arrives (exit 0; a default temporary database is removed then).
 * Bad options exit 2 with a one-line reason (so does a --tls-cert or
 * --tls-key that does not load: both are loaded once here, before anything
 * starts); a server that cannot start (port taken, database unusable)
 * exits 1.
 *
 * --tls-cert/--tls-key: HTTPS (see app.h, "TLS"); with --workers TLS ends
 * at the reactor, with --processes every process serves TLS itself.
 * --http2: HTTP/2 (app.h, "HTTP/2"); refused with --workers > 1 (exit 2).
 *
 * --processes N: N independent servers (each with --workers workers) in
 * child processes, on ports P .. P+N-1; process i's workers answer
 * X-Via-Worker i*workers + w. The parent forwards SIGTERM/SIGINT to them
 * and exits 0 once all have stopped; if one stops (or fails to start) on
 * its own, the parent stops the others and exits 1. The children get
 * SIGTERM if the parent dies. */
#include "bench_app/app.h"
#include "proto/tls.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_app [options]\n"
            "php-via's benchmark app served by hammer's engine: /bench/counter, /bench/cpu,\n"
            "/bench/io, /bench/spreadsheet (action increment) and the live\n"
            "/examples/spreadsheet (action navigate), with /_action/*, /_sse, /_health\n"
            "and /_session/close. Every response has an X-Via-Worker: <id> header.\n"
            "\n"
            "  --host H               address to listen on (default 127.0.0.1)\n"
            "  --port P               port (default %d); 0 picks a free one and prints it\n"
            "  --workers N            php-via's worker_num (default 1, at most 64): N workers\n"
            "                         with isolated state (contexts, sessions, queues) on\n"
            "                         threads; a reactor hands each request to one of them\n"
            "  --dispatch MODE        which worker takes a request (with --workers > 1):\n"
            "                         stream  (default) the least busy one, whatever the\n"
            "                                 cookie or connection: what php-via's\n"
            "                                 dispatch_mode 7 really does in OpenSwoole\n"
            "                         fd      connection id %% N (OpenSwoole's mode 2)\n"
            "                         session crc32(via_session_id cookie) %% N, no cookie:\n"
            "                                 as fd (php-via's intended dispatch_func)\n"
            "  --processes N          N independent servers in child processes on ports\n"
            "                         P..P+N-1 (X-Via-Worker 0..N-1 with one worker each),\n"
            "                         e.g. behind a sticky load balancer; needs a fixed\n"
            "                         --port; SIGTERM/SIGINT stop them all\n"
            "  --worker-id N          X-Via-Worker of the first worker (default 0)\n"
            "  --tls-cert FILE        serve HTTPS with this PEM certificate chain (leaf\n"
            "                         first); needs --tls-key. TLS 1.2/1.3, ALPN http/1.1,\n"
            "                         session resumption (cache and tickets); with\n"
            "                         --workers TLS ends at the reactor, with --processes\n"
            "                         each process serves TLS\n"
            "  --tls-key FILE         the certificate's PEM private key\n"
            "  --http2                HTTP/2 as php-via serves it with TLS or withH2c():\n"
            "                         over TLS, ALPN h2 (else http/1.1); on cleartext, h2c\n"
            "                         with prior knowledge (a connection that opens with the\n"
            "                         client preface), HTTP/1.1 otherwise. Needs --workers 1\n"
            "                         (OpenSwoole refuses HTTP/2 in php-via's multi-worker\n"
            "                         dispatch mode); --processes N is fine\n"
            "  --engine E             auto | io_uring | epoll (default auto)\n"
            "  --cleanup-delay-ms N   context cleanup delay (default 5000)\n"
            "  --revival-window-ms N  a context the cleanup took comes back when its session\n"
            "                         reconnects SSE within N ms (default 600000; 0 = never)\n"
            "  --sse-poll-ms N        0 (default): a patch goes out the moment it is queued,\n"
            "                         as php-via's do; N > 0: SSE streams poll their queue\n"
            "                         every N ms instead (an experiment, not php-via)\n"
            "  --brotli               compress pages and SSE streams (one flush per event)\n"
            "                         when the request's Accept-Encoding has br, as\n"
            "                         php-via's withBrotli() does\n"
            "  --idle-timeout-ms N    keep-alive idle timeout (default 60000); HTTP/2: a\n"
            "                         connection with no stream open that long, or a request\n"
            "                         body with no DATA that long (its stream is reset)\n"
            "  --header-timeout-ms N  a request's header section must be complete N ms after\n"
            "                         its first byte, or the connection closes (default 10000);\n"
            "                         HTTP/2: the preface with the first SETTINGS, and each\n"
            "                         stream's header block (GOAWAY ENHANCE_YOUR_CALM)\n"
            "  --max-header-bytes N   request header limit (default 65536): 431\n"
            "  --max-body-bytes N     request body limit (default 1048576): 413\n"
            "  --max-signal-bytes N   limit of one signal value a client sends (a string's\n"
            "                         bytes, an array's or object's JSON; default 65536): 413\n"
            "  --no-dev-mode          actions without an Origin header get 403\n"
            "  --db PATH              the spreadsheets' SQLite file, seeded when empty and kept\n"
            "                         (default: a fresh directory under $TMPDIR or /tmp,\n"
            "                         removed at exit; one per process, shared by its workers)\n"
            "  --leak-rate N          a test aid: leak N bytes per second (allocated, written,\n"
            "                         never freed, in worker 0), so RSS grows by N/s for\n"
            "                         hammer's leak verdict to find (default 0: none)\n"
            "  --quiet                no start-up line\n"
            "  --help                 this text\n"
            "  --version              print the version\n",
            HM_BENCH_APP_DEFAULT_PORT);
}

static int bad(const char *fmt, const char *arg)
{
    fprintf(stderr, "bench_app: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see --help)\n");
    return 2;
}

/* Parses a whole decimal number in [lo, hi]. */
static bool parse_num(const char *s, long long lo, long long hi, long long *out)
{
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

static void start_failed(const hm_bench_app_options *o, int rc)
{
    fprintf(stderr, "bench_app: cannot start on %s:%d: %s\n", o->host, o->port,
            rc == -ENXIO ? "no such host" : hm_strerror(rc));
}

/* ---- --processes ---------------------------------------------------------- */

static volatile sig_atomic_t g_stop_sig;

static void on_parent_signal(int sig)
{
    if (sig != SIGCHLD) g_stop_sig = sig;
}

static void stop_children(const pid_t *pids, int n)
{
    for (int i = 0; i < n; i++)
        if (pids[i] > 0) kill(pids[i], SIGTERM);
}

/* Forks one server per process and waits for them (see the top comment). */
static int run_processes(const hm_bench_app_options *base, int n)
{
    /* Signals stay blocked outside sigsuspend(), so none is missed between
     * a check and the wait; the children unblock them once their own
     * handlers are in place. */
    sigset_t block, orig;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGCHLD);
    sigprocmask(SIG_BLOCK, &block, &orig);
    sigset_t waitmask = orig; /* what sigsuspend() lets through: these three */
    sigdelset(&waitmask, SIGTERM);
    sigdelset(&waitmask, SIGINT);
    sigdelset(&waitmask, SIGCHLD);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_parent_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGCHLD, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);

    pid_t pids[64] = {0};
    pid_t parent = getpid();
    int alive = 0, failed = 0;
    bool stopping = false;
    fflush(NULL);
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "bench_app: fork: %s\n", strerror(errno));
            failed = 1;
            stopping = true;
            stop_children(pids, n);
            break;
        }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (getppid() != parent) _exit(1); /* the parent is gone already */
            hm_bench_app_options o = *base;
            o.port = base->port + i;
            o.worker_id = base->worker_id + i * (base->workers > 0 ? base->workers : 1);
            int rc = hm_bench_app_install_signal_handlers();
            sigprocmask(SIG_SETMASK, &orig, NULL);
            if (rc == 0) rc = hm_bench_app_run(&o, -1);
            if (rc < 0) start_failed(&o, rc);
            fflush(NULL);
            _exit(rc < 0 ? 1 : 0);
        }
        pids[i] = pid;
        alive++;
    }
    while (alive > 0) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid > 0) {
            for (int i = 0; i < n; i++)
                if (pids[i] == pid) pids[i] = 0;
            alive--;
            bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
            if (!stopping || !ok) {
                /* One stopped by itself (or failed to start): stop the rest. */
                if (!stopping) failed = 1;
                if (!ok) failed = 1;
                stopping = true;
                stop_children(pids, n);
            }
            continue;
        }
        if (pid < 0 && errno != EINTR) break; /* no children left */
        if (g_stop_sig && !stopping) {
            stopping = true;
            stop_children(pids, n);
        }
        sigsuspend(&waitmask);
    }
    return failed;
}

enum {
    OPT_HOST = 1000,
    OPT_PORT,
    OPT_ENGINE,
    OPT_CLEANUP,
    OPT_POLL,
    OPT_IDLE,
    OPT_MAXHDR,
    OPT_MAXBODY,
    OPT_NODEV,
    OPT_DB,
    OPT_QUIET,
    OPT_WORKERS,
    OPT_DISPATCH,
    OPT_PROCESSES,
    OPT_WORKER_ID,
    OPT_TLS_CERT,
    OPT_TLS_KEY,
    OPT_REVIVAL,
    OPT_BROTLI,
    OPT_HEADER_TIMEOUT,
    OPT_MAXSIGNAL,
    OPT_HTTP2,
    OPT_LEAK,
    OPT_HELP,
    OPT_VERSION,
};

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"host", required_argument, NULL, OPT_HOST},
        {"port", required_argument, NULL, OPT_PORT},
        {"engine", required_argument, NULL, OPT_ENGINE},
        {"cleanup-delay-ms", required_argument, NULL, OPT_CLEANUP},
        {"sse-poll-ms", required_argument, NULL, OPT_POLL},
        {"idle-timeout-ms", required_argument, NULL, OPT_IDLE},
        {"max-header-bytes", required_argument, NULL, OPT_MAXHDR},
        {"max-body-bytes", required_argument, NULL, OPT_MAXBODY},
        {"no-dev-mode", no_argument, NULL, OPT_NODEV},
        {"db", required_argument, NULL, OPT_DB},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"workers", required_argument, NULL, OPT_WORKERS},
        {"dispatch", required_argument, NULL, OPT_DISPATCH},
        {"processes", required_argument, NULL, OPT_PROCESSES},
        {"worker-id", required_argument, NULL, OPT_WORKER_ID},
        {"tls-cert", required_argument, NULL, OPT_TLS_CERT},
        {"tls-key", required_argument, NULL, OPT_TLS_KEY},
        {"revival-window-ms", required_argument, NULL, OPT_REVIVAL},
        {"brotli", no_argument, NULL, OPT_BROTLI},
        {"header-timeout-ms", required_argument, NULL, OPT_HEADER_TIMEOUT},
        {"max-signal-bytes", required_argument, NULL, OPT_MAXSIGNAL},
        {"http2", no_argument, NULL, OPT_HTTP2},
        {"leak-rate", required_argument, NULL, OPT_LEAK},
        {"help", no_argument, NULL, OPT_HELP},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };
    hm_bench_app_options o;
    hm_bench_app_defaults(&o);
    const long long max_ms = 10LL * 1000 * 1000 * 1000;
    int processes = 0;
    opterr = 0; /* our own one-line messages */
    int opt;
    while ((opt = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        long long v;
        switch (opt) {
        case OPT_HOST:
            if (!optarg[0]) return bad("--host needs an address%s", "");
            o.host = optarg;
            break;
        case OPT_PORT:
            if (!parse_num(optarg, 0, 65535, &v)) return bad("bad --port '%s' (0..65535)", optarg);
            o.port = (int)v;
            break;
        case OPT_ENGINE:
            if (hm_backend_parse(optarg, &o.backend) < 0)
                return bad("bad --engine '%s' (auto, io_uring or epoll)", optarg);
            break;
        case OPT_CLEANUP:
            if (!parse_num(optarg, 0, max_ms, &v))
                return bad("bad --cleanup-delay-ms '%s' (a number >= 0)", optarg);
            o.cleanup_delay_ms = v;
            break;
        case OPT_POLL:
            if (!parse_num(optarg, 0, max_ms, &v))
                return bad("bad --sse-poll-ms '%s' (a number >= 0)", optarg);
            o.sse_poll_ms = v;
            break;
        case OPT_REVIVAL:
            if (!parse_num(optarg, 0, max_ms, &v))
                return bad("bad --revival-window-ms '%s' (a number >= 0)", optarg);
            o.revival_window_ms = v;
            break;
        case OPT_BROTLI:
            o.brotli = true;
            break;
        case OPT_HTTP2:
            o.http2 = true;
            break;
        case OPT_LEAK:
            if (!parse_num(optarg, 0, (long long)1 << 30, &v))
                return bad("bad --leak-rate '%s' (bytes per second, 0..2^30)", optarg);
            o.leak_rate = v;
            break;
        case OPT_HEADER_TIMEOUT:
            if (!parse_num(optarg, 1, max_ms, &v))
                return bad("bad --header-timeout-ms '%s' (a number >= 1)", optarg);
            o.header_timeout_ms = v;
            break;
        case OPT_MAXSIGNAL:
            if (!parse_num(optarg, 1, (long long)1 << 30, &v))
                return bad("bad --max-signal-bytes '%s' (1..2^30)", optarg);
            o.max_signal_bytes = (size_t)v;
            break;
        case OPT_IDLE:
            if (!parse_num(optarg, 1, max_ms, &v))
                return bad("bad --idle-timeout-ms '%s' (a number >= 1)", optarg);
            o.idle_timeout_ms = v;
            break;
        case OPT_MAXHDR:
            if (!parse_num(optarg, 1024, (long long)1 << 30, &v))
                return bad("bad --max-header-bytes '%s' (1024..2^30)", optarg);
            o.max_header_bytes = (size_t)v;
            break;
        case OPT_MAXBODY:
            if (!parse_num(optarg, 0, (long long)1 << 32, &v))
                return bad("bad --max-body-bytes '%s' (0..2^32)", optarg);
            o.max_body_bytes = (size_t)v;
            break;
        case OPT_NODEV:
            o.dev_mode = false;
            break;
        case OPT_DB:
            if (!optarg[0]) return bad("--db needs a file name%s", "");
            o.db_path = optarg;
            break;
        case OPT_QUIET:
            o.quiet = true;
            break;
        case OPT_WORKERS:
            if (!parse_num(optarg, 1, 64, &v)) return bad("bad --workers '%s' (1..64)", optarg);
            o.workers = (int)v;
            break;
        case OPT_DISPATCH:
            if (strcmp(optarg, "stream") && strcmp(optarg, "fd") && strcmp(optarg, "session"))
                return bad("bad --dispatch '%s' (stream, fd or session)", optarg);
            o.dispatch = optarg;
            break;
        case OPT_PROCESSES:
            if (!parse_num(optarg, 1, 64, &v)) return bad("bad --processes '%s' (1..64)", optarg);
            processes = (int)v;
            break;
        case OPT_WORKER_ID:
            if (!parse_num(optarg, 0, 1 << 20, &v))
                return bad("bad --worker-id '%s' (0..1048576)", optarg);
            o.worker_id = (int)v;
            break;
        case OPT_TLS_CERT:
            if (!optarg[0]) return bad("--tls-cert needs a file name%s", "");
            o.tls_cert = optarg;
            break;
        case OPT_TLS_KEY:
            if (!optarg[0]) return bad("--tls-key needs a file name%s", "");
            o.tls_key = optarg;
            break;
        case OPT_HELP:
            usage(stdout);
            return 0;
        case OPT_VERSION:
            printf("bench_app %s\n", HM_VERSION);
            return 0;
        case ':':
            return bad("option %s needs a value", argv[optind - 1]);
        default:
            return bad("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return bad("unexpected argument '%s'", argv[optind]);
    if (o.tls_cert && !o.tls_key) return bad("--tls-cert needs --tls-key%s", "");
    if (o.tls_key && !o.tls_cert) return bad("--tls-key needs --tls-cert%s", "");
    if (o.http2 && o.workers > 1)
        return bad("--http2 needs --workers 1%s: php-via's multi-worker mode (OpenSwoole's "
                   "dispatch_mode 7) refuses HTTP/2 at start; use --processes N behind a balancer",
                   "");
    if (o.tls_cert) {
        /* Loaded once here, so a bad file is a usage error (exit 2) before
         * any process starts; each run loads it again for itself. */
        hm_tls_config *cfg = NULL;
        char why[512];
        if (hm_tls_server_config_create(&cfg, o.tls_cert, o.tls_key, why, sizeof(why)) < 0) {
            fprintf(stderr, "bench_app: %s\n", why);
            return 2;
        }
        hm_tls_config_free(cfg);
    }
    if (processes > 0) {
        if (o.port == 0) return bad("--processes needs a fixed --port%s, not 0", "");
        if (o.port + processes - 1 > 65535)
            return bad("--processes %s: the ports would pass 65535", argv[optind - 1]);
        return run_processes(&o, processes);
    }

    int rc = hm_bench_app_install_signal_handlers();
    if (rc < 0) {
        fprintf(stderr, "bench_app: cannot install signal handlers: %s\n", hm_strerror(rc));
        return 1;
    }
    /* With --port 0 the chosen port goes to stdout, alone on a line, even
     * with --quiet, so scripts can read it. */
    rc = hm_bench_app_run(&o, o.port == 0 ? STDOUT_FILENO : -1);
    if (rc < 0) {
        start_failed(&o, rc);
        return 1;
    }
    return 0;
}
