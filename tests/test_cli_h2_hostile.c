/* hammer --http2 against hostile h2c servers (h2_test_server.c: frames
 * written by hand where nghttp2 refuses to send them): each misbehaviour
 * ends the run in time (bounded by its --timeout), without a crash, and
 * the JSON names the kind, the reason in words, where (the request) and
 * the bytes (the frame) that showed it. The probe's cases: a server that
 * answered, however badly, is reachable and its failures are the run's.
 * argv: HAMMER ENGINE [CASE] (ENGINE io_uring or epoll, skipped when not
 * available here; CASE: only that one, by path or by name below). */
#include "base/hm_base.h"
#include "h2_test_server.h"
#include "run_util.h"

#include <stdbool.h>

static const char *hammer, *engine, *only;

/* Whether the case named so runs (all without a CASE argument). */
static bool want(const char *name)
{
    return !only || !strcmp(only, name);
}
static char json_path[256];

static void cleanup(void)
{
    unlink(json_path);
}

static const char *str_at(json_t *j, const char *a, const char *b, const char *c)
{
    const char *s =
        json_string_value(json_object_get(json_object_get(json_object_get(j, a), b), c));
    return s ? s : "";
}

typedef struct run {
    int exit;
    proc p;
    json_t *j; /* NULL when no JSON was written */
} run;

/* hammer get against url over h2c: n requests on one connection, as
 * three streams at once (a frame breaking one stream must not be taken
 * for another's), timeout_s each. The whole run is bounded by a few of
 * its own timeouts (the probe, each request and its one retry). */
static void hammer_get(run *r, const char *url, int n, int timeout_s)
{
    char ns[16], ts[16];
    snprintf(ns, sizeof(ns), "%d", n);
    snprintf(ts, sizeof(ts), "%ds", timeout_s);
    char *argv[] = {(char *)hammer,
                    "--engine",
                    (char *)engine,
                    "--http2",
                    "--url",
                    (char *)url,
                    "--timeout",
                    ts,
                    "--json",
                    json_path,
                    "-c",
                    "1",
                    "--streams",
                    "3",
                    "-n",
                    ns,
                    "scenario",
                    "get",
                    NULL};
    unlink(json_path);
    r->exit = proc_run(&r->p, argv, (2 * n + 2) * timeout_s + 30);
    r->j = access(json_path, F_OK) == 0 ? load_json(json_path) : NULL;
}

typedef struct hostile {
    const char *path;   /* after /first-ok-N: the probe passes, the run's requests meet it */
    const char *kind;   /* errors.<kind> counts every request */
    const char *reason; /* error_reasons.<kind>.reason says it */
    const char *bytes;  /* error_reasons.<kind>.bytes shows it (NULL: not checked) */
    int timeout_s;
} hostile;

static void expect_failures(const run *r, const char *what, const hostile *h, int n)
{
    if (r->exit != 1 || !r->j)
        HM_FAIL_("%s: exit %d (wanted 1 with a JSON report):\n%s", what, r->exit, r->p.out);
    char key[80];
    snprintf(key, sizeof(key), "errors.%s", h->kind);
    long long got = json_int_at(r->j, key);
    const char *why = str_at(r->j, "error_reasons", h->kind, "reason");
    const char *where = str_at(r->j, "error_reasons", h->kind, "where");
    const char *bytes = str_at(r->j, "error_reasons", h->kind, "bytes");
    if (got != n || !strstr(why, h->reason) || !strstr(where, "GET /") ||
        (h->bytes && !strstr(bytes, h->bytes))) {
        char *errs = json_dumps(json_object_get(r->j, "errors"), JSON_COMPACT);
        char *reasons = json_dumps(json_object_get(r->j, "error_reasons"), JSON_COMPACT);
        HM_FAIL_("%s: wanted %d errors.%s, reason with '%s', bytes with '%s'; errors %s; "
                 "reasons %s",
                 what, n, h->kind, h->reason, h->bytes ? h->bytes : "-", errs, reasons);
    }
    ASSERT_EQ(json_int_at(r->j, "actions.ok"), 0);
    /* A protocol error is the server's: nothing is sent again. */
    ASSERT_EQ(json_int_at(r->j, "connections.retries"), 0);
    /* The summary carries the reason too. */
    if (!strstr(r->p.out, h->reason))
        HM_FAIL_("%s: the summary does not say '%s':\n%s", what, h->reason, r->p.out);
    printf("%s [%s]: %d %s, reason \"%s\", where \"%s\", bytes \"%s\": ok\n", what, engine, n,
           h->kind, why, where, bytes);
}

