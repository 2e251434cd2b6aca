/* Server resources in a soak, end to end (docs/output.md, "Server
 * resources"):
 *   leak_on    bench_app --leak-rate 2 MiB/s, a 45 s soak (a WARNING needs
 *              30 s fitted after the warm-up): the RSS leak WARNING, its
 *              slope within a wide band of the set rate
 *   leak_off   the same soak without the leak: no WARNING (skipped under
 *              ASan, whose quarantine keeps freed memory: RSS grows)
 *   pid_exits  a --server-pid that exits mid-run is said once, the run
 *              goes on; the embedded bench_app is sampled by default
 *   exporter   a real prometheus-process-exporter on a loopback port,
 *              scraped by --server-metrics: bench_app's RSS, fds, threads
 *              (skips without it)
 *   apart      --server-pid and --server-metrics at once: each source's
 *              figures on their own (summary, JSON, HTML, metrics), never
 *              summed; the endpoint a fixed exposition whose figures
 *              cannot be bench_app's
 * argv: HAMMER BENCH_APP BEHAVIOUR */
#include "metrics_client.h"

#include <math.h>
#include <sys/stat.h>

static const char *hammer, *bench_app;
static char json_path[256];

static json_t *at(json_t *j, const char *dotted)
{
    char key[256];
    snprintf(key, sizeof(key), "%s", dotted);
    json_t *v = j;
    for (char *save = NULL, *k = strtok_r(key, ".", &save); k; k = strtok_r(NULL, ".", &save))
        v = json_object_get(v, k);
    return v;
}

static double num_at(json_t *j, const char *dotted)
{
    json_t *v = at(j, dotted);
    if (!json_is_number(v)) HM_FAIL_("%s is not a number", dotted);
    return json_number_value(v);
}

static bool bool_at(json_t *j, const char *dotted)
{
    json_t *v = at(j, dotted);
    if (!json_is_boolean(v)) HM_FAIL_("%s is not a boolean", dotted);
    return json_is_true(v);
}

/* Starts bench_app on a free port; its pid in app->pid. */
static int start_app(proc *app, const char *leak_rate)
{
    int port = free_port();
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    char *argv[] = {(char *)bench_app, "--port",          ps,  "--quiet",
                    "--leak-rate",     (char *)leak_rate, NULL};
    proc_start(app, argv);
    ASSERT(wait_port(port, app->pid));
    return port;
}

static void stop(proc *p)
{
    kill(p->pid, SIGTERM);
    proc_wait(p, 30);
}

/* A 45 s soak sampled every second; the JSON loaded. */
static json_t *soak(int port, pid_t pid, proc *h)
{
    char url[64], ps[16];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    snprintf(ps, sizeof(ps), "%d", (int)pid);
    char *argv[] = {(char *)hammer, "--url",        url,  "-c",     "2",
                    "-R",           "100",          "-d", "45s",    "--interval",
                    "1s",           "--server-pid", ps,   "--json", json_path,
                    "scenario",     "counter",      NULL};
    ASSERT_EQ(proc_run(h, argv, 300), 0);
    return load_json(json_path);
}

