/* hammer matrix end to end: two bench_app profiles x two workloads x two
 * rounds give Markdown, HTML and JSON with medians and ranges; a profile
 * whose server never becomes healthy, one whose command does not exist and
 * one that exits at once are reported as skipped with the reason while the matrix goes on; the
 * profile order rotates between rounds; Ctrl-C writes the reports so far and
 * stops the server; the example profiles file in examples/ runs and renders.
 * argv: HAMMER BENCH_APP EXAMPLE_INI */
#include "run_util.h"

#include <stdlib.h>
#include <string.h>

/* The JSON embedded in the HTML report parses and is the matrix document. */
/* The HTML report of a matrix whose profiles include a and b. */
static void check_html(const char *path, const char *a, const char *b)
{
    char *html = slurp(path);
    ASSERT(strstr(html, "<svg"));
    ASSERT(strstr(html, "<polyline"));
    /* issue 15: full-width tables, not 980 px; the 1/(1-p) axis; curves of
     * more than 13 points that end where the data do; throughput as dots
     * with whiskers, so overlapping ranges show */
    ASSERT(!strstr(html, "980px"));
    ASSERT(strstr(html, "data-chart=\"percentiles\""));
    ASSERT(strstr(html, ">90%</text>") && strstr(html, ">99%</text>"));
    ASSERT(strstr(html, "data-chart=\"throughput\""));
    char series[128];
    snprintf(series, sizeof(series), "data-series=\"%s · warm\"", a);
    ASSERT(strstr(html, series));
    snprintf(series, sizeof(series), "data-series=\"%s · cold\"", b);
    ASSERT(strstr(html, series));
    int curves = 0;
    for (const char *q = html; (q = strstr(q, "\" data-points=\"")); q++) {
        int points = atoi(q + 15);
        ASSERT_GT(points, 13);
        /* a few hundred actions per pass: the curve stops near 99.7%,
         * never reaching the ladder's 99.99988% (61 points) */
        ASSERT_LT(points, 61);
        curves++;
    }
    ASSERT_GE(curves, 4);
    const char *tag = "<script id=\"hammer-matrix-data\" type=\"application/json\">";
    char *start = strstr(html, tag);
    ASSERT(start);
    start += strlen(tag);
    char *end = strstr(start, "</script>");
    ASSERT(end);
    *end = 0;
    json_error_t err;
    json_t *doc = json_loads(start, 0, &err);
    if (!doc) HM_FAIL_("embedded JSON does not parse: %s", err.text);
    ASSERT_STREQ(json_string_value(json_object_get(doc, "schema")), "hammer_matrix");
    ASSERT(json_object_get(doc, "summary"));
    json_decref(doc);
    free(html);
}