static const hostile cases[] = {
    /* RFC 9113 section 8.3.2: not the server's reset, the client's over a missing :status. */
    {"no-status", "protocol", "HEADERS without :status", "HEADERS frame", 3},
    /* The 1xx bound's reason reaches the report, as over HTTP/1.1. */
    {"endless-100", "protocol", "more than 16 informational (1xx) responses", "HEADERS frame", 3},
    {"huge-head", "protocol", "header list over the", "CONTINUATION frame", 3},
    {"continuation-flood", "protocol", "CONTINUATION flood", "CONTINUATION frame", 3},
    /* Slow too: the ninth CONTINUATION ends it, well before the timeout. */
    {"continuation-slow", "protocol", "CONTINUATION flood", "CONTINUATION frame", 30},
    {"window-overflow", "protocol", "FLOW_CONTROL_ERROR", "WINDOW_UPDATE frame", 3},
    {"push", "protocol", "PUSH_PROMISE", "PUSH_PROMISE frame", 3},
    {"goaway-even", "protocol", "GOAWAY", "GOAWAY frame", 3},
    /* HPACK (RFC 7541): a table size update past hammer's SETTINGS_HEADER_TABLE_SIZE,
     * one after a field, an index past both tables; nghttp2 ends the connection. */
    {"hpack-size-over", "protocol", "(COMPRESSION_ERROR): a header block HPACK cannot decode",
     "HEADERS frame", 3},
    {"hpack-size-late", "protocol", "(COMPRESSION_ERROR): a header block HPACK cannot decode",
     "HEADERS frame", 3},
    {"hpack-bad-index", "protocol", "(COMPRESSION_ERROR): a header block HPACK cannot decode",
     "HEADERS frame", 3},
    /* Legal HPACK whose header list is past the 64 KiB announced although
     * its frames are not: the decoded list counts. */
    {"hpack-churn", "protocol", "header list over the", "HEADERS frame", 3},
    {"hpack-bomb", "protocol", "header list over the", "HEADERS frame", 3},
};

/* Floods of frames that each want an ACK: hammer answers them as they
 * come; nghttp2 bounds the ACKs queued (1000), so a flood that outruns
 * the answers ends the connection as a protocol error saying so. Either
 * way the run ends in time and memory stays bounded. */