static int leak(bool on)
{
    const double rate = 2 * 1024 * 1024;
#if defined(__SANITIZE_ADDRESS__)
    if (!on)
        HM_SKIP("under ASan bench_app's RSS grows by design (its quarantine keeps freed "
                "memory), so a soak without the leak cannot show a flat RSS");
#endif
    proc app, h;
    int port = start_app(&app, on ? "2097152" : "0");
    json_t *j = soak(port, app.pid, &h);
    stop(&app);
    double slope = num_at(j, "server_resources.trends.resident_bytes.slope_per_hour");
    double ci = num_at(j, "server_resources.trends.resident_bytes.ci95_per_hour");
    bool warned = bool_at(j, "server_resources.trends.resident_bytes.warning");
    printf("leak %s: RSS slope %.0f ± %.0f B/h (set %.0f B/h), warning %d\n", on ? "on" : "off",
           slope, ci, on ? rate * 3600 : 0.0, warned);
    if (on) {
        ASSERT(warned && bool_at(j, "server_resources.leak_warning"));
        ASSERT(slope > 0.5 * rate * 3600 && slope < 1.5 * rate * 3600);
        ASSERT(strstr(h.out, "WARNING           server RSS grows"));
    } else {
        /* No trend may warn: the switch is off, and a count that steps
         * up once under load (a reconnect, a reload) is not a leak. On a
         * failure the trends say which one warned, and why. */
        bool any = bool_at(j, "server_resources.leak_warning");
        if (warned || any) {
            char *t = json_dumps(json_object_get(json_object_get(j, "server_resources"), "trends"),
                                 JSON_COMPACT);
            printf("leak off: a trend warned: %s\nper interval, fds/contexts:", t ? t : "?");
            free(t);
            size_t k;
            json_t *iv;
            json_array_foreach(json_object_get(j, "intervals"), k, iv)
            {
                json_t *srv = json_object_get(iv, "server");
                printf(" %g/%g", json_number_value(json_object_get(srv, "process_open_fds")),
                       json_number_value(json_object_get(srv, "connections_contexts")));
            }
            putchar('\n');
        }
        ASSERT(!warned);
        ASSERT(!any);
        ASSERT(!strstr(h.out, "server RSS grows"));
        ASSERT(strstr(h.out, "no leak seen"));
    }
    /* The interval lines carry the samples; CPU per action is said. */
    ASSERT(strstr(h.out, "Server resources  RSS "));
    ASSERT(num_at(j, "server_resources.cpu_seconds_per_action") > 0);
    json_decref(j);
    return 0;
}

static int pid_exits(void)
{
    pid_t child = fork();
    ASSERT(child >= 0);
    if (child == 0) {
        sleep(3);
        _exit(0);
    }
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", (int)child);
    proc h;
    char *argv[] = {(char *)hammer, "-c", "2",      "-d",      "6s",       "--interval", "1s",
                    "--server-pid", ps,   "--json", json_path, "scenario", "counter",    NULL};
    ASSERT_EQ(proc_run(&h, argv, 300), 0);
    waitpid(child, NULL, 0);
    char said[96];
    snprintf(said, sizeof(said), "server process %d is gone", (int)child);
    const char *first = strstr(h.out, said);
    ASSERT(first);
    ASSERT(!strstr(first + 1, said)); /* once */
    json_t *j = load_json(json_path);
    /* What is left is the embedded bench_app, watched without --server-pid. */
    ASSERT(num_at(j, "server_resources.resident_bytes") > 0);
    ASSERT(num_at(j, "server_resources.threads") >= 1);
    ASSERT(num_at(j, "server_resources.open_fds") >= 3);
    json_decref(j);
    printf("a --server-pid that exited was said once; the run went on\n");
    return 0;
}

/* RSS of pid from /proc/PID/statm, bytes. */
static double proc_rss(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
    FILE *f = fopen(path, "r");
    ASSERT(f);
    long long size, res;
    ASSERT_EQ(fscanf(f, "%lld %lld", &size, &res), 2);
    fclose(f);
    return (double)res * (double)sysconf(_SC_PAGESIZE);
}

