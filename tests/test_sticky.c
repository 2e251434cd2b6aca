/* The sticky scenario against bench_app's dispatch modes, and through real
 * load balancers (Caddy with lb_policy cookie, HAProxy with cookie insert)
 * in front of `bench_app --processes 4`.
 * argv: HAMMER BENCH_APP [PART], PART one of
 *   dispatch  the dispatch modes and the embedded bench_app (never skips);
 *   caddy     through Caddy: skipped (77) when caddy is not installed;
 *   haproxy   through HAProxy: skipped likewise;
 * no PART: all three; it passes when the dispatch part passes and every
 * balancer found passes, and names each balancer part skipped and why.
 * CTest runs each part as its own test (sticky_dispatch, sticky_caddy,
 * sticky_haproxy), so a missing balancer shows as that part skipped. */
#include "base/hm_base.h"
#include "run_util.h"

#include <stdarg.h>
#include <stdbool.h>
#include <sys/stat.h>

static const char *hammer, *bench_app;
static char json_path[256], tmpdir[256];

static double variant_pct(json_t *j, const char *variant)
{
    json_t *v = json_object_get(json_object_get(json_object_get(j, "variants"), variant), "ok_pct");
    if (!json_is_number(v)) HM_FAIL_("no variants.%s.ok_pct in the JSON", variant);
    return json_number_value(v);
}

static long long variant_workers(json_t *j, const char *variant)
{
    json_t *w =
        json_object_get(json_object_get(json_object_get(j, "variants"), variant), "workers");
    return (long long)json_object_size(w);
}

/* The cookie variant's SSE probe outcome `kind` (sse_outcomes.<kind>). */
static long long sse_outcome(json_t *j, const char *kind)
{
    json_t *v = json_object_get(
        json_object_get(json_object_get(json_object_get(j, "variants"), "cookie"), "sse_outcomes"),
        kind);
    if (!json_is_integer(v)) HM_FAIL_("no variants.cookie.sse_outcomes.%s in the JSON", kind);
    return (long long)json_integer_value(v);
}

/* Runs hammer sticky with extra args; returns the parsed JSON and exit code. */
/* VUs per variant: with all-or-nothing routing per VU, the legacy share is
 * binomial(vus, 1/4); 100 VUs put 40% three and a half deviations away. */
static const char *vus = "40";

static json_t *sticky(int *exit_code, const char *url, bool no_cookies, const char *extra_a,
                      const char *extra_b)
{
    char *argv[24];
    int n = 0;
    argv[n++] = (char *)hammer;
    argv[n++] = "-c";
    argv[n++] = (char *)vus;
    argv[n++] = "-n";
    argv[n++] = "2000";
    argv[n++] = "--timeout"; /* results, not speed: well above a busy machine's */
    argv[n++] = "60s";
    argv[n++] = "--json";
    argv[n++] = json_path;
    if (url) {
        argv[n++] = "--url";
        argv[n++] = (char *)url;
    }
    if (no_cookies) argv[n++] = "--no-cookies";
    if (extra_a) argv[n++] = (char *)extra_a;
    if (extra_b) argv[n++] = (char *)extra_b;
    argv[n++] = "scenario";
    argv[n++] = "sticky";
    argv[n] = NULL;
    proc p;
    unlink(json_path);
    *exit_code = proc_run(&p, argv, 180);
    printf("%s", strstr(p.out, "variant ") ? strstr(p.out, "variant ") : p.out);
    return load_json(json_path);
}

/* Starts bench_app on `port` (with extra options) and waits until
 * ready_port answers. */
