/* --metrics-listen while a run goes, in one of three modes:
 *   endpoint    the exposition itself: counters that grow between scrapes,
 *               histograms whose buckets add up, OpenMetrics when asked
 *               for it (and # EOF), 404 elsewhere;
 *   promtool    `promtool check metrics` accepts what a plain scrape gets
 *               (skips when promtool, Debian's prometheus, is missing);
 *   prometheus  a real Prometheus on 127.0.0.1 scrapes it every second and
 *               has hammer's counters (skips when it cannot start).
 * argv: HAMMER MODE */
#include "metrics_client.h"

#include <stdbool.h>
#include <sys/prctl.h>

static const char *hammer;
static char dir[] = "/tmp/hm_metrics_XXXXXX";

/* Starts hammer -q with the endpoint on a free port; returns that port. */
static int start_hammer(proc *p, char **extra)
{
    char *argv[32] = {"-q"};
    int n = 1;
    for (int i = 0; extra[i] && n < 31; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    return metrics_start_hammer(p, hammer, argv);
}

static void check_histogram(const char *body, const char *phase)
{
    char sample[128];
    double prev = 0, inf = -1;
    const char *les[] = {"0.00005", "0.001", "0.25", "60.0", "+Inf"};
    for (size_t i = 0; i < sizeof(les) / sizeof(les[0]); i++) {
        snprintf(sample, sizeof(sample), "hammer_latency_seconds_bucket{phase=\"%s\",le=\"%s\"}",
                 phase, les[i]);
        double v = metrics_value(body, sample);
        ASSERT(v >= prev); /* cumulative */
        prev = inf = v;
    }
    snprintf(sample, sizeof(sample), "hammer_latency_seconds_count{phase=\"%s\"}", phase);
    ASSERT(metrics_value(body, sample) == inf);
}

static void endpoint(void)
{
    proc p;
    /* 12,000 at 2,000/s: six seconds of load however long the set-up takes */
    char *extra[] = {"-n", "12000", "-c", "8", "-R", "2000", "scenario", "counter", NULL};
    int port = start_hammer(&p, extra);
    static char a[1 << 20], b[1 << 20];
    for (int i = 0; i < 100; i++) { /* until the load is under way */
        metrics_get(port, "/metrics", NULL, a, sizeof(a));
        if (metrics_value(a, "hammer_requests_total") > 0) break;
        usleep(100 * 1000);
    }
    usleep(700 * 1000);
    metrics_get(port, "/metrics", NULL, b, sizeof(b));
    ASSERT(strstr(a, "HTTP/1.1 200 "));
    ASSERT(strstr(a, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
    double r1 = metrics_value(a, "hammer_requests_total"),
           r2 = metrics_value(b, "hammer_requests_total");
    ASSERT_GT(r1, 0);
    ASSERT_GT(r2, r1); /* a counter, growing while the run goes */
    ASSERT(metrics_value(b, "hammer_responses_total{status=\"200\"}") > 0);
    ASSERT(metrics_value(b, "hammer_errors_total{kind=\"timeout\"}") == 0);
    double inflight = metrics_value(b, "hammer_in_flight");
    ASSERT(inflight >= 0 && inflight <= 8);
    ASSERT(metrics_value(b, "hammer_virtual_users") == 8);
    ASSERT(metrics_value(b, "hammer_sse_streams_open") == 1);
    ASSERT(metrics_value(b, "hammer_read_bytes_total") > 0);
    ASSERT(strstr(b, "\n# TYPE hammer_requests_total counter\n"));
    ASSERT(strstr(b, "\n# TYPE hammer_latency_seconds histogram\n"));
    check_histogram(b, "action");
    check_histogram(b, "patch");
    ASSERT(metrics_value(b, "hammer_latency_seconds_count{phase=\"action\"}") > 0);
    ASSERT(!strstr(b, "# EOF"));

    static char om[1 << 20];
    metrics_get(port, "/metrics", "application/openmetrics-text;version=1.0.0,text/plain;q=0.5", om,
                sizeof(om));
    ASSERT(strstr(om, "\r\nContent-Type: application/openmetrics-text; version=1.0.0"));
    ASSERT(strstr(om, "\n# TYPE hammer_requests counter\nhammer_requests_total "));
    size_t len = strlen(om);
    ASSERT(len > 6 && !strcmp(om + len - 6, "# EOF\n"));
    metrics_get(port, "/elsewhere", NULL, a, sizeof(a));
    ASSERT(strstr(a, "HTTP/1.1 404 "));
    ASSERT_EQ(proc_wait(&p, 60), 0);
    printf("endpoint: counters grow (%.0f -> %.0f requests), histograms add up, OpenMetrics with "
           "# EOF when asked for, 404 elsewhere\n",
           r1, r2);
}

static bool have(const char *tool)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
    return system(cmd) == 0;
}

static void with_promtool(void)
{
    if (!have("promtool"))
        HM_SKIP("promtool is not installed (Debian package prometheus; scripts/deps.sh lists it "
                "as optional)");
    proc p;
    char *extra[] = {"-d",     "4s",     "-c",       "4",       "-R", "1000",
                     "--mode", "hammer", "scenario", "counter", NULL};
    int port = start_hammer(&p, extra);
    usleep(1500 * 1000);
    static char buf[1 << 20];
    metrics_get(port, "/metrics", NULL, buf, sizeof(buf));
    const char *body = strstr(buf, "\r\n\r\n");
    ASSERT(body);
    char path[300];
    snprintf(path, sizeof(path), "%s/scrape.txt", dir);
    FILE *f = fopen(path, "w");
    fputs(body + 4, f);
    fclose(f);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
    char *sh[] = {"/bin/sh", "-c", cmd, NULL};
    proc check;
    int rc = proc_run(&check, sh, 60);
    if (rc != 0) HM_FAIL_("promtool check metrics: exit %d\n%s", rc, check.out);
    ASSERT_EQ(check.out_len, 0); /* no lint complaints either */
    ASSERT_EQ(proc_wait(&p, 60), 0);
    unlink(path);
    printf("promtool check metrics: no errors, no lint findings\n");
}

/* Prometheus, dying with this test however it ends (a failed assertion
 * exits, a ctest timeout kills). */
static void start_prometheus(proc *p, char *const argv[])
{
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    p->out_len = 0;
    p->out[0] = 0;
    p->pid = fork();
    ASSERT(p->pid >= 0);
    if (p->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    p->out_fd = fds[0];
}

static void with_prometheus(void)
{
    if (!have("prometheus"))
        HM_SKIP("prometheus is not installed (Debian package prometheus; optional)");
    int prom_port = free_port();
    proc p;
    /* 7,000 at 500/s: fourteen seconds of load however long the set-up takes */
    char *extra[] = {"-n", "7000", "-c", "4", "-R", "500", "scenario", "counter", NULL};
    int port = start_hammer(&p, extra);
    char cfg[300], data[300], listen_arg[64], cfg_arg[350], data_arg[350];
    snprintf(cfg, sizeof(cfg), "%s/prometheus.yml", dir);
    snprintf(data, sizeof(data), "%s/tsdb", dir);
    FILE *f = fopen(cfg, "w");
    fprintf(f,
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: hammer\n    static_configs:\n"
            "      - targets: ['127.0.0.1:%d']\n",
            port);
    fclose(f);
    snprintf(listen_arg, sizeof(listen_arg), "--web.listen-address=127.0.0.1:%d", prom_port);
    snprintf(cfg_arg, sizeof(cfg_arg), "--config.file=%s", cfg);
    snprintf(data_arg, sizeof(data_arg), "--storage.tsdb.path=%s", data);
    char *prom_argv[] = {"/usr/bin/prometheus", cfg_arg, data_arg, listen_arg, NULL};
    char *found = NULL;
    if (access(prom_argv[0], X_OK) != 0) HM_SKIP("prometheus is not at /usr/bin/prometheus");
    proc prom;
    start_prometheus(&prom, prom_argv);
    static char buf[1 << 20];
    /* Wait for it to be ready, then for two scrapes of a running hammer. */
    bool ready = false;
    for (int i = 0; i < 100 && !ready; i++) {
        proc_read(&prom, 100); /* its log must not fill the pipe */
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)prom_port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ready = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
        close(fd);
        if (ready) {
            metrics_get(prom_port, "/-/ready", NULL, buf, sizeof(buf));
            ready = strstr(buf, " 200 ") != NULL;
        }
    }
    if (!ready) {
        kill(prom.pid, SIGTERM);
        proc_wait(&prom, 20);
        kill(p.pid, SIGTERM);
        proc_wait(&p, 30);
        HM_SKIP("prometheus did not start on 127.0.0.1:%d:\n%.2000s", prom_port, prom.out);
    }
    for (int i = 0; i < 80 && !found; i++) {
        proc_read(&prom, 250);
        metrics_get(prom_port, "/api/v1/query?query=hammer_requests_total", NULL, buf, sizeof(buf));
        char *j = strstr(buf, "\r\n\r\n");
        json_t *doc = j ? json_loads(j + 4, 0, NULL) : NULL;
        json_t *result = json_object_get(json_object_get(doc, "data"), "result");
        json_t *value = json_object_get(json_array_get(result, 0), "value");
        const char *v = json_string_value(json_array_get(value, 1));
        if (v && atof(v) > 0) found = strdup(v);
        json_decref(doc);
    }
    metrics_get(prom_port, "/api/v1/query?query=up", NULL, buf, sizeof(buf));
    bool up = strstr(buf, "\"job\":\"hammer\"") && strstr(buf, "\"1\"]");
    metrics_get(prom_port,
                "/api/v1/query?query=histogram_quantile(0.99,hammer_latency_seconds_bucket"
                "%7Bphase=%22action%22%7D)",
                NULL, buf, sizeof(buf));
    bool quantile = strstr(buf, "\"status\":\"success\"") && strstr(buf, "\"phase\":\"action\"");
    kill(prom.pid, SIGTERM);
    proc_wait(&prom, 30);
    int rc = proc_wait(&p, 60);
    if (!found) HM_FAIL_("Prometheus never had hammer_requests_total > 0");
    ASSERT(up);
    ASSERT(quantile);
    ASSERT_EQ(rc, 0);
    printf("a real Prometheus scraped it: up = 1, hammer_requests_total = %s, and "
           "histogram_quantile works on hammer_latency_seconds\n",
           found);
    free(found);
    char rm[400];
    snprintf(rm, sizeof(rm), "rm -rf '%s'", data);
    if (system(rm) != 0) fprintf(stderr, "could not remove %s\n", data);
    unlink(cfg);
}

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s HAMMER endpoint|promtool|prometheus", argv[0]);
    hammer = argv[1];
    ASSERT(mkdtemp(dir));
    if (!strcmp(argv[2], "endpoint"))
        endpoint();
    else if (!strcmp(argv[2], "promtool"))
        with_promtool();
    else if (!strcmp(argv[2], "prometheus"))
        with_prometheus();
    else
        HM_FAIL_("unknown mode %s", argv[2]);
    rmdir(dir);
    return 0;
}