static int exporter(void)
{
    const char *bin = "/usr/bin/prometheus-process-exporter";
    if (access(bin, X_OK) != 0) {
        printf("skip: %s is missing (Debian prometheus-process-exporter; scripts/deps.sh)\n", bin);
        return HM_TEST_SKIP_CODE;
    }
    proc app, ex, h;
    int port = start_app(&app, "0");
    int eport = free_port();
    char listen[64], murl[96], url[64];
    snprintf(listen, sizeof(listen), "127.0.0.1:%d", eport);
    snprintf(murl, sizeof(murl), "http://127.0.0.1:%d/metrics", eport);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    /* This test's bench_app only (others may run): its name and its port. */
    char conf[128];
    snprintf(conf, sizeof(conf), "/tmp/hammer-resources-%d.yml", (int)getpid());
    write_file(conf,
               "process_names:\n"
               "  - name: bench_app\n"
               "    comm: [bench_app]\n"
               "    cmdline: ['--port %d']\n",
               port);
    char *eargv[] = {(char *)bin,           "-config.path",   conf, "-web.listen-address", listen,
                     "-gather-smaps=false", "-threads=false", NULL};
    proc_start(&ex, eargv);
    ASSERT(wait_port(eport, ex.pid));
    char *argv[] = {(char *)hammer,
                    "--url",
                    url,
                    "-c",
                    "2",
                    "-d",
                    "6s",
                    "--interval",
                    "1s",
                    "--server-metrics",
                    murl,
                    "--json",
                    json_path,
                    "scenario",
                    "counter",
                    NULL};
    int rc = proc_run(&h, argv, 300);
    double rss_now = proc_rss(app.pid);
    stop(&ex);
    stop(&app);
    unlink(conf);
    if (rc != 0) HM_FAIL_("hammer exited %d:\n%s", rc, h.out);
    json_t *j = load_json(json_path);
    double rss = num_at(j, "server_exporter.resident_bytes");
    printf(
        "process-exporter says bench_app's RSS is %.0f B, /proc %.0f B; fds %.0f, threads %.0f\n",
        rss, rss_now, num_at(j, "server_exporter.open_fds"), num_at(j, "server_exporter.threads"));
    ASSERT(!at(j, "server_resources")); /* no --server-pid, no embedded bench_app */
    /* bench_app's, not the exporter's own process_resident_memory_bytes. */
    ASSERT(rss > 0.75 * rss_now && rss < 1.33 * rss_now);
    ASSERT(num_at(j, "server_exporter.open_fds") >= 3);
    ASSERT(num_at(j, "server_exporter.threads") >= 1);
    ASSERT(num_at(j, "server_exporter.cpu_seconds") >= 0);
    ASSERT(!strstr(h.out, "server metrics")); /* every scrape answered */
    json_decref(j);
    return 0;
}

/* The fixed exposition of `apart`: an exporter's process_* figures (a
 * client library's own process), far from bench_app's. */
#define APART_RSS 1536000000.0
#define APART_FDS 77.0
#define APART_CPU 12.5

