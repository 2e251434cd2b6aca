/* The sticky scenario against bench_app's dispatch modes (and the summary's
 * diagnosis of each), a php-via-like server that sends no X-Via-Worker,
 * and through real load balancers (Caddy with lb_policy cookie, HAProxy
 * with cookie insert) in front of `bench_app --processes 4`, each started
 * with the config docs/sticky-routing.md gives, taken from the page.
 * argv: HAMMER BENCH_APP STICKY_ROUTING.MD MISBEHAVE_SERVER.PY [PART], PART one of
 *   dispatch  the dispatch modes, the embedded bench_app and a server
 *             without X-Via-Worker (never skips);
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

static const char *hammer, *bench_app, *doc_path, *misbehave_server;
static proc run_out; /* the last sticky run: its output */
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
    unlink(json_path);
    *exit_code = proc_run(&run_out, argv, 180);
    const char *table = strstr(run_out.out, "variant ");
    printf("%s", table ? table : run_out.out);
    return load_json(json_path);
}

/* sticky.diagnosis of the run's JSON: the sentence, or NULL when null. */
static const char *diagnosis(json_t *j)
{
    json_t *st = json_object_get(j, "sticky");
    if (!json_is_object(st)) HM_FAIL_("no sticky object in the JSON");
    json_t *d = json_object_get(st, "diagnosis");
    if (!json_is_string(d) && !json_is_null(d)) HM_FAIL_("sticky.diagnosis is no string or null");
    return json_string_value(d);
}

/* The run's summary has the diagnosis on its own line. */
static void summary_has_diagnosis(const char *diag)
{
    char line[512];
    snprintf(line, sizeof(line), "\nDiagnosis         %s\n", diag);
    ASSERT(strstr(run_out.out, line));
}