static pid_t start_app_ready(int port, int ready_port, const char *extra[], proc *app)
{
    char port_s[16];
    snprintf(port_s, sizeof(port_s), "%d", port);
    char *argv[16] = {(char *)bench_app, "--port", port_s, "--quiet"};
    int n = 4;
    for (int i = 0; extra && extra[i]; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    proc_start(app, argv);
    track(app->pid);
    /* Ready when the last port answers a TCP connect. */
    if (wait_port(ready_port, app->pid)) return app->pid;
    HM_FAIL_("bench_app for port %d exited before it listened", ready_port);
}

static pid_t start_app(int port, const char *extra[], proc *app)
{
    return start_app_ready(port, port, extra, app);
}

static void stop(proc *p)
{
    kill(p->pid, SIGTERM);
    proc_wait(p, 20);
    untrack(p->pid);
}

static void dispatch_modes(void)
{
    int port, rc;
    proc app;
    char url[64];
    /* stream: whichever worker is free; the cookie is ignored, so both fail. */
    port = free_port();
    const char *stream[] = {"--workers", "4", "--dispatch", "stream", NULL};
    start_app(port, stream, &app);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    json_t *j = sticky(&rc, url, false, NULL, NULL);
    ASSERT_EQ(rc, 1);
    ASSERT_LT(variant_pct(j, "legacy"), 60);
    ASSERT_LT(variant_pct(j, "cookie"), 60);
    ASSERT_EQ(variant_workers(j, "cookie"), 4);
    /* A worker that lacks the context answers /_sse with 200 and the reload
     * script, as php-via does: not a live stream, and not counted as one. */
    long long live = sse_outcome(j, "live"), reload = sse_outcome(j, "reload_script");
    ASSERT_GT(reload, 0);
    ASSERT_EQ(live + reload + sse_outcome(j, "empty_200") + sse_outcome(j, "other") +
                  sse_outcome(j, "status_400") + sse_outcome(j, "status_403"),
              atoll(vus));
    json_t *ck = json_object_get(json_object_get(j, "variants"), "cookie");
    ASSERT_EQ(json_integer_value(json_object_get(ck, "sse_ok")), live);
    json_decref(j);
    stop(&app);
    printf("dispatch stream: legacy and cookie both fail, as php-via's mode 7 does; SSE probe "
           "%lld live, %lld reload script\n",
           live, reload);

    port = free_port();
    const char *session[] = {"--workers", "4", "--dispatch", "session", NULL};
    start_app(port, session, &app);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    j = sticky(&rc, url, false, NULL, NULL);
    ASSERT_EQ(rc, 0);
    ASSERT_DBL_NEAR(variant_pct(j, "cookie"), 100.0, 1e-9);
    ASSERT_LT(variant_pct(j, "legacy"), 60);
    ASSERT_EQ(sse_outcome(j, "live"), atoll(vus)); /* every probe reached the owner */
    ASSERT_EQ(sse_outcome(j, "reload_script"), 0);
    json_decref(j);
    stop(&app);
    printf("dispatch session: cookie 100%%, legacy fails; every SSE probe a live stream\n");

    port = free_port();
    const char *fd[] = {"--workers", "4", "--dispatch", "fd", NULL};
    start_app(port, fd, &app);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    j = sticky(&rc, url, false, NULL, NULL);
    ASSERT_DBL_NEAR(variant_pct(j, "keepalive"), 100.0, 1e-9);
    ASSERT_LT(variant_pct(j, "legacy"), 60);
    json_decref(j);
    stop(&app);
    printf("dispatch fd: actions on the page's connection 100%%, a connection per action fails\n");

    /* No --url: the embedded bench_app runs --workers 4 --dispatch session. */
    vus = "100";
    j = sticky(&rc, NULL, false, NULL, NULL);
    vus = "40";
    ASSERT_EQ(rc, 0);
    ASSERT_DBL_NEAR(variant_pct(j, "cookie"), 100.0, 1e-9);
    ASSERT_LE(variant_pct(j, "legacy"), 40);
    json_decref(j);
    printf("embedded: cookie 100%%, legacy <= 40%%\n");
}

/* Runs the balancer part for name ("caddy" or "haproxy"). Returns NULL
 * when it ran (and passed), else why it was skipped. */
static const char *through_balancer(const char *name)
{
    char exe[256];
    if (!find_tool(name, exe, sizeof(exe)))
        return "not installed (no such command on PATH; scripts/deps.sh installs it when it can)";
    int base = free_port_run(4), lb = free_port();
    proc app, bal;
    const char *procs[] = {"--processes", "4", NULL};
    start_app_ready(base, base + 3, procs, &app); /* ready when the last process listens */
    char conf[512];
    if (!strcmp(name, "caddy")) {
        snprintf(conf, sizeof(conf), "%s/Caddyfile", tmpdir);
        write_file(conf,
                   "{\n  admin off\n  auto_https off\n}\n"
                   "http://127.0.0.1:%d {\n  reverse_proxy 127.0.0.1:%d 127.0.0.1:%d "
                   "127.0.0.1:%d 127.0.0.1:%d {\n    lb_policy cookie via_lb\n"
                   "    flush_interval -1\n  }\n}\n",
                   lb, base, base + 1, base + 2, base + 3);
        char *argv[] = {exe, "run", "--config", conf, "--adapter", "caddyfile", NULL};
        proc_start(&bal, argv);
        track(bal.pid);
    } else {
        snprintf(conf, sizeof(conf), "%s/haproxy.cfg", tmpdir);
        write_file(conf,
                   "global\n  maxconn 4000\ndefaults\n  mode http\n  timeout connect 5s\n"
                   "  timeout client 60s\n  timeout server 60s\n"
                   "frontend fe\n  bind 127.0.0.1:%d\n  default_backend be\n"
                   "backend be\n  balance roundrobin\n  cookie SRV insert indirect nocache\n"
                   "  server w0 127.0.0.1:%d cookie w0\n  server w1 127.0.0.1:%d cookie w1\n"
                   "  server w2 127.0.0.1:%d cookie w2\n  server w3 127.0.0.1:%d cookie w3\n",
                   lb, base, base + 1, base + 2, base + 3);
        char *argv[] = {exe, "-db", "-f", conf, NULL};
        proc_start(&bal, argv);
        track(bal.pid);
    }
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", lb);
    if (!wait_port(lb, bal.pid)) HM_FAIL_("%s exited before it listened:\n%s", name, bal.out);
    int rc;
    json_t *j = sticky(&rc, url, false, NULL, NULL);
    ASSERT_EQ(rc, 0);
    ASSERT_DBL_NEAR(variant_pct(j, "cookie"), 100.0, 1e-9);
    ASSERT_EQ(variant_workers(j, "cookie"), 4); /* the VUs spread over all four */
    json_decref(j);
    j = sticky(&rc, url, true, NULL, NULL);
    ASSERT_EQ(rc, 1);
    double pct = variant_pct(j, "cookie");
    ASSERT_LT(pct, 60);
    json_decref(j);
    printf("%s: sticky cookie honoured 100%%; cookies ignored %.1f%%\n", name, pct);
    /* Servers first: a balancer waits for the SSE streams it proxies. */
    stop(&app);
    kill(bal.pid, SIGTERM);
    proc_wait(&bal, 20);
    untrack(bal.pid);
    return NULL;
}

static void cleanup(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    unlink(json_path);
}

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s HAMMER BENCH_APP [dispatch|caddy|haproxy]", argv[0]);
    hammer = argv[1];
    bench_app = argv[2];
    const char *part = argc > 3 ? argv[3] : NULL;
    static const char *const balancers[] = {"caddy", "haproxy"};
    bool known = !part || !strcmp(part, "dispatch");
    for (size_t i = 0; i < HM_ARRAY_LEN(balancers); i++)
        known = known || !strcmp(part, balancers[i]);
    if (!known) HM_FAIL_("unknown part %s: dispatch, caddy or haproxy", part);
    srand((unsigned)getpid());
    atexit(kill_started);
    snprintf(json_path, sizeof(json_path), "/tmp/hammer-sticky-%d.json", (int)getpid());
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/hammer-lb-XXXXXX");
    ASSERT(mkdtemp(tmpdir));
    atexit(cleanup);

    if (!part || !strcmp(part, "dispatch")) {
        dispatch_modes();
        printf("ran: dispatch modes and the embedded bench_app: ok\n");
    }
    int ran = 0, skipped = 0;
    for (size_t i = 0; i < HM_ARRAY_LEN(balancers); i++) {
        if (part && strcmp(part, balancers[i])) continue;
        const char *why = through_balancer(balancers[i]);
        if (why) {
            printf("skipped: %s: %s\n", balancers[i], why);
            skipped++;
        } else {
            printf("ran: %s: ok\n", balancers[i]);
            ran++;
        }
    }
    /* A balancer part asked for alone that could not run ran nothing. */
    if (part && strcmp(part, "dispatch") && skipped && !ran) HM_SKIP("%s is not installed", part);
    return 0;
}
