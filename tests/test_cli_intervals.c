/* The interval outputs add up to the summary: the printed interval lines,
 * --interval-json's lines and the JSON document's "intervals" series each
 * cover the whole run, the last partial interval included, in the hammer
 * and browser models, for get (requests), and for sticky, whose variants
 * start and stop their threads several times in one pass.
 * argv: HAMMER BENCH_APP */
#include "run_util.h"

static const char *hammer, *bench_app;
static char dir[] = "/tmp/hm_intervals_XXXXXX";

typedef struct sums {
    long long lines, json_lines, json_sum, last_total, series_sum, series_latency, sent,
        latency_count;
    double last_dt, interval_s;
} sums;

static void run_and_sum(const char *what, char **args, const char *unit, sums *s)
{
    char ijson[300], json[300];
    snprintf(ijson, sizeof(ijson), "%s/run.intervals", dir);
    snprintf(json, sizeof(json), "%s/run.json", dir);
    unlink(ijson);
    unlink(json);
    char *argv[32] = {(char *)hammer, "--interval-json", ijson, "--json", json};
    int n = 5;
    for (int i = 0; args[i]; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    proc p;
    int rc = proc_run(&p, argv, 120);
    if (rc != 0) HM_FAIL_("%s: exit %d\n%s", what, rc, p.out);
    memset(s, 0, sizeof(*s));
    char needle[64];
    snprintf(needle, sizeof(needle), "%s/s  OK", unit);
    for (const char *q = p.out; (q = strstr(q, needle)); q++)
        s->lines++;
    FILE *f = fopen(ijson, "r");
    ASSERT(f);
    char line[1024];
    while (fgets(line, sizeof(line), f)) {
        json_error_t err;
        json_t *o = json_loads(line, 0, &err);
        if (!o) HM_FAIL_("%s: interval line does not parse: %s", what, line);
        s->json_sum += json_int_at(o, unit);
        s->last_total = json_int_at(o, "total");
        s->last_dt = json_number_value(json_object_get(o, "dt"));
        s->json_lines++;
        json_decref(o);
    }
    fclose(f);
    json_t *doc = load_json(json);
    s->sent = json_int_at(doc, "actions.sent");
    s->latency_count = json_int_at(doc, "latency_us.action.count");
    s->interval_s = json_number_value(json_object_get(doc, "interval_s"));
    size_t i;
    json_t *pt;
    json_array_foreach(json_object_get(doc, "intervals"), i, pt)
    {
        s->series_sum += json_int_at(pt, "sent");
        s->series_latency += json_int_at(pt, "latency_us.count");
    }
    json_decref(doc);
    printf("%s: %lld sent; %lld printed lines, %lld JSON lines summing to %lld (last %.3f s), "
           "series summing to %lld\n",
           what, s->sent, s->lines, s->json_lines, s->json_sum, s->last_dt, s->series_sum);
    ASSERT_GT(s->sent, 0);
    ASSERT_EQ(s->json_sum, s->sent);
    ASSERT_EQ(s->last_total, s->sent);
    ASSERT_EQ(s->series_sum, s->sent);
    ASSERT_EQ(s->series_latency, s->latency_count);
}

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s HAMMER BENCH_APP", argv[0]);
    hammer = argv[1];
    bench_app = argv[2];
    ASSERT(mkdtemp(dir));
    sums s;

    /* -d 2.5 s with 1 s intervals: two whole intervals and a half one,
     * which is the one that used to go missing. */
    char *hammer_mode[] = {"-d", "2500ms",   "-c",      "20", "--interval",
                           "1s", "scenario", "counter", NULL};
    run_and_sum("counter -d 2500ms", hammer_mode, "actions", &s);
    ASSERT_EQ(s.lines, s.json_lines); /* one printed line per JSON line */
    ASSERT_GE(s.json_lines, 3);
    ASSERT(s.last_dt < 0.99); /* the tail is partial */

    char *browser[] = {"--mode",     "browser", "-n",       "400",     "-c", "8",
                       "--interval", "300ms",   "scenario", "counter", NULL};
    run_and_sum("counter --mode browser -n 400", browser, "actions", &s);
    ASSERT_EQ(s.lines, s.json_lines);

    /* Without --interval: no lines on a pipe, but the JSON lines and the
     * series still cover the run. */
    char *quiet_lines[] = {"-n", "3000", "-c", "10", "scenario", "counter", NULL};
    run_and_sum("counter -n 3000, no --interval", quiet_lines, "actions", &s);
    ASSERT_EQ(s.lines, 0);
    ASSERT_DBL_NEAR(s.interval_s, 1.0, 1e-9);

    char *sticky[] = {"-n", "200", "-c", "8", "--interval", "200ms", "scenario", "sticky", NULL};
    run_and_sum("sticky -n 200 (a thread set per variant)", sticky, "actions", &s);

    /* get, against a bench_app of its own. */
    int port = free_port();
    char port_s[16], url[64];
    snprintf(port_s, sizeof(port_s), "%d", port);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/_health", port);
    char *app_argv[] = {(char *)bench_app, "--port", port_s, NULL};
    proc app;
    proc_start(&app, app_argv);
    for (int i = 0; i < 100 && !strstr(app.out, "listening"); i++)
        proc_read(&app, 50);
    char *get[] = {"--url",      url,     "-n",       "5000", "-c", "4",
                   "--interval", "250ms", "scenario", "get",  NULL};
    run_and_sum("get -n 5000", get, "requests", &s);
    ASSERT_EQ(s.lines, s.json_lines);
    kill(app.pid, SIGTERM);
    proc_wait(&app, 10);
    rmdir(dir);
    return 0;
}