static void flood(int port, const char *path, const char *frame)
{
    char url[160];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/first-ok-%s/%s", port, path, path);
    run r;
    hammer_get(&r, url, 3, 5);
    if (!r.j || (r.exit != 0 && r.exit != 1)) HM_FAIL_("/%s: exit %d:\n%s", path, r.exit, r.p.out);
    long long ok = json_int_at(r.j, "actions.ok"), bad = json_int_at(r.j, "errors.protocol");
    const char *why = str_at(r.j, "error_reasons", "protocol", "reason");
    const char *bytes = str_at(r.j, "error_reasons", "protocol", "bytes");
    if (ok + (bad > 0 ? bad : 0) != 3 ||
        (bad > 0 && (!strstr(why, "flood") || !strstr(bytes, frame))))
        HM_FAIL_("/%s: %lld ok, %lld protocol (reason '%s', bytes '%s'):\n%s", path, ok, bad, why,
                 bytes, r.p.out);
    printf("/%s [%s]: %lld answered, %lld ended as a flood (\"%s\", bytes \"%s\"): ok\n", path,
           engine, ok, bad > 0 ? bad : 0, why, bytes);
    json_decref(r.j);
}

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s HAMMER ENGINE", argv[0]);
    hammer = argv[1];
    engine = argv[2];
    only = argc > 3 ? argv[3] : NULL;
    signal(SIGPIPE, SIG_IGN);
    snprintf(json_path, sizeof(json_path), "/tmp/hammer-h2-hostile-%d.json", (int)getpid());
    atexit(cleanup);
    char url[160];
    skip_unless_engine(hammer, engine);

    h2ts srv = {0};
    h2ts_start(&srv);
    for (size_t i = 0; i < HM_ARRAY_LEN(cases); i++) {
        const hostile *h = &cases[i];
        if (!want(h->path)) continue;
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/first-ok-%zu/%s", srv.port, i, h->path);
        run r;
        hammer_get(&r, url, 3, h->timeout_s);
        char what[64];
        snprintf(what, sizeof(what), "/%s", h->path);
        expect_failures(&r, what, h, 3);
        json_decref(r.j);
    }
    if (want("settings-flood")) flood(srv.port, "settings-flood", "SETTINGS frame");
    if (want("ping-flood")) flood(srv.port, "ping-flood", "PING frame");
    run r;
    if (want("goaway-high")) {
        /* A GOAWAY whose last-stream-id is above every stream opened
         * leaves them to finish: each is answered, new ones go on a new
         * connection. */
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/goaway-high", srv.port);
        hammer_get(&r, url, 4, 3);
        if (r.exit != 0 || !r.j) HM_FAIL_("/goaway-high: exit %d:\n%s", r.exit, r.p.out);
        ASSERT_EQ(json_int_at(r.j, "actions.ok"), 4);
        json_decref(r.j);
        printf("/goaway-high [%s]: every request answered: ok\n", engine);
    }
    if (want("hpack-size-max")) {
        /* A table size update to what hammer announced is allowed. */
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/hpack-size-max", srv.port);
        hammer_get(&r, url, 3, 3);
        if (r.exit != 0 || !r.j) HM_FAIL_("/hpack-size-max: exit %d:\n%s", r.exit, r.p.out);
        ASSERT_EQ(json_int_at(r.j, "actions.ok"), 3);
        json_decref(r.j);
        printf("/hpack-size-max [%s]: a table size update to the SETTINGS' 64 KiB: ok\n", engine);
    }
    /* The probe's request meets a 1 MiB header block, or endless 1xx
     * heads: the target answered, so it is reachable, and the run says
     * what broke (error_reasons and the summary), as over HTTP/1.1. */
    for (int k = 1; k <= 2; k++) {
        char name[40];
        snprintf(name, sizeof(name), "probe-%s", cases[k].path);
        if (!want(name)) continue;
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/%s", srv.port, cases[k].path);
        hammer_get(&r, url, 3, 3);
        expect_failures(&r, name, &cases[k], 3);
        json_decref(r.j);
    }
    h2ts_stop(&srv);

    if (want("settings-window")) {
        /* The server's first SETTINGS breaks the protocol (RFC 9113
         * section 6.5.2): it speaks HTTP/2, badly; the report names its
         * error. */
        srv = (h2ts){.mode = "settings-window"};
        h2ts_start(&srv);
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/ok", srv.port);
        hammer_get(&r, url, 3, 3);
        hostile window = {"", "protocol", "SETTINGS_INITIAL_WINDOW_SIZE", "SETTINGS frame", 3};
        expect_failures(&r, "first SETTINGS with INITIAL_WINDOW_SIZE 2^31", &window, 3);
        if (strstr(r.p.out, "does not speak h2c"))
            HM_FAIL_("said 'does not speak h2c':\n%s", r.p.out);
        json_decref(r.j);
        h2ts_stop(&srv);
    }
    if (want("no-settings")) {
        /* Nothing ever comes back: unreachable, naming the missing
         * SETTINGS, within the probe's timeout. */
        srv = (h2ts){.mode = "no-settings"};
        h2ts_start(&srv);
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/ok", srv.port);
        hammer_get(&r, url, 2, 1);
        if (r.exit != 2 || !strstr(r.p.out, "no HTTP/2 SETTINGS"))
            HM_FAIL_("no SETTINGS: exit %d (wanted 2, naming the missing SETTINGS):\n%s", r.exit,
                     r.p.out);
        json_decref(r.j);
        h2ts_stop(&srv);
        printf("a server that never sends SETTINGS [%s]: exit 2, said why: ok\n", engine);
    }
    return 0;
}
