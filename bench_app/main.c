/* main.c — the bench_app command line: parses options into
 * hm_bench_app_options, installs SIGTERM/SIGINT handlers and runs the server
 * until one arrives (exit 0; a default temporary database is removed then).
 * Bad options exit 2 with a one-line reason; a server that cannot start
 * (port taken, database unusable) exits 1. */
#include "bench_app/app.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_app [options]\n"
            "php-via's benchmark app served by hammer's engine, one worker: /bench/counter,\n"
            "/bench/cpu, /bench/io, /bench/spreadsheet (action increment) and the live\n"
            "/examples/spreadsheet (action navigate), with /_action/*, /_sse, /_health\n"
            "and /_session/close.\n"
            "\n"
            "  --host H               address to listen on (default 127.0.0.1)\n"
            "  --port P               port (default %d); 0 picks a free one and prints it\n"
            "  --engine E             auto | io_uring | epoll (default auto)\n"
            "  --cleanup-delay-ms N   context cleanup delay (default 5000)\n"
            "  --sse-poll-ms N        SSE poll interval when idle (default 100; 0 = wake on push)\n"
            "  --idle-timeout-ms N    keep-alive idle timeout (default 60000)\n"
            "  --max-header-bytes N   request header limit (default 65536)\n"
            "  --max-body-bytes N     request body limit (default 1048576)\n"
            "  --no-dev-mode          actions without an Origin header get 403\n"
            "  --db PATH              the spreadsheets' SQLite file, seeded when empty and kept\n"
            "                         (default: a fresh directory under $TMPDIR or /tmp,\n"
            "                         removed at exit)\n"
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
        {"help", no_argument, NULL, OPT_HELP},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };
    hm_bench_app_options o;
    hm_bench_app_defaults(&o);
    const long long max_ms = 10LL * 1000 * 1000 * 1000;
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

    int rc = hm_bench_app_install_signal_handlers();
    if (rc < 0) {
        fprintf(stderr, "bench_app: cannot install signal handlers: %s\n", hm_strerror(rc));
        return 1;
    }
    /* With --port 0 the chosen port goes to stdout, alone on a line, even
     * with --quiet, so scripts can read it. */
    rc = hm_bench_app_run(&o, o.port == 0 ? STDOUT_FILENO : -1);
    if (rc < 0) {
        fprintf(stderr, "bench_app: cannot start on %s:%d: %s\n", o.host, o.port,
                rc == -ENXIO ? "no such host" : hm_strerror(rc));
        return 1;
    }
    return 0;
}