/* What the per-worker pattern says when the cookie variant shows it. */
static void cookie_variant_diagnosed(json_t *j)
{
    const char *d = diagnosis(j);
    ASSERT(d);
    ASSERT(strstr(d, "each worker keeps its own contexts: requests of one session reached other "
                     "workers (400 Invalid context"));
    ASSERT(strstr(d, "route by the session cookie, with a cookie-sticky balancer in front of "
                     "single-worker processes (docs/sticky-routing.md)"));
    summary_has_diagnosis(d);
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
    cookie_variant_diagnosed(j);
    ASSERT(strstr(diagnosis(j), "SSE reload scripts"));
    ASSERT(!strstr(run_out.out, "no X-Via-Worker header")); /* bench_app sends it */
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
    /* The cookie variant passed; the diagnosis explains the others. */
    const char *d = diagnosis(j);
    ASSERT(d);
    ASSERT(strstr(d, "each worker keeps its own contexts: the legacy and keepalive variants' "
                     "requests reached workers without their context; the cookie variant, "
                     "routed by its session cookie, reached the owner every time "
                     "(docs/sticky-routing.md)"));
    summary_has_diagnosis(d);
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
    cookie_variant_diagnosed(j);
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

/* A php-via-like server with one process sends no X-Via-Worker: the
 * per-worker column says why it is empty, and with nothing failing there
 * is no diagnosis. */
static void without_worker_header(void)
{
    char *argv[] = {"/usr/bin/python3", (char *)misbehave_server, "--mode", "good", NULL};
    proc srv;
    proc_start(&srv, argv);
    track(srv.pid);
    if (!proc_wait_output(&srv, "\n")) HM_FAIL_("the misbehave server did not start:\n%s", srv.out);
    int port = atoi(srv.out);
    ASSERT_GT(port, 0);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    const char *saved = vus;
    vus = "8"; /* a Python server: a small run */
    int rc;
    json_t *j = sticky(&rc, url, false, NULL, NULL);
    vus = saved;
    ASSERT_EQ(rc, 0);
    ASSERT(diagnosis(j) == NULL);
    ASSERT(!strstr(run_out.out, "Diagnosis"));
    static const char *const names[] = {"legacy", "cookie", "keepalive"};
    for (size_t i = 0; i < HM_ARRAY_LEN(names); i++) {
        ASSERT_EQ(variant_workers(j, names[i]), 0);
        char head[32];
        snprintf(head, sizeof(head), "\n%s ", names[i]); /* the variant's row */
        const char *row = strstr(run_out.out, head);
        ASSERT(row);
        row++;
        const char *eol = strchr(row, '\n');
        ASSERT(eol);
        char line[512];
        snprintf(line, sizeof(line), "%.*s", (int)(eol - row), row);
        ASSERT(strstr(line, "  - (no X-Via-Worker header: php-via sends none; bench_app does)"));
    }
    json_decref(j);
    kill(srv.pid, SIGTERM);
    proc_wait(&srv, 20);
    untrack(srv.pid);
    printf("no X-Via-Worker: the per-worker column says why it is empty; no diagnosis\n");
}

/* The doc's ports: the balancer's, then the four servers'. */
static const char *const doc_ports[] = {"127.0.0.1:8080", "127.0.0.1:3001", "127.0.0.1:3002",
                                        "127.0.0.1:3003", "127.0.0.1:3004"};

/* The one fenced block of docs/sticky-routing.md whose info string is
 * `info`, as the page has it, with each of the doc's ports replaced by
 * ports[i] (the balancer's, then base..base+3). Fails when the block is
 * missing or repeated, or a doc port is not in it. malloc'd. */
static char *doc_config(const char *info, const int ports[5])
{
    char *doc = slurp(doc_path);
    if (!doc) HM_FAIL_("cannot read %s", doc_path);
    char fence[64];
    snprintf(fence, sizeof(fence), "\n```%s\n", info);
    char *start = strstr(doc, fence);
    if (!start) HM_FAIL_("%s has no ```%s block (a complete config)", doc_path, info);
    if (strstr(start + 1, fence)) HM_FAIL_("%s has more than one ```%s block", doc_path, info);
    start += strlen(fence);
    char *end = strstr(start, "\n```\n");
    if (!end) HM_FAIL_("the ```%s block of %s does not end", info, doc_path);
    end[1] = 0;
    /* A port of up to 5 digits replaces one of 4: twice the size is room. */
    size_t cap = strlen(start) * 2 + 1, n = 0;
    char *out = malloc(cap);
    ASSERT(out);
    int used[5] = {0};
    for (const char *p = start; *p;) {
        size_t i = 0;
        while (i < HM_ARRAY_LEN(doc_ports) && strncmp(p, doc_ports[i], strlen(doc_ports[i])))
            i++;
        if (i < HM_ARRAY_LEN(doc_ports)) {
            n += (size_t)snprintf(out + n, cap - n, "127.0.0.1:%d", ports[i]);
            p += strlen(doc_ports[i]);
            used[i]++;
        } else {
            out[n++] = *p++;
        }
    }
    out[n] = 0;
    for (size_t i = 0; i < HM_ARRAY_LEN(doc_ports); i++)
        if (!used[i])
            HM_FAIL_("the ```%s block of %s does not use %s (the test maps the doc's ports "
                     "8080 and 3001..3004 to free ones)",
                     info, doc_path, doc_ports[i]);
    free(doc);
    return out;
}

/* Runs the balancer part for name ("caddy" or "haproxy") with the config
 * docs/sticky-routing.md gives for it. Returns NULL when it ran (and
 * passed), else why it was skipped. */
static const char *through_balancer(const char *name)
{
    char exe[256];
    if (!find_tool(name, exe, sizeof(exe)))
        return "not installed (no such command on PATH; scripts/deps.sh installs it when it can)";
    int base = free_port_run(4), lb = free_port();
    int ports[5] = {lb, base, base + 1, base + 2, base + 3};
    proc app, bal;
    const char *procs[] = {"--processes", "4", NULL};
    start_app_ready(base, base + 3, procs, &app); /* ready when the last process listens */
    char conf[512];
    bool caddy = !strcmp(name, "caddy");
    char *text = doc_config(caddy ? "caddyfile" : "haproxy", ports);
    snprintf(conf, sizeof(conf), "%s/%s", tmpdir, caddy ? "Caddyfile" : "haproxy.cfg");
    write_file(conf, "%s", text);
    printf("%s config from %s:\n%s", name, doc_path, text);
    free(text);
    if (caddy) {
        /* Caddy's data and config folders in the test's own: nothing of
         * the user's is read or written. */
        setenv("XDG_DATA_HOME", tmpdir, 1);
        setenv("XDG_CONFIG_HOME", tmpdir, 1);
        char *argv[] = {exe, "run", "--config", conf, "--adapter", "caddyfile", NULL};
        proc_start(&bal, argv);
    } else {
        char *argv[] = {exe, "-db", "-f", conf, NULL};
        proc_start(&bal, argv);
    }
    track(bal.pid);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", lb);
    if (!wait_port(lb, bal.pid)) HM_FAIL_("%s exited before it listened:\n%s", name, bal.out);
    int rc;
    json_t *j = sticky(&rc, url, false, NULL, NULL);
    ASSERT_EQ(rc, 0);
    ASSERT_DBL_NEAR(variant_pct(j, "cookie"), 100.0, 1e-9);
    ASSERT_EQ(variant_workers(j, "cookie"), 4); /* the VUs spread over all four */
    /* Even legacy's cookie-less page load gets the balancer's cookie. */
    ASSERT(diagnosis(j) == NULL);
    json_decref(j);
    j = sticky(&rc, url, true, NULL, NULL);
    ASSERT_EQ(rc, 1);
    double pct = variant_pct(j, "cookie");
    ASSERT_LT(pct, 60);
    cookie_variant_diagnosed(j); /* a balancer that does not stick, said in words */
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
    if (argc < 5)
        HM_FAIL_("usage: %s HAMMER BENCH_APP STICKY_ROUTING.MD MISBEHAVE_SERVER.PY "
                 "[dispatch|caddy|haproxy]",
                 argv[0]);
    hammer = argv[1];
    bench_app = argv[2];
    doc_path = argv[3];
    misbehave_server = argv[4];
    const char *part = argc > 5 ? argv[5] : NULL;
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
        without_worker_header();
        printf("ran: dispatch modes, the embedded bench_app, no X-Via-Worker: ok\n");
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
