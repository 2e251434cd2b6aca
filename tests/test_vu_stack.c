/* A browser VU is one coroutine (the tab; its EventSource is a callback
 * reader, over HTTP/1.1), and it touches one page of its stack: the deep
 * work that never suspends (JSON, the page scrape, SSE decoding) runs on
 * the loop's stack, and VU frames stay small. Each touched page, and each
 * coroutine, costs 4 KiB per VU (docs/PERFORMANCE.md, "Memory per
 * connection and per VU"). hammer runs with HAMMER_STACK_PROBE,
 * which makes the engine count each ended coroutine's resident stack pages,
 * against a bench_app started without it; the built-in counter and a flow,
 * in browser mode, and the counter over https (the EventSource's reader
 * is a TLS filter on the same callbacks). Skipped under the sanitizers,
 * whose frames are deeper by design. argv: HAMMER BENCH_APP FLOW_YAML
 * GEN_TEST_CERT */
#include "run_util.h"

#include <stdlib.h>

static const char *hammer;

/* Sums the probe lines of every loop in out. */
static void probe_totals(const char *out, long *ended, long *deep)
{
    *ended = *deep = 0;
    for (const char *p = out; (p = strstr(p, "stack probe: ")); p++) {
        long n = 0, d = 0;
        const char *past = strstr(p, "; ");
        ASSERT(sscanf(p, "stack probe: %ld coroutines ended", &n) == 1);
        ASSERT(past && sscanf(past, "; %ld past one page", &d) == 1);
        *ended += n;
        *deep += d;
    }
}

static void check(const char *what, char *const argv[], int vus)
{
    proc p;
    setenv("HAMMER_STACK_PROBE", "1", 1);
    int rc = proc_run(&p, argv, 120);
    unsetenv("HAMMER_STACK_PROBE");
    if (rc != 0) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 0);
    long ended, deep;
    probe_totals(p.out, &ended, &deep);
    printf("%s: %ld coroutines ended, %ld past one page of stack\n", what, ended, deep);
    ASSERT_GE(ended, vus); /* a tab per VU */
    /* Its EventSource has no coroutine: besides the tabs, only the run's
     * own few (the start-up probe, one per loop for its set-up). */
    if (ended > vus + 10) fprintf(stderr, "%s\n", p.out);
    ASSERT(ended <= vus + 10);
    /* The run's own few coroutines (start-up probe, finisher) may go
     * deeper, and so may the first VU to call a library function (the
     * dynamic linker resolves it on that VU's stack, saving every vector
     * register); a regression puts half of them or more past one page. */
    if (deep > 10) fprintf(stderr, "%s\n", p.out);
    ASSERT(deep <= 10);
}

int main(int argc, char **argv)
{
    if (argc < 5) HM_FAIL_("usage: %s HAMMER BENCH_APP FLOW_YAML GEN_TEST_CERT", argv[0]);
#ifdef HM_SANITIZE
    HM_SKIP("sanitizer builds: instrumentation (ASan's redzones, TSan's calls) makes every "
            "frame deeper, so stack pages say nothing about a release build");
#endif
    hammer = argv[1];
    test_certs certs;
    test_certs_make(&certs, argv[4], "vu-stack");
    int port = free_port();
    char port_s[16], url[64];
    snprintf(port_s, sizeof(port_s), "%d", port);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    char *app_argv[] = {argv[2], "--port", port_s, NULL};
    atexit(kill_started); /* a failed assertion leaves no bench_app behind */
    proc app;
    proc_start(&app, app_argv);
    track(app.pid);
    for (int i = 0; i < 100 && !strstr(app.out, "listening"); i++)
        proc_read(&app, 50);
    ASSERT(strstr(app.out, "listening"));

    char *builtin[] = {(char *)hammer, "-q",   "--url",    url,       "-t",     "1",
                       "-c",           "100",  "-n",       "200",     "--mode", "browser",
                       "--think",      "10ms", "scenario", "counter", NULL};
    check("counter, 100 browser VUs", builtin, 100);
    char *flow[] = {(char *)hammer, "-q",  "--url",  url,       "-t",   "1",     "-c", "100",
                    "-n",           "200", "--mode", "browser", "flow", argv[3], NULL};
    check("flow counter.yaml, 100 browser VUs", flow, 100);

    kill(app.pid, SIGTERM);
    proc_wait(&app, 10);

    int tls_port = free_port();
    char tls_port_s[16], tls_url[64];
    snprintf(tls_port_s, sizeof(tls_port_s), "%d", tls_port);
    snprintf(tls_url, sizeof(tls_url), "https://127.0.0.1:%d", tls_port);
    char *tls_app_argv[] = {argv[2],    "--port",    tls_port_s, "--tls-cert",
                            certs.cert, "--tls-key", certs.key,  NULL};
    proc tls_app;
    proc_start(&tls_app, tls_app_argv);
    track(tls_app.pid);
    for (int i = 0; i < 100 && !strstr(tls_app.out, "listening"); i++)
        proc_read(&tls_app, 50);
    ASSERT(strstr(tls_app.out, "listening"));
    char *tls[] = {(char *)hammer, "-q",       "--url",   tls_url,   "--cacert",
                   certs.ca,       "-t",       "1",       "-c",      "100",
                   "-n",           "200",      "--mode",  "browser", "--think",
                   "10ms",         "scenario", "counter", NULL};
    check("counter over https, 100 browser VUs", tls, 100);
    kill(tls_app.pid, SIGTERM);
    proc_wait(&tls_app, 10);
    test_certs_remove(&certs);
    printf("ok\n");
    return 0;
}