static int apart(void)
{
    proc app, web, h;
    int port = start_app(&app, "0");
    /* python3's http.server serves DIR/metrics as the exposition */
    char dir[128], file[160];
    snprintf(dir, sizeof(dir), "/tmp/hammer-apart-%d", (int)getpid());
    ASSERT(mkdir(dir, 0700) == 0 || errno == EEXIST);
    snprintf(file, sizeof(file), "%s/metrics", dir);
    write_file(file,
               "# TYPE process_resident_memory_bytes gauge\n"
               "process_resident_memory_bytes %.0f\n"
               "# TYPE process_cpu_seconds_total counter\n"
               "process_cpu_seconds_total %.1f\n"
               "# TYPE process_open_fds gauge\n"
               "process_open_fds %.0f\n",
               APART_RSS, APART_CPU, APART_FDS);
    int wport = free_port();
    char wps[16], murl[96], url[64], ps[16], html[200];
    snprintf(wps, sizeof(wps), "%d", wport);
    char py[256];
    if (!find_tool("python3", py, sizeof(py))) HM_FAIL_("python3 is missing (scripts/deps.sh)");
    char *wargv[] = {py, "-m", "http.server", "--bind", "127.0.0.1", "--directory", dir, wps, NULL};
    proc_start(&web, wargv);
    ASSERT(wait_port(wport, web.pid));
    snprintf(murl, sizeof(murl), "http://127.0.0.1:%d/metrics", wport);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    snprintf(ps, sizeof(ps), "%d", (int)app.pid);
    snprintf(html, sizeof(html), "%s/report.html", dir);
    char *extra[] = {"--url",
                     url,
                     "-c",
                     "2",
                     "-d",
                     "4s",
                     "--interval",
                     "1s",
                     "--server-pid",
                     ps,
                     "--server-metrics",
                     murl,
                     "--json",
                     json_path,
                     "--html",
                     html,
                     "--metrics-linger",
                     "120s",
                     "scenario",
                     "counter",
                     NULL};
    int mport = metrics_start_hammer(&h, hammer, extra);
    if (!proc_wait_output(&h, "metrics stay up")) HM_FAIL_("hammer did not linger:\n%s", h.out);
    static char buf[1 << 20];
    metrics_get(mport, "/metrics", NULL, buf, sizeof(buf));
    kill(h.pid, SIGINT);
    ASSERT_EQ(proc_wait(&h, 60), 0);
    double rss_now = proc_rss(app.pid);
    stop(&web);
    stop(&app);

    /* The JSON: one object per source, the exporter's figures as it said them. */
    json_t *j = load_json(json_path);
    double rss = num_at(j, "server_resources.resident_bytes");
    double ex_rss = num_at(j, "server_exporter.resident_bytes");
    printf("by pid: RSS %.0f B (/proc now %.0f B); by --server-metrics: RSS %.0f B, fds %.0f\n",
           rss, rss_now, ex_rss, num_at(j, "server_exporter.open_fds"));
    ASSERT(rss > 0.75 * rss_now && rss < 1.33 * rss_now); /* bench_app's alone, not summed */
    ASSERT_EQ(ex_rss, APART_RSS);
    ASSERT_EQ(num_at(j, "server_exporter.open_fds"), APART_FDS);
    ASSERT_EQ(num_at(j, "server_exporter.cpu_seconds"), 0.0); /* a fixed counter: none used */
    ASSERT(json_is_null(at(j, "server_exporter.threads")));   /* the exposition has none */
    ASSERT(num_at(j, "server_resources.open_fds") < APART_FDS);
    ASSERT(num_at(j, "server_resources.threads") >= 1);
    ASSERT(at(j, "server_exporter.trends.resident_bytes"));
    ASSERT(!at(j, "server_exporter.trends.contexts")); /* said once, with the pid source */
    json_t *iv = json_array_get(at(j, "intervals"), 1);
    ASSERT_EQ(num_at(iv, "server.exporter_resident_bytes"), APART_RSS);
    ASSERT(num_at(iv, "server.process_resident_bytes") < APART_RSS);
    json_decref(j);

    /* The summary: a line per source. */
    const char *pid_line = strstr(h.out, "Server resources  RSS ");
    const char *ex_line = strstr(h.out, "Server exporter   RSS 1.43 GiB");
    if (!pid_line || !ex_line) HM_FAIL_("a source's summary line is missing:\n%s", h.out);
    ASSERT(strstr(ex_line, "77 fds") && strstr(ex_line, "(--server-metrics)"));
    ASSERT(strstr(h.out, "Exporter RSS      "));

    /* The metrics: each source's gauges and slopes under their own names. */
    ASSERT_EQ(metrics_value(buf, "hammer_server_exporter_resident_bytes"), APART_RSS);
    ASSERT_EQ(metrics_value(buf, "hammer_server_exporter_open_fds"), APART_FDS);
    double m_rss = metrics_value(buf, "hammer_server_process_resident_bytes");
    ASSERT(m_rss > 0 && m_rss < APART_RSS);
    ASSERT(strstr(buf, "\n# TYPE hammer_server_exporter_cpu_seconds_total counter\n"));
    ASSERT(strstr(buf, "\nhammer_server_exporter_resident_slope_bytes_per_hour "));
    ASSERT(strstr(buf, "\nhammer_server_exporter_leak_warning 0\n"));
    ASSERT(strstr(buf, "\nhammer_server_leak_warning 0\n"));

    /* The HTML report: a section per source. */
    char *page = slurp(html);
    ASSERT(strstr(page, "<h2>Server resources</h2>"));
    ASSERT(strstr(page, "<h2>Server exporter</h2>"));
    ASSERT(strstr(page, "exporter-rss"));
    free(page);
    unlink(html);
    unlink(file);
    rmdir(dir);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) HM_FAIL_("usage: %s HAMMER BENCH_APP BEHAVIOUR", argv[0]);
    hammer = argv[1];
    bench_app = argv[2];
    snprintf(json_path, sizeof(json_path), "/tmp/hammer-resources-%d.json", (int)getpid());
    int rc;
    if (!strcmp(argv[3], "leak_on"))
        rc = leak(true);
    else if (!strcmp(argv[3], "leak_off"))
        rc = leak(false);
    else if (!strcmp(argv[3], "pid_exits"))
        rc = pid_exits();
    else if (!strcmp(argv[3], "exporter"))
        rc = exporter();
    else if (!strcmp(argv[3], "apart"))
        rc = apart();
    else
        HM_FAIL_("unknown behaviour %s", argv[3]);
    unlink(json_path);
    return rc;
}
