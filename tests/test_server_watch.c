/* The server watch (src/cli/server_watch.h) against bench_app's /_health:
 * a baseline before the run, a sample in every interval (the JSON series
 * and --interval-json lines), and the end check: SSE streams whose clients
 * left linger (bench_app, as php-via, notices a vanished client only at
 * its next write), so a browser run ends with a note, at once; contexts that a
 * session close lets go come back within the grace period and no warning
 * is printed; -n runs without --watch-grace only sample; --no-server-watch
 * leaves /_health alone.
 * argv: HAMMER BENCH_APP */
#include "run_util.h"

#include <math.h>

static const char *hammer, *bench_app;
static char json_path[256], lines_path[256], flow_path[256];

static double num_at(json_t *root, const char *dotted)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", dotted);
    json_t *cur = root;
    for (char *tok = strtok(buf, "."); tok && cur; tok = strtok(NULL, "."))
        cur = json_object_get(cur, tok);
    return json_is_number(cur) ? json_number_value(cur) : NAN;
}

typedef struct app {
    proc p;
    char url[64];
} app;

static void app_start(app *a, const char *cleanup_ms)
{
    int port = free_port();
    char port_s[16];
    snprintf(port_s, sizeof(port_s), "%d", port);
    char *argv[] = {(char *)bench_app,    "--port",           port_s,
                    "--cleanup-delay-ms", (char *)cleanup_ms, NULL};
    proc_start(&a->p, argv);
    ASSERT(proc_wait_output(&a->p, "listening"));
    snprintf(a->url, sizeof(a->url), "http://127.0.0.1:%d", port);
}

static void app_stop(app *a)
{
    kill(a->p.pid, SIGTERM);
    proc_wait(&a->p, 30);
}

/* Browser VUs close their streams and sessions; the server holds both
 * until a write that never comes: a note, with the figures. */
static void check_lingering(void)
{
    app a;
    app_start(&a, "5000");
    unlink(json_path);
    unlink(lines_path);
    char *argv[] = {(char *)hammer,
                    "--url",
                    a.url,
                    "--mode",
                    "browser",
                    "-c",
                    "5",
                    "-d",
                    "2s",
                    "--interval",
                    "500ms",
                    "--watch-grace",
                    "1s",
                    "--interval-json",
                    lines_path,
                    "--timeout",
                    "10s",
                    "--json",
                    json_path,
                    "scenario",
                    "counter",
                    NULL};
    proc p;
    ASSERT_EQ(proc_run(&p, argv, 120), 0);
    json_t *j = load_json(json_path);
    /* a fresh server: nothing before the run */
    ASSERT_EQ(num_at(j, "server_watch.baseline.connections_contexts"), 0);
    ASSERT_EQ(num_at(j, "server_watch.baseline.connections_sse"), 0);
    ASSERT(json_array_size(json_object_get(json_object_get(j, "server_watch"), "fields")) >= 2);
    /* the series: every point carries the sample; while the VUs ran, the
     * server held their five contexts */
    json_t *iv = json_object_get(j, "intervals");
    ASSERT_GT(json_array_size(iv), 1);
    double most = 0;
    size_t i;
    json_t *pt;
    json_array_foreach(iv, i, pt)
    {
        double c = num_at(pt, "server.connections_contexts");
        ASSERT(!isnan(c));
        if (c > most) most = c;
    }
    ASSERT_GE(most, 5);
    /* after the grace: the streams (and so the contexts) are still there */
    ASSERT_EQ(json_int_at(j, "server_watch.checked"), 1);
    ASSERT_EQ(json_int_at(j, "server_watch.came_back"), 0);
    ASSERT_GE(num_at(j, "server_watch.end.connections_contexts"), 5);
    ASSERT_GE(num_at(j, "server_watch.end.connections_sse"), 5);
    /* held by the streams hammer closed, which the server notices only at
     * a write no wait brings: said as a note at once, not a warning */
    const char *verdict =
        json_string_value(json_object_get(json_object_get(j, "server_watch"), "verdict"));
    if (!verdict || strcmp(verdict, "open_streams"))
        HM_FAIL_("server_watch.verdict is %s, want open_streams", verdict ? verdict : "missing");
    ASSERT_EQ(json_int_at(j, "server_watch.waited"), 0);
    ASSERT_GE(num_at(j, "server_watch.own.streams"), 5);
    ASSERT(strstr(p.out, " s after the run: contexts 0 -> "));
    ASSERT(strstr(p.out, "Note              the server still counts "));
    ASSERT(!strstr(p.out, "WARNING"));
    ASSERT(!strstr(p.out, "waiting up to"));
    /* nothing of the watch counted as the run's requests */
    ASSERT_EQ(json_int_at(j, "actions.sent"), json_int_at(j, "actions.ok"));
    json_decref(j);
    /* the interval JSON lines carry the sample too */
    FILE *f = fopen(lines_path, "r");
    ASSERT(f);
    char line[4096];
    int with_server = 0, all = 0;
    while (fgets(line, sizeof(line), f)) {
        all++;
        with_server += strstr(line, "\"server\":{") && strstr(line, "\"connections_contexts\":");
    }
    fclose(f);
    ASSERT_GT(all, 0);
    ASSERT_EQ(with_server, all);
    app_stop(&a);
    printf("lingering streams: baseline 0, %.0f contexts at most, a note at once\n", most);
}

