/* hammer --http2 end to end: every php-via scenario in both load models
 * over h2c and h2 against bench_app and through Caddy (an h2 front over
 * TLS and an h2c front, reverse-proxying to bench_app; and a front that
 * speaks h2c to `bench_app --http2` behind it), sticky over HTTP/2
 * through Caddy's cookie affinity, `get` against nghttpd, and the usage
 * errors. Each run's JSON must name the protocol, count no failure, pass
 * its check, and (browser model) show one connection per VU.
 * argv: HAMMER BENCH_APP GEN_CERT PLUGIN_SO PART, PART one of
 *   embedded  the embedded bench_app over h2c, usage errors (never skips)
 *   tls       bench_app --http2 over TLS (h2 through ALPN) (never skips)
 *   caddy     through Caddy (skips, 77, when caddy is not installed)
 *   sticky    sticky over HTTP/2 through Caddy's cookie affinity (skips
 *             likewise): honoured 100%, ignored (--no-cookies) it fails
 *   nghttpd   get against nghttpd, h2c and h2 (skips without nghttpd)
 *   misbehave get against an h2c server of the test's own that resets,
 *             sends GOAWAY, closes, breaks the protocol or stays silent:
 *             each failure counted by kind, with its reason (never skips) */
#include "base/hm_base.h"
#include "h2_test_server.h"
#include "run_util.h"

#include <stdarg.h>
#include <stdbool.h>
#include <sys/stat.h>

static const char *hammer, *bench_app, *gen_cert, *plugin;
static char json_path[256], tmpdir[256], cacert[300];

static void cleanup(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    unlink(json_path);
}

