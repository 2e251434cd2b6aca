/* hammer over TLS against bench_app --tls-cert/--tls-key, on both engines:
 * every php-via scenario with --cacert (verified) and with -k, browser mode,
 * resumed handshakes on reconnect, and a self-signed server without -k or
 * --cacert: exit 2 with a message naming the verification failure.
 * argv: HAMMER BENCH_APP GEN_CERT_SCRIPT */
#include "engine/engine.h"
#include "run_util.h"

static const char *hammer, *bench_app;
static char json_path[256];
static test_certs certs;
static char *certdir = certs.dir, *ca = certs.ca, *cert = certs.cert, *key = certs.key;

static json_t *run(int want_exit, char **argv, proc *p)
{
    unlink(json_path);
    int rc = proc_run(p, argv, 120);
    if (rc != want_exit) fprintf(stderr, "exit %d (wanted %d):\n%s\n", rc, want_exit, p->out);
    ASSERT_EQ(rc, want_exit);
    return want_exit == 0 ? load_json(json_path) : NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) HM_FAIL_("usage: %s HAMMER BENCH_APP GEN_CERT", argv[0]);
    hammer = argv[1];
    bench_app = argv[2];
    snprintf(json_path, sizeof(json_path), "/tmp/hammer-tls-%d.json", (int)getpid());
    test_certs_make(&certs, argv[3], "tls");

    const char *engines[] = {"io_uring", "epoll"};
    for (int e = 0; e < 2; e++) {
        const char *why = NULL;
        if (e == 0 && hm_io_uring_probe(&why) < 0) {
            printf("io_uring runs skipped: %s\n", why);
            continue;
        }
        const char *eng = engines[e];
        int port = free_port();
        char port_s[16], url[64];
        snprintf(port_s, sizeof(port_s), "%d", port);
        snprintf(url, sizeof(url), "https://127.0.0.1:%d", port);
        char *app_argv[] = {(char *)bench_app, "--port", port_s,      "--engine", (char *)eng,
                            "--tls-cert",      cert,     "--tls-key", key,        NULL};
        proc app;
        proc_start(&app, app_argv);
        ASSERT(proc_wait_output(&app, "listening"));

        proc p;
        char *noverify[] = {(char *)hammer, "--engine", (char *)eng, "--url",   url,
                            "-n",           "10",       "scenario",  "counter", NULL};
        run(2, noverify, &p);
        ASSERT(strstr(p.out, "certificate verification failed"));
        printf("%s: self-signed without --cacert or -k: exit 2 (%.*s)\n", eng,
               (int)strcspn(p.out, "\n"), p.out);

        const char *scenarios[] = {"counter", "cpu", "io", "spreadsheet", "spreadsheet-live"};
        for (size_t s = 0; s < HM_ARRAY_LEN(scenarios); s++) {
            char *a[] = {(char *)hammer,
                         "--engine",
                         (char *)eng,
                         "--cacert",
                         ca,
                         "--url",
                         url,
                         "-c",
                         "50",
                         "-n",
                         "1000",
                         "--timeout",
                         "60s",
                         "--json",
                         json_path,
                         "scenario",
                         (char *)scenarios[s],
                         NULL};
            json_t *j = run(0, a, &p);
            ASSERT_EQ(json_int_at(j, "actions.ok"), 1000);
            ASSERT_EQ(json_int_at(j, "tls.verified"), 1);
            ASSERT_GE(json_int_at(j, "tls.full_handshakes"), 1);
            json_decref(j);
        }
        printf("%s: every php-via scenario over verified TLS: ok\n", eng);

        char *k[] = {(char *)hammer, "--engine", (char *)eng, "-k",  "--mode",
                     "browser",      "--url",    url,         "-c",  "20",
                     "-n",           "200",      "--timeout", "60s", "--json",
                     json_path,      "scenario", "counter",   NULL};
        json_t *j = run(0, k, &p);
        ASSERT_EQ(json_int_at(j, "tls.verified"), 0);
        ASSERT(strstr(p.out, "NOT verified (-k)"));
        json_decref(j);
        printf("%s: -k, browser mode: ok, and the summary says verification was off\n", eng);

        /* sticky's legacy variant reconnects for every action: resumption. */
        char *res[] = {(char *)hammer, "--engine",  (char *)eng, "--cacert", ca,
                       "--url",        url,         "-c",        "10",       "-n",
                       "300",          "--timeout", "60s",       "--json",   json_path,
                       "scenario",     "sticky",    NULL};
        j = run(0, res, &p);
        ASSERT_GT(json_int_at(j, "tls.resumed_handshakes"), 100);
        json_decref(j);
        printf("%s: reconnects resume their TLS sessions: ok\n", eng);

        kill(app.pid, SIGTERM);
        ASSERT_EQ(proc_wait(&app, 30), 0);
    }
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", certdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", certdir);
    unlink(json_path);
    return 0;
}