int main(int argc, char **argv)
{
    if (argc < 4) HM_FAIL_("usage: %s HAMMER BENCH_APP EXAMPLE_INI", argv[0]);
    char dir[] = "/tmp/hammer-matrix-test-XXXXXX";
    ASSERT(mkdtemp(dir));
    char ini[300], md[300], html[300], js[300], logs[300];
    snprintf(ini, sizeof(ini), "%s/profiles.ini", dir);
    snprintf(md, sizeof(md), "%s/results.md", dir);
    snprintf(html, sizeof(html), "%s/results.html", dir);
    snprintf(js, sizeof(js), "%s/results.json", dir);
    snprintf(logs, sizeof(logs), "%s/logs", dir);
    FILE *f = fopen(ini, "w");
    ASSERT(f);
    fprintf(f,
            "; two real profiles, one that never answers, one that cannot start\n"
            "[matrix]\nruns = 2\nactions = 300\nconcurrency = 20\nbaseline = default\n"
            "timeout = 60s\nhealth_timeout = 10s\nstop_grace = 10s\nserver_cpus = 0\n"
            "hammer_cpus = 0\n\n"
            "[profile default]\ncommand = '%s' --port {port}\nhealth = /_health\n\n"
            "[profile epoll]\ncommand = \"{bindir}/bench_app\" --port {port} --engine epoll\n"
            "health = /_health\n"
            "env = HAMMER_MATRIX_TEST=1\n\n"
            "[profile never-healthy]\ncommand = /bin/sh -c 'echo waiting; exec sleep 30'\n"
            "health = /_health\n\n"
            "[profile missing]\ncommand = /nonexistent/server --port {port}\n\n"
            "[profile exits]\ncommand = /bin/sh -c 'echo boom >&2; exit 3'\n\n"
            "[workload counter]\nscenario = counter\n\n"
            "[workload io]\nscenario = io\nargs = --mode browser\n",
            argv[2]);
    fclose(f);

    proc p;
    char *m[] = {argv[1],  "matrix", "--markdown", md,   "--html", html,
                 "--json", js,       "--logs",     logs, ini,      NULL};
    int rc = proc_run(&p, m, 240);
    if (rc != 1) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 1); /* completed, with skipped profiles */

    /* Markdown, printed and written: BENCHMARK_RESULTS.md's table layout. */
    char *text = slurp(md);
    ASSERT(strstr(p.out, "### counter"));
    ASSERT(strstr(text, "### counter"));
    ASSERT(strstr(text, "### io"));
    ASSERT(strstr(text, "| Profile | cold r/s | warm r/s | Δ | cold OK% | warm OK% | cold→warm |"));
    ASSERT(strstr(text, "| default | "));
    ASSERT(strstr(text, "Latency of each action in the warm pass (ms)"));
    ASSERT(strstr(text, "| Profile | p50 | p99 |"));
    ASSERT(strstr(text, "| epoll | "));
    ASSERT(strstr(text, "| never-healthy | SKIPPED"));
    ASSERT(strstr(text, "| missing | SKIPPED"));
    ASSERT(strstr(text, "not healthy after 10.0 s"));
    ASSERT(strstr(text, "its last output: waiting"));
    ASSERT(strstr(text, "cannot start /nonexistent/server"));
    ASSERT(strstr(text, "exited with status 3 before becoming healthy (last output: boom)"));
    ASSERT(strstr(text, "| Kernel | Linux"));
    ASSERT(strstr(text, "| CPU pinning | server on 0, hammer on 0 |"));
    free(text);

    /* The server the matrix started is sampled by --server-pid: each run's
     * own JSON (kept in --logs) has its server resources. */
    char run_js[400];
    snprintf(run_js, sizeof(run_js), "%s/run-default-counter-r1.json", logs);
    json_t *run1 = load_json(run_js);
    json_t *cold = json_array_get(json_object_get(run1, "passes"), 0);
    ASSERT_GT(json_number_value(
                  json_object_get(json_object_get(cold, "server_resources"), "resident_bytes")),
              0);
    json_decref(run1);

    /* JSON: every run, the environment, and the summary. */
    json_t *doc = load_json(js);
    json_t *runs = json_object_get(doc, "runs");
    ASSERT_EQ(json_array_size(runs), 20); /* 5 profiles x 2 workloads x 2 rounds */
    int ok = 0;
    size_t i;
    json_t *run;
    json_array_foreach(runs, i, run)
    {
        const char *status = json_string_value(json_object_get(run, "status"));
        const char *profile = json_string_value(json_object_get(run, "profile"));
        if (!strcmp(status, "ok")) {
            ok++;
            ASSERT(!strcmp(profile, "default") || !strcmp(profile, "epoll"));
            json_t *passes = json_object_get(run, "passes");
            ASSERT_GT(json_number_value(json_object_get(json_object_get(passes, "cold"), "rps")),
                      0);
            ASSERT_EQ(json_int_at(json_object_get(passes, "warm"), "ok"), 300);
            /* hammer_cpus = 0: the child hammer saw one CPU, so one thread */
            ASSERT_EQ(json_int_at(json_object_get(passes, "warm"), "threads"), 1);
            ASSERT_STREQ(json_string_value(json_object_get(run, "server_stopped")), "SIGTERM");
        } else {
            ASSERT_STREQ(status, "skipped");
            ASSERT(json_string_value(json_object_get(run, "reason")));
        }
    }
    ASSERT_EQ(ok, 8);
    /* Interleaved: round 2 starts with the second profile. */
    ASSERT_STREQ(json_string_value(json_object_get(json_array_get(runs, 0), "profile")), "default");
    ASSERT_STREQ(json_string_value(json_object_get(json_array_get(runs, 10), "profile")), "epoll");
    ASSERT_EQ(json_int_at(json_array_get(runs, 10), "round"), 2);
    ASSERT(json_string_value(json_object_get(json_object_get(doc, "environment"), "kernel")));
    ASSERT(json_string_value(json_object_get(json_object_get(doc, "environment"), "cpu")));
    json_t *rows = json_object_get(json_object_get(json_object_get(doc, "summary"), "io"), "rows");
    ASSERT_EQ(json_array_size(rows), 5);
    json_t *epoll = json_array_get(rows, 1);
    ASSERT_EQ(json_int_at(epoll, "warm_rps.n"), 2);
    ASSERT(json_number_value(json_object_get(json_object_get(epoll, "warm_rps"), "min")) <=
           json_number_value(json_object_get(json_object_get(epoll, "warm_rps"), "median")));
    ASSERT(json_is_boolean(json_object_get(json_object_get(epoll, "delta_pct"), "separable")));
    const char *verdict =
        json_string_value(json_object_get(json_object_get(epoll, "delta_pct"), "verdict"));
    ASSERT(verdict && (!strcmp(verdict, "separable") || !strcmp(verdict, "not separable")));
    ASSERT_EQ(json_array_size(json_object_get(json_object_get(epoll, "latency_us"), "warm")), 61);
    ASSERT(json_number_value(json_object_get(json_object_get(epoll, "warm_p99_us"), "median")) >=
           json_number_value(json_object_get(json_object_get(epoll, "warm_p50_us"), "median")));
    ASSERT_EQ(json_int_at(json_array_get(rows, 2), "runs"), 0);
    json_decref(doc);
    check_html(html, "default", "epoll");

    /* --render: the same reports from the saved JSON, without measuring. */
    char md2[300];
    snprintf(md2, sizeof(md2), "%s/again.md", dir);
    char *again[] = {argv[1], "matrix", "-q", "--render", js, "--markdown", md2, NULL};
    ASSERT_EQ(proc_run(&p, again, 30), 1);
    char *first = slurp(md), *second = slurp(md2);
    ASSERT_STREQ(second, first);
    free(first);
    free(second);
    char *not_matrix[] = {argv[1], "matrix", "--render", ini, NULL};
    ASSERT_EQ(proc_run(&p, not_matrix, 30), 2);
    f = fopen(ini, "w");
    ASSERT(f);
    fprintf(f, "[matrix]\nserver_cpus = 1000\n[profile a]\ncommand = x\n[workload w]\nscenario = "
               "counter\n");
    fclose(f);
    char *bad_cpus[] = {argv[1], "matrix", ini, NULL};
    ASSERT_EQ(proc_run(&p, bad_cpus, 30), 2);
    ASSERT(strstr(p.out, "server_cpus = 1000: CPU 1000 is not available here"));
    /* Values meant for hammer are checked before any server starts. */
    f = fopen(ini, "w");
    ASSERT(f);
    fprintf(f, "[profile a]\ncommand = x\n[workload w]\nscenario = nosuch\n");
    fclose(f);
    ASSERT_EQ(proc_run(&p, bad_cpus, 30), 2);
    ASSERT(strstr(p.out, "scenario = nosuch: no such scenario"));
    printf("matrix: 20 runs, 8 measured, 3 profiles skipped with reasons; Markdown, JSON, HTML\n");

    /* Ctrl-C mid-run: the reports so far, marked interrupted; no server left. */
    f = fopen(ini, "w");
    ASSERT(f);
    fprintf(f,
            "[matrix]\nruns = 2\nduration = 5s\nconcurrency = 20\n"
            "[profile default]\ncommand = '%s' --port {port}\nhealth = /_health\n"
            "[workload counter]\nscenario = counter\n",
            argv[2]);
    fclose(f);
    unlink(js);
    char *intr[] = {argv[1], "matrix", "--json", js, "--logs", logs, ini, NULL};
    proc_start(&p, intr);
    /* Into the cold pass (5 s): the server answered, and the child hammer
     * had a moment to start sending; interrupted there or in the warm
     * pass, the run is reported alike. */
    ASSERT(proc_wait_output(&p, "healthy in"));
    usleep(2500 * 1000);
    proc_read(&p, 0);
    kill(p.pid, SIGINT);
    ASSERT_EQ(proc_wait(&p, 60), 1);
    ASSERT(strstr(p.out, "**Interrupted:**"));
    doc = load_json(js);
    ASSERT_EQ(json_int_at(doc, "interrupted"), 1);
    runs = json_object_get(doc, "runs");
    ASSERT_EQ(json_array_size(runs), 1);
    run = json_array_get(runs, 0);
    ASSERT_STREQ(json_string_value(json_object_get(run, "status")), "interrupted");
    ASSERT_GT(json_number_value(
                  json_object_get(json_object_get(json_object_get(run, "passes"), "cold"), "rps")),
              0);
    ASSERT_STREQ(json_string_value(json_object_get(run, "server_stopped")), "SIGTERM");
    int port = 0;
    ASSERT_EQ(sscanf(json_string_value(json_object_get(run, "url")), "http://127.0.0.1:%d", &port),
              1);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ASSERT(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0); /* the server is gone */
    close(fd);
    json_decref(doc);
    printf("matrix: SIGINT mid-run wrote the reports so far and stopped the server\n");

    /* The example profiles file, shortened. */
    char *ex[] = {argv[1], "matrix", "--runs", "1",      "-n", "200",   "-c",
                  "20",    "--html", html,     "--logs", logs, argv[3], NULL};
    rc = proc_run(&p, ex, 240);
    if (rc != 0 && rc != 1) fprintf(stderr, "%s\n", p.out);
    ASSERT(rc == 0 || rc == 1); /* the multi-worker rows fail by design */
    const char *names[] = {"| 1-worker | ", "| 1-worker-epoll | ", "| 2-workers | ",
                           "| 4-workers | ", "| 4-workers-stream | "};
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
        ASSERT(strstr(p.out, names[k]));
    ASSERT(!strstr(p.out, "SKIPPED"));
    ASSERT(strstr(p.out, "### spreadsheet"));
    ASSERT(strstr(p.out, "(one run)")); /* one round: no verdict on any change */
    ASSERT(!strstr(p.out, "(not separable)"));
    check_html(html, "1-worker", "4-workers-stream");
    printf("examples/matrix.ini: all five profiles measured, HTML written\n");

    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}