static bool port_open(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

static void wait_listening(int port)
{
    for (int i = 0; i < 200; i++) {
        if (port_open(port)) return;
        usleep(25000);
    }
    HM_FAIL_("nothing listens on port %d", port);
}

/* Starts argv in the background (killed with the test). */
static pid_t start(char **argv)
{
    proc p;
    proc_start(&p, argv);
    track(p.pid);
    return p.pid;
}

static void stop(pid_t pid)
{
    kill(pid, SIGTERM);
    for (int i = 0; i < 200; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid) return;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* Runs hammer with args (NULL-terminated, after the program); its JSON.
 * --timeout 30s first (args may set their own, which comes later and
 * wins): the default 5 s is short for a machine busy with other builds. */
static json_t *hammer_json(int want_exit, char **args)
{
    char *argv[48];
    int n = 0;
    argv[n++] = (char *)hammer;
    argv[n++] = "--timeout";
    argv[n++] = "30s";
    argv[n++] = "--json";
    argv[n++] = json_path;
    for (int i = 0; args[i] && n < 47; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    proc p;
    unlink(json_path);
    int rc = proc_run(&p, argv, 240);
    if (rc != want_exit) {
        fprintf(stderr, "exit %d, wanted %d:\n%s\n", rc, want_exit, p.out);
        HM_FAIL_("hammer run failed");
    }
    return load_json(json_path);
}

static const char *protocol_of(json_t *j)
{
    const char *p =
        json_string_value(json_object_get(json_object_get(j, "connections"), "protocol"));
    return p ? p : "";
}

typedef struct scen {
    const char *name, *n;
} scen;

static const scen scenarios[] = {
    {"counter", "400"},          {"cpu", "200"},    {"io", "300"}, {"spreadsheet", "300"},
    {"spreadsheet-live", "200"}, {"custom", "200"},
};

/* Every php-via scenario in both models against url (NULL: embedded),
 * with extra options (e.g. --cacert); protocol is what the JSON must say. */
static void all_scenarios(const char *url, const char *extra_a, const char *extra_b,
                          const char *protocol, const char *where)
{
    for (size_t i = 0; i < HM_ARRAY_LEN(scenarios); i++) {
        for (int browser = 0; browser < 2; browser++) {
            char *args[24];
            int n = 0;
            args[n++] = "--http2";
            if (url) {
                args[n++] = "--url";
                args[n++] = (char *)url;
            }
            if (extra_a) args[n++] = (char *)extra_a;
            if (extra_b) args[n++] = (char *)extra_b;
            args[n++] = "--mode";
            args[n++] = browser ? "browser" : "hammer";
            args[n++] = "-c";
            args[n++] = browser ? "6" : "8";
            args[n++] = "-n";
            args[n++] = (char *)scenarios[i].n;
            args[n++] = "scenario";
            args[n++] = (char *)scenarios[i].name;
            args[n] = NULL;
            json_t *j = hammer_json(0, args);
            ASSERT_STREQ(protocol_of(j), protocol);
            ASSERT_EQ(json_int_at(j, "actions.ok"), atoi(scenarios[i].n));
            ASSERT_EQ(json_int_at(j, "actions.failed"), 0);
            ASSERT_EQ(json_int_at(j, "check.passed"), 1);
            ASSERT_GT(json_int_at(j, "patches.observed"), 0);
            /* A tab is one connection: page, SSE stream and actions. */
            if (browser) ASSERT_EQ(json_int_at(j, "connections.established"), 6);
            json_decref(j);
        }
        printf("%s: %s in both load models over %s: ok\n", where, scenarios[i].name, protocol);
    }
}

static void usage_errors(void)
{
    proc p;
    char *a1[] = {(char *)hammer, "--streams", "4", "-n", "5", "scenario", "counter", NULL};
    ASSERT_EQ(proc_run(&p, a1, 20), 2);
    ASSERT(strstr(p.out, "--streams multiplexes HTTP/2 streams: it needs --http2"));
    char *a2[] = {(char *)hammer, "--http2", "--streams", "4",       "--mode", "browser",
                  "-n",           "5",       "scenario",  "counter", NULL};
    ASSERT_EQ(proc_run(&p, a2, 20), 2);
    ASSERT(strstr(p.out, "--streams applies to the hammer load model and to get"));
    char *a3[] = {(char *)hammer, "--http2", "-n", "5", "scenario", "sticky", NULL};
    ASSERT_EQ(proc_run(&p, a3, 20), 2);
    ASSERT(strstr(p.out, "sticky needs --url over --http2"));
    char *a4[] = {(char *)hammer, "--http2", "--streams", "0", "scenario", "counter", NULL};
    ASSERT_EQ(proc_run(&p, a4, 20), 2);
    printf("usage: --streams without --http2, in browser mode, 0; sticky embedded: exit 2\n");
}

static void part_embedded(void)
{
    usage_errors();
    all_scenarios(NULL, NULL, NULL, "h2c", "embedded");
    /* Hammer model with 4 streams on each of 4 connections. */
    char *args[] = {"--http2", "--streams", "4",        "-c",      "4",
                    "-n",      "2000",      "scenario", "counter", NULL};
    json_t *j = hammer_json(0, args);
    ASSERT_EQ(json_int_at(j, "actions.ok"), 2000);
    ASSERT_EQ(json_int_at(j, "connections.streams"), 4);
    ASSERT_EQ(json_int_at(j, "check.passed"), 1);
    /* 4 connections of actions, the observer's and the set-up page load's. */
    ASSERT_EQ(json_int_at(j, "connections.established"), 6);
    json_decref(j);
    printf("embedded: --streams 4 -c 4: 16 actions in flight on 4 connections: ok\n");
    char *pl[] = {"--http2", "--plugin", (char *)plugin, "-c",           "6",
                  "-n",      "120",      "scenario",     "double-click", NULL};
    j = hammer_json(0, pl);
    ASSERT_STREQ(protocol_of(j), "h2c");
    ASSERT_EQ(json_int_at(j, "actions.ok"), 120);
    json_decref(j);
    printf("embedded: the example plugin over h2c: ok\n");
}

/* Throwaway certificates for 127.0.0.1 in tmpdir/pki. */
static void make_certs(char *cert, char *key, size_t cap)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "sh %s %s/pki >/dev/null", gen_cert, tmpdir);
    ASSERT_EQ(system(cmd), 0);
    snprintf(cacert, sizeof(cacert), "%s/pki/ca.pem", tmpdir);
    snprintf(cert, cap, "%s/pki/server.pem", tmpdir);
    snprintf(key, cap, "%s/pki/server.key", tmpdir);
}

static pid_t start_app(int port, const char *a, const char *b, const char *c, const char *d,
                       const char *e)
{
    char port_s[16];
    snprintf(port_s, sizeof(port_s), "%d", port);
    char *argv[16] = {(char *)bench_app, "--port", port_s, "--quiet"};
    int n = 4;
    const char *extra[] = {a, b, c, d, e};
    for (size_t i = 0; i < HM_ARRAY_LEN(extra) && extra[i]; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    pid_t pid = start(argv);
    wait_listening(port);
    return pid;
}

/* php-via compresses pages, action answers and SSE streams with Brotli:
 * over HTTP/2 too they are decoded as they arrive. */
static void compressed_h2(void)
{
    int port = free_port();
    pid_t app = start_app(port, "--http2", "--brotli", NULL, NULL, NULL);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    for (int browser = 0; browser < 2; browser++) {
        char *args[] = {"--http2",  "--compressed",
                        "--url",    url,
                        "--mode",   browser ? "browser" : "hammer",
                        "-c",       "4",
                        "-n",       "80",
                        "scenario", "counter",
                        NULL};
        json_t *j = hammer_json(0, args);
        ASSERT_EQ(json_int_at(j, "actions.ok"), 80);
        ASSERT_EQ(json_int_at(j, "check.passed"), 1);
        ASSERT_GT(json_int_at(j, "bytes.compressed"), 0);
        ASSERT_GT(json_int_at(j, "bytes.decompressed"), json_int_at(j, "bytes.compressed"));
        json_decref(j);
    }
    stop(app);
    printf("bench_app --http2 --brotli: counter in both load models, bodies decoded: ok\n");
}

static void part_tls(void)
{
    compressed_h2();
    char cert[300], key[300], url[64];
    make_certs(cert, key, sizeof(cert));
    int port = free_port();
    pid_t app = start_app(port, "--http2", "--tls-cert", cert, "--tls-key", key);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d", port);
    all_scenarios(url, "--cacert", cacert, "h2", "bench_app over TLS");
    /* Without --http2 the same server is HTTP/1.1 over TLS, as before. */
    char *h1[] = {"--url", url,   "--cacert", cacert,    "-c", "4",
                  "-n",    "100", "scenario", "counter", NULL};
    json_t *j = hammer_json(0, h1);
    ASSERT_STREQ(protocol_of(j), "http/1.1");
    json_decref(j);
    /* HTTP/2 links take their handshake's turn: one at a time, six tabs
     * open and every action is answered. */
    char *one[] = {
        "--http2", "--url", url, "--cacert",         cacert, "--mode",   "browser", "-c", "6", "-n",
        "60",      "-t",    "1", "--tls-handshakes", "1",    "scenario", "counter", NULL};
    j = hammer_json(0, one);
    ASSERT_STREQ(protocol_of(j), "h2");
    ASSERT_EQ(json_int_at(j, "actions.ok"), 60);
    ASSERT_EQ(json_int_at(j, "tls.full_handshakes") + json_int_at(j, "tls.resumed_handshakes"),
              json_int_at(j, "connections.established"));
    json_decref(j);
    printf("tls: h2 links with --tls-handshakes 1: every tab opened, every action answered: ok\n");
    stop(app);
    /* A server that does not speak h2 is unreachable, saying why. */
    port = free_port();
    app = start_app(port, "--tls-cert", cert, "--tls-key", key, NULL);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d", port);
    char *argv[] = {(char *)hammer, "--http2", "--url",    url,       "--cacert", cacert,
                    "-n",           "5",       "scenario", "counter", NULL};
    proc p;
    ASSERT_EQ(proc_run(&p, argv, 30), 2);
    ASSERT(strstr(p.out, "no application protocol"));
    stop(app);
    printf("tls: ALPN h2 refused by an HTTP/1.1-only server: exit 2, said why: ok\n");
}

/* Caddy with fronts on lb_tls (h2 over TLS), lb_h2c (h2c) -> app, and
 * lb_up (h2c) -> h2c upstream app2. */
static pid_t start_caddy(const char *exe, const char *cert, const char *key, int lb_tls, int lb_h2c,
                         int lb_up, int app, int app2)
{
    char conf[400];
    snprintf(conf, sizeof(conf), "%s/Caddyfile", tmpdir);
    write_file(conf,
               "{\n  admin off\n  auto_https off\n  servers {\n    protocols h1 h2 h2c\n  }\n}\n"
               "https://127.0.0.1:%d {\n  tls %s %s\n  reverse_proxy 127.0.0.1:%d {\n"
               "    flush_interval -1\n  }\n}\n"
               "http://127.0.0.1:%d {\n  reverse_proxy 127.0.0.1:%d {\n    flush_interval -1\n"
               "  }\n}\n"
               "http://127.0.0.1:%d {\n  reverse_proxy h2c://127.0.0.1:%d {\n"
               "    flush_interval -1\n  }\n}\n",
               lb_tls, cert, key, app, lb_h2c, app, lb_up, app2);
    char *argv[] = {(char *)exe, "run", "--config", conf, "--adapter", "caddyfile", NULL};
    pid_t pid = start(argv);
    wait_listening(lb_tls);
    wait_listening(lb_h2c);
    wait_listening(lb_up);
    return pid;
}

static const char *part_caddy(void)
{
    char exe[256];
    if (!find_tool("caddy", exe, sizeof(exe))) return "caddy is not installed";
    char cert[300], key[300], url[64];
    make_certs(cert, key, sizeof(cert));
    int app_port = free_port(), app2_port = free_port();
    pid_t app = start_app(app_port, NULL, NULL, NULL, NULL, NULL);
    pid_t app2 = start_app(app2_port, "--http2", NULL, NULL, NULL, NULL);
    int lb_tls = free_port(), lb_h2c = free_port(), lb_up = free_port();
    pid_t caddy = start_caddy(exe, cert, key, lb_tls, lb_h2c, lb_up, app_port, app2_port);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d", lb_tls);
    all_scenarios(url, "--cacert", cacert, "h2", "Caddy h2 front");
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", lb_h2c);
    all_scenarios(url, NULL, NULL, "h2c", "Caddy h2c front");
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", lb_up);
    for (int browser = 0; browser < 2; browser++) {
        char *args[] = {"--http2", "--url", url,  "--mode", browser ? "browser" : "hammer",
                        "-c",      "6",     "-n", "300",    "scenario",
                        "counter", NULL};
        json_t *j = hammer_json(0, args);
        ASSERT_EQ(json_int_at(j, "actions.ok"), 300);
        ASSERT_EQ(json_int_at(j, "check.passed"), 1);
        json_decref(j);
    }
    printf("Caddy speaking h2c to bench_app --http2: counter in both load models: ok\n");
    /* Servers first: a balancer waits for the SSE streams it proxies. */
    stop(app);
    stop(app2);
    stop(caddy);
    return NULL;
}

/* Four consecutive free ports for bench_app --processes 4. */
static double variant_pct(json_t *j, const char *variant)
{
    json_t *v = json_object_get(json_object_get(json_object_get(j, "variants"), variant), "ok_pct");
    if (!json_is_number(v)) HM_FAIL_("no variants.%s.ok_pct in the JSON", variant);
    return json_number_value(v);
}

static const char *part_sticky(void)
{
    char exe[256];
    if (!find_tool("caddy", exe, sizeof(exe))) return "caddy is not installed";
    int base = free_port_run(4), lb = free_port(), lb_tls = free_port();
    char cert[300], key[300];
    make_certs(cert, key, sizeof(cert));
    char base_s[16];
    snprintf(base_s, sizeof(base_s), "%d", base);
    char *app_argv[] = {(char *)bench_app, "--port", base_s, "--quiet", "--processes", "4", NULL};
    pid_t app = start(app_argv);
    for (int i = 0; i < 4; i++)
        wait_listening(base + i);
    char conf[400];
    snprintf(conf, sizeof(conf), "%s/Caddyfile.sticky", tmpdir);
    write_file(conf,
               "{\n  admin off\n  auto_https off\n  servers {\n    protocols h1 h2 h2c\n  }\n}\n"
               "http://127.0.0.1:%d {\n  reverse_proxy 127.0.0.1:%d 127.0.0.1:%d "
               "127.0.0.1:%d 127.0.0.1:%d {\n    lb_policy cookie via_lb\n"
               "    flush_interval -1\n  }\n}\n"
               "https://127.0.0.1:%d {\n  tls %s %s\n  reverse_proxy 127.0.0.1:%d 127.0.0.1:%d "
               "127.0.0.1:%d 127.0.0.1:%d {\n    lb_policy cookie via_lb\n"
               "    flush_interval -1\n  }\n}\n",
               lb, base, base + 1, base + 2, base + 3, lb_tls, cert, key, base, base + 1, base + 2,
               base + 3);
    char *caddy_argv[] = {exe, "run", "--config", conf, "--adapter", "caddyfile", NULL};
    pid_t caddy = start(caddy_argv);
    wait_listening(lb);
    wait_listening(lb_tls);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", lb);
    char *args[] = {"--http2", "--url", url, "-c", "40", "-n", "2000", "scenario", "sticky", NULL};
    json_t *j = hammer_json(0, args);
    ASSERT_STREQ(protocol_of(j), "h2c");
    ASSERT_DBL_NEAR(variant_pct(j, "cookie"), 100.0, 1e-9);
    json_decref(j);
    /* Without Caddy's cookie the tabs' requests scatter over the workers. */
    char *nc[] = {"--http2", "--no-cookies", "--url",    url,      "-c", "40",
                  "-n",      "2000",         "scenario", "sticky", NULL};
    j = hammer_json(1, nc);
    double pct = variant_pct(j, "cookie");
    ASSERT_LT(pct, 60);
    json_decref(j);
    printf("sticky over h2c through Caddy (lb_policy cookie): cookie variant 100%%; cookies "
           "ignored %.1f%%: ok\n",
           pct);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d", lb_tls);
    char *tl[] = {"--http2", "--url", url,    "--cacert", cacert,   "-c",
                  "40",      "-n",    "2000", "scenario", "sticky", NULL};
    j = hammer_json(0, tl);
    ASSERT_STREQ(protocol_of(j), "h2");
    ASSERT_DBL_NEAR(variant_pct(j, "cookie"), 100.0, 1e-9);
    json_decref(j);
    printf("sticky over h2 (TLS) through Caddy: cookie variant 100%%: ok\n");
    stop(app);
    stop(caddy);
    return NULL;
}

static const char *part_nghttpd(void)
{
    char exe[256];
    if (!find_tool("nghttpd", exe, sizeof(exe))) return "nghttpd is not installed (nghttp2-server)";
    char cert[300], key[300], www[300], url[80];
    make_certs(cert, key, sizeof(cert));
    snprintf(www, sizeof(www), "%s/www", tmpdir);
    ASSERT_EQ(mkdir(www, 0700), 0);
    char index[340];
    snprintf(index, sizeof(index), "%s/index.html", www);
    write_file(index, "hello over HTTP/2\n");
    int p1 = free_port(), p2 = free_port();
    char p1s[16], p2s[16];
    snprintf(p1s, sizeof(p1s), "%d", p1);
    snprintf(p2s, sizeof(p2s), "%d", p2);
    char *a1[] = {exe, "--no-tls", "-d", www, p1s, NULL};
    char *a2[] = {exe, "-d", www, p2s, key, cert, NULL};
    pid_t s1 = start(a1), s2 = start(a2);
    wait_listening(p1);
    wait_listening(p2);
    for (int tls = 0; tls < 2; tls++) {
        snprintf(url, sizeof(url), "%s://127.0.0.1:%d/index.html", tls ? "https" : "http",
                 tls ? p2 : p1);
        char *args[] = {"--http2",   "--url", url,  "--cacert", cacert,     "-c",  "4",
                        "--streams", "8",     "-n", "4000",     "scenario", "get", NULL};
        json_t *j = hammer_json(0, args);
        ASSERT_STREQ(protocol_of(j), tls ? "h2" : "h2c");
        ASSERT_EQ(json_int_at(j, "actions.ok"), 4000);
        ASSERT_EQ(json_int_at(j, "actions.failed"), 0);
        ASSERT_EQ(json_int_at(j, "connections.established"), 4);
        json_decref(j);
        printf("nghttpd: get, 8 streams on each of 4 %s connections: ok\n", tls ? "h2" : "h2c");
    }
    /* -R: a coroutine per stream, each sleeping to its schedule. */
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/index.html", p1);
    char *paced[] = {"--http2", "--url", url,  "-c",  "2",        "--streams", "4",
                     "-R",      "2000",  "-n", "400", "scenario", "get",       NULL};
    json_t *j = hammer_json(0, paced);
    ASSERT_EQ(json_int_at(j, "actions.ok"), 400);
    ASSERT_EQ(json_int_at(j, "connections.established"), 2);
    json_decref(j);
    printf("nghttpd: get -R 2000, 4 streams on each of 2 h2c connections: ok\n");
    stop(s1);
    stop(s2);
    return NULL;
}

static const char *reason_of(json_t *j, const char *kind)
{
    const char *r = json_string_value(
        json_object_get(json_object_get(json_object_get(j, "error_reasons"), kind), "reason"));
    return r ? r : "";
}

/* get against a server that misbehaves after answering the reachability
 * check (h2_test_server.c): each kind of HTTP/2 failure counted under its
 * error kind, with its reason in words. */
static void part_misbehave(void)
{
    h2ts srv = {0};
    h2ts_start(&srv);
    char url[128];
    /* also: a second kind the failure may take. The server closes right
     * after the head; bytes of ours it has not read yet (a WINDOW_UPDATE)
     * make its kernel answer with a reset instead of a clean close. */
    typedef struct {
        const char *path, *kind, *reason, *timeout, *also;
    } bad;
    static const bad cases[] = {
        {"reset", "reset", "RST_STREAM INTERNAL_ERROR", NULL, NULL},
        {"goaway-calm", "closed", "GOAWAY ENHANCE_YOUR_CALM", NULL, "reset"},
        {"close", "closed", "closed", NULL, "reset"},
        {"garbage", "protocol", "", NULL, NULL},
        {"silent", "timeout", "within 0.3 s", "300ms", NULL},
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(cases); i++) {
        const bad *b = &cases[i];
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/first-ok-%zu/%s", srv.port, i, b->path);
        /* 2 connections x 3 streams: all six at once, driven by get's pump. */
        char *args[] = {"--http2",
                        "--url",
                        url,
                        "-c",
                        "2",
                        "-n",
                        "6",
                        "--streams",
                        "3",
                        "--timeout",
                        b->timeout ? (char *)b->timeout : "10s",
                        "scenario",
                        "get",
                        NULL};
        json_t *j = hammer_json(1, args);
        char key[64];
        snprintf(key, sizeof(key), "errors.%s", b->kind);
        long long n = json_int_at(j, key), also = 0;
        if (b->also) {
            snprintf(key, sizeof(key), "errors.%s", b->also);
            also = json_int_at(j, key);
        }
        if (also < 0) also = 0;
        if (n + also != 6) {
            char *errs = json_dumps(json_object_get(j, "errors"), JSON_COMPACT);
            char *reasons = json_dumps(json_object_get(j, "error_reasons"), JSON_COMPACT);
            HM_FAIL_("/%s: %lld %s + %lld %s of 6; errors %s; reasons %s", b->path, n, b->kind,
                     also, b->also ? b->also : "-", errs, reasons);
        }
        ASSERT_EQ(json_int_at(j, "actions.failed"), 6);
        ASSERT_EQ(json_int_at(j, "actions.ok"), 0);
        /* All of them reset (possible, if unlikely): that reason says so. */
        const char *why = n ? reason_of(j, b->kind) : reason_of(j, b->also);
        if (!why[0] || (n && !strstr(why, b->reason)))
            HM_FAIL_("%s: reason '%s' does not say '%s'", b->path, why, b->reason);
        printf("misbehaving h2c server, /%s: %lld errors of kind %s (%lld %s), reason \"%s\": "
               "ok\n",
               b->path, n, b->kind, also, b->also ? b->also : "-", why);
        json_decref(j);
    }
    /* Misbehaving from the start: unreachable, saying why. */
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/reset", srv.port);
    char *argv[] = {(char *)hammer, "--http2", "--url", url, "-n", "5", "scenario", "get", NULL};
    proc p;
    ASSERT_EQ(proc_run(&p, argv, 30), 2);
    ASSERT(strstr(p.out, "RST_STREAM INTERNAL_ERROR"));
    h2ts_stop(&srv);
    printf("misbehaving h2c server from the first request: exit 2, said why: ok\n");
}

int main(int argc, char **argv)
{
    if (argc < 6) HM_FAIL_("usage: %s HAMMER BENCH_APP GEN_CERT PLUGIN PART", argv[0]);
    hammer = argv[1];
    bench_app = argv[2];
    gen_cert = argv[3];
    plugin = argv[4];
    const char *part = argv[5];
    srand((unsigned)getpid());
    signal(SIGPIPE, SIG_IGN);
    atexit(kill_started);
    snprintf(json_path, sizeof(json_path), "/tmp/hammer-h2-%d.json", (int)getpid());
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/hammer-h2-XXXXXX");
    ASSERT(mkdtemp(tmpdir));
    atexit(cleanup);
    const char *skipped = NULL;
    if (!strcmp(part, "embedded"))
        part_embedded();
    else if (!strcmp(part, "tls"))
        part_tls();
    else if (!strcmp(part, "caddy"))
        skipped = part_caddy();
    else if (!strcmp(part, "sticky"))
        skipped = part_sticky();
    else if (!strcmp(part, "nghttpd"))
        skipped = part_nghttpd();
    else if (!strcmp(part, "misbehave"))
        part_misbehave();
    else
        HM_FAIL_("unknown part %s", part);
    if (skipped) HM_SKIP("%s", skipped);
    return 0;
}