/* Pages and actions without SSE, sessions closed: bench_app's cleanup
 * (200 ms here) lets every context go within the grace period. */
static void check_coming_back(void)
{
    app a;
    app_start(&a, "200");
    FILE *f = fopen(flow_path, "w");
    ASSERT(f);
    fputs("name: no-sse\nsteps:\n  - page: /bench/counter\n  - repeat: forever\n    steps:\n"
          "      - action: increment\n",
          f);
    fclose(f);
    unlink(json_path);
    char *argv[] = {(char *)hammer, "--url",         a.url,     "-c",        "4",   "-n",
                    "200",          "--watch-grace", "60s",     "--timeout", "10s", "--json",
                    json_path,      "flow",          flow_path, NULL};
    proc p;
    ASSERT_EQ(proc_run(&p, argv, 120), 0);
    json_t *j = load_json(json_path);
    ASSERT_EQ(json_int_at(j, "server_watch.checked"), 1);
    ASSERT_EQ(json_int_at(j, "server_watch.came_back"), 1);
    ASSERT_EQ(num_at(j, "server_watch.end.connections_contexts"),
              num_at(j, "server_watch.baseline.connections_contexts"));
    /* it stopped waiting once the server was back, before the grace ended */
    ASSERT(num_at(j, "server_watch.waited_s") < num_at(j, "server_watch.grace_s"));
    ASSERT(strstr(p.out, "Server watch      /_health back to its baseline"));
    /* it said what it waited for while it waited */
    ASSERT(strstr(p.out, "waiting up to 60 s for the server to release "));
    ASSERT_EQ(json_int_at(j, "server_watch.waited"), 1);
    ASSERT(!strstr(p.out, "WARNING"));
    json_decref(j);

    /* -n without --watch-grace: sampled, no end check, no summary line */
    unlink(json_path);
    char *plain[] = {(char *)hammer, "--url",  a.url,     "-c",   "4",       "-n",
                     "50",           "--json", json_path, "flow", flow_path, NULL};
    ASSERT_EQ(proc_run(&p, plain, 120), 0);
    j = load_json(json_path);
    ASSERT_EQ(json_int_at(j, "server_watch.checked"), 0);
    ASSERT(!isnan(num_at(j, "server_watch.baseline.connections_contexts")));
    ASSERT(json_is_null(json_object_get(json_object_get(j, "server_watch"), "came_back")));
    ASSERT(!strstr(p.out, "Server watch"));
    json_decref(j);

    /* --no-server-watch: no sample at all */
    unlink(json_path);
    char *off[] = {(char *)hammer,      "--url",  a.url,     "-c",   "4",       "-n", "50",
                   "--no-server-watch", "--json", json_path, "flow", flow_path, NULL};
    ASSERT_EQ(proc_run(&p, off, 120), 0);
    j = load_json(json_path);
    ASSERT(!json_object_get(j, "server_watch"));
    ASSERT_EQ(json_int_at(j, "options.server_watch"), 0);
    json_decref(j);
    app_stop(&a);
    printf("sessions closed: back to the baseline within the grace, no warning\n");
}

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s HAMMER BENCH_APP", argv[0]);
    hammer = argv[1];
    bench_app = argv[2];
    snprintf(json_path, sizeof(json_path), "/tmp/hammer-watch-%d.json", (int)getpid());
    snprintf(lines_path, sizeof(lines_path), "/tmp/hammer-watch-%d.jsonl", (int)getpid());
    snprintf(flow_path, sizeof(flow_path), "/tmp/hammer-watch-%d.yaml", (int)getpid());
    check_lingering();
    check_coming_back();
    unlink(json_path);
    unlink(lines_path);
    unlink(flow_path);
    return 0;
}
