/* test_cli_shard.c — --shard, --start-at, --run-id and hammer merge end to
 * end, against one bench_app; one behaviour per argv[3]:
 *   usage      bad --shard, --start-at and --run-id values, and shares that
 *              would leave a shard nothing: exit 2 with the reason
 *   shares     4 shards of -c 6 -n 10 -R 10.5: each does its share (the
 *              first take the remainder), the shares add up to the whole
 *   start_at   the load waits for --start-at (the wait is not in the wall
 *              time); a start already past is warned about and runs
 *   interrupt  SIGINT while waiting for --start-at ends the run at once,
 *              JSON written, nothing sent
 *   run_id     the same words give the same run id; other options or
 *              another start give another; --run-id names it
 *   merge      hammer merge of real shard files: totals, exit codes, runs
 *              refused, a run merged with itself, --markdown, and the
 *              shards' --hdr-log files merged by time
 * argv: HAMMER BENCH_APP BEHAVIOUR */
#include "run_util.h"
#include "stats/hdr_log.h"

#include <errno.h>
#include <math.h>
#include <sys/stat.h>

static const char *hammer, *bench_app;
static char dir[64], url[64];
static proc app;

/* A failed assertion exits: the server must not outlive the test. */
static void kill_app(void)
{
    if (app.pid > 0) kill(app.pid, SIGKILL);
}

static void start_app(void)
{
    char *argv[] = {(char *)bench_app, "--port", "0", NULL};
    proc_start(&app, argv);
    atexit(kill_app);
    for (int i = 0; i < 200 && !strstr(app.out, "listening on "); i++)
        proc_read(&app, 50);
    const char *at = strstr(app.out, "listening on ");
    ASSERT(at);
    snprintf(url, sizeof(url), "%.*s", (int)strcspn(at + 13, "\n"), at + 13);
}

static void stop_app(void)
{
    kill(app.pid, SIGTERM);
    proc_wait(&app, 30);
    app.pid = 0;
}

static void path_of(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

static double num_at(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b) v = json_object_get(v, b);
    ASSERT(json_is_number(v));
    return json_number_value(v);
}

/* hammer ARGS... with --url, -q and --json NAME; returns the exit code. */
static int run_hammer(proc *p, const char *json_name, const char *const *args, int timeout_s)
{
    char json[128];
    path_of(json, sizeof(json), json_name);
    char *argv[64];
    int n = 0;
    argv[n++] = (char *)hammer;
    argv[n++] = "--url";
    argv[n++] = url;
    argv[n++] = "-q";
    argv[n++] = "--json";
    argv[n++] = json;
    for (int i = 0; args[i]; i++)
        argv[n++] = (char *)args[i];
    argv[n++] = "scenario";
    argv[n++] = "counter";
    argv[n] = NULL;
    unlink(json);
    return proc_run(p, argv, timeout_s);
}

static json_t *load(const char *name)
{
    char path[128];
    path_of(path, sizeof(path), name);
    return load_json(path);
}

static void expect_usage(const char *const *args, const char *want)
{
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)hammer;
    for (int i = 0; args[i]; i++)
        argv[n++] = (char *)args[i];
    argv[n++] = "scenario";
    argv[n++] = "counter";
    argv[n] = NULL;
    proc p;
    int rc = proc_run(&p, argv, 30);
    if (rc != 2 || !strstr(p.out, want))
        HM_FAIL_("%s ...: exit %d, output \"%s\" (wanted exit 2 and \"%s\")", args[0], rc, p.out,
                 want);
    printf("usage: %s %s -> %.*s\n", args[0], args[1], (int)strcspn(p.out, "\n"), p.out);
}

static void check_usage(void)
{
    expect_usage((const char *[]){"--shard", "4/4", NULL}, "bad value '4/4' for --shard");
    expect_usage((const char *[]){"--shard", "0/0", NULL}, "bad value");
    expect_usage((const char *[]){"--shard", "1", NULL}, "bad value");
    expect_usage((const char *[]){"--shard", "-1/4", NULL}, "bad value");
    expect_usage((const char *[]){"--shard", "0/4", "-c", "3", NULL},
                 "-c 3 over 4 shards leaves the last shard nothing");
    expect_usage((const char *[]){"--shard", "0/4", "-n", "3", NULL},
                 "-n 3 over 4 shards leaves the last shard nothing");
    expect_usage((const char *[]){"--shard", "1/4", "-R", "3.5", NULL},
                 "-R 3.5 over 4 shards leaves the last shard nothing");
    expect_usage((const char *[]){"--start-at", "tomorrow", NULL}, "bad value 'tomorrow'");
    expect_usage((const char *[]){"--start-at", "2026-12-01T10:00:00", NULL}, "bad value");
    expect_usage((const char *[]){"--start-at", "2026-12-01T25:00:00Z", NULL}, "bad value");
    expect_usage((const char *[]){"--start-at", "+soon", NULL}, "bad value");
    expect_usage((const char *[]){"--run-id", "", NULL}, "bad value");
}

static void check_shares(void)
{
    start_app();
    long long sum_c = 0, sum_n = 0;
    double sum_r = 0;
    static const int want_c[] = {2, 2, 1, 1}, want_n[] = {3, 3, 2, 2};
    static const double want_r[] = {3.5, 3, 2, 2};
    for (int i = 0; i < 4; i++) {
        char spec[16], name[32];
        snprintf(spec, sizeof(spec), "%d/4", i);
        snprintf(name, sizeof(name), "s%d.json", i);
        proc p;
        int rc = run_hammer(
            &p, name, (const char *[]){"--shard", spec, "-c", "6", "-n", "10", "-R", "10.5", NULL},
            120);
        if (rc != 0) HM_FAIL_("shard %s: exit %d\n%s", spec, rc, p.out);
        json_t *j = load(name);
        json_t *share = json_object_get(json_object_get(j, "shard"), "share");
        ASSERT_EQ(json_int_at(j, "shard.index"), i);
        ASSERT_EQ(json_int_at(j, "shard.count"), 4);
        ASSERT_EQ(json_integer_value(json_object_get(share, "concurrency")), want_c[i]);
        ASSERT_EQ(json_integer_value(json_object_get(share, "actions")), want_n[i]);
        ASSERT_DBL_NEAR(json_number_value(json_object_get(share, "rate")), want_r[i], 1e-12);
        ASSERT_EQ(json_int_at(j, "concurrency"), want_c[i]);
        ASSERT_EQ(json_int_at(j, "actions.sent"), want_n[i]);
        ASSERT_EQ(json_int_at(j, "actions.ok"), want_n[i]);
        ASSERT_EQ(json_int_at(j, "signal.net_increment"), want_n[i]); /* its own counter */
        ASSERT_DBL_NEAR(num_at(j, "rate", "target"), want_r[i], 1e-12);
        /* The options record holds the whole run's values. */
        json_t *opts = json_object_get(json_object_get(j, "shard"), "options");
        ASSERT_EQ(json_integer_value(json_object_get(opts, "concurrency")), 6);
        ASSERT_EQ(json_integer_value(json_object_get(opts, "actions")), 10);
        sum_c += want_c[i];
        sum_n += want_n[i];
        sum_r += want_r[i];
        json_decref(j);
    }
    ASSERT_EQ(sum_c, 6);
    ASSERT_EQ(sum_n, 10);
    ASSERT_DBL_NEAR(sum_r, 10.5, 1e-12);
    printf("shares: -c 6 -n 10 -R 10.5 over 4 shards: c 2,2,1,1  n 3,3,2,2  R 3.5,3,2,2, each "
           "shard did its share and checked its own counter\n");
    stop_app();
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void check_start_at(void)
{
    start_app();
    const double delay = 3.0;
    proc p;
    double before = wall_now();
    int rc = run_hammer(&p, "late.json",
                        (const char *[]){"-n", "40", "-c", "4", "--start-at", "+3s", NULL}, 120);
    double after = wall_now();
    if (rc != 0) HM_FAIL_("exit %d\n%s", rc, p.out);
    json_t *j = load("late.json");
    json_t *sh = json_object_get(j, "shard");
    double start_at = num_at(sh, "start_at", NULL), started = num_at(sh, "started", NULL);
    double wall = num_at(j, "wall_seconds", NULL);
    /* Never before the start time, and the wait is not in the wall time:
     * the load's wall time fits between its start and hammer's exit (with
     * the wait in it, it would end `delay` seconds after the exit), however
     * slow the machine. */
    if (!(start_at >= before + delay - 0.001) || !(started >= start_at - 0.001) ||
        !(started + wall <= after + 0.01))
        HM_FAIL_("asked at %.3f for +%.0f s: start_at %.3f, started %.3f, wall %.3f s, exited "
                 "%.3f\n%s",
                 before, delay, start_at, started, wall, after, p.out);
    ASSERT_EQ(json_int_at(j, "actions.ok"), 40);
    printf("start_at: +3s: load started %.1f ms after --start-at, wall %.3f s (the wait not in "
           "it)\n",
           (started - start_at) * 1e3, num_at(j, "wall_seconds", NULL));
    json_decref(j);

    rc = run_hammer(
        &p, "past.json",
        (const char *[]){"-n", "40", "-c", "4", "--start-at", "2020-01-01T00:00:00Z", NULL}, 120);
    ASSERT_EQ(rc, 0);
    ASSERT(strstr(p.out, "--start-at 2020-01-01T00:00:00.000Z passed"));
    j = load("past.json");
    ASSERT_EQ(json_int_at(j, "actions.ok"), 40);
    json_decref(j);
    printf("start_at: a start time in the past is warned about, the run goes ahead\n");

    /* An offset is honoured: 10:00:00+02:00 is 08:00:00Z. */
    rc = run_hammer(
        &p, "offset.json",
        (const char *[]){"-n", "4", "-c", "1", "--start-at", "2021-06-01T10:00:00.25+02:00", NULL},
        120);
    ASSERT_EQ(rc, 0);
    j = load("offset.json");
    ASSERT_DBL_NEAR(num_at(json_object_get(j, "shard"), "start_at", NULL), 1622534400.25, 1e-6);
    json_decref(j);
    stop_app();
}

static void check_interrupt(void)
{
    start_app();
    char json[128];
    path_of(json, sizeof(json), "int.json");
    char *argv[] = {(char *)hammer, "--url",      url,    "-n",       "100000",  "--json",
                    json,           "--start-at", "+60s", "scenario", "counter", NULL};
    proc p;
    proc_start(&p, argv);
    for (int i = 0; i < 600 && !strstr(p.out, "starts its load at"); i++)
        proc_read(&p, 50);
    ASSERT(strstr(p.out, "starts its load at"));
    proc_read(&p, 300); /* set-up done, waiting */
    kill(p.pid, SIGINT);
    /* Well before the 60 s start: the wait ends on the signal. */
    int rc = proc_wait(&p, 30);
    ASSERT_EQ(rc, 1);
    json_t *j = load_json(json);
    ASSERT_EQ(json_int_at(j, "interrupted"), 1);
    ASSERT_EQ(json_int_at(j, "actions.sent"), 0);
    ASSERT_EQ(json_int_at(j, "passed"), 0);
    json_decref(j);
    printf("interrupt: SIGINT while waiting for --start-at: exit 1, JSON says interrupted, "
           "nothing sent\n");
    stop_app();
}

static const char *run_id_of(const char *name, char *buf, size_t len)
{
    json_t *j = load(name);
    snprintf(buf, len, "%s",
             json_string_value(json_object_get(json_object_get(j, "shard"), "run_id")));
    json_decref(j);
    return buf;
}

static void check_run_id(void)
{
    start_app();
    proc p;
    char a[80], b[80], c[80], d[80], e[80];
    const char *at = "2021-06-01T10:00:00Z";
    ASSERT_EQ(
        run_hammer(&p, "a.json",
                   (const char *[]){"--shard", "0/2", "-n", "4", "-c", "2", "--start-at", at, NULL},
                   60),
        0);
    ASSERT_EQ(
        run_hammer(&p, "b.json",
                   (const char *[]){"--shard", "1/2", "-n", "4", "-c", "2", "--start-at", at, NULL},
                   60),
        0);
    ASSERT_EQ(
        run_hammer(&p, "c.json",
                   (const char *[]){"--shard", "1/2", "-n", "6", "-c", "2", "--start-at", at, NULL},
                   60),
        0);
    ASSERT_EQ(run_hammer(&p, "d.json",
                         (const char *[]){"--shard", "1/2", "-n", "4", "-c", "2", "--start-at",
                                          "2021-06-01T10:00:01Z", NULL},
                         60),
              0);
    ASSERT_EQ(
        run_hammer(&p, "e.json", (const char *[]){"--run-id", "nightly-42", "-n", "4", NULL}, 60),
        0);
    ASSERT_STREQ(run_id_of("a.json", a, sizeof(a)), run_id_of("b.json", b, sizeof(b)));
    ASSERT(strcmp(run_id_of("c.json", c, sizeof(c)), a) != 0);
    ASSERT(strcmp(run_id_of("d.json", d, sizeof(d)), a) != 0);
    ASSERT_STREQ(run_id_of("e.json", e, sizeof(e)), "nightly-42");
    printf("run_id: shards of one run share %s; -n 6 gives %s, another start %s; --run-id "
           "names it\n",
           a, c, d);
    stop_app();
}

/* hammer merge ARGS...; exit code, output in p->out. */
static int run_merge(proc *p, const char *const *args)
{
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)hammer;
    argv[n++] = "merge";
    for (int i = 0; args[i]; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    return proc_run(p, argv, 60);
}

/* Total count and interval starts (absolute) of an interval log. */
static long long log_total(const char *path, double *first, double *last, int *lines)
{
    FILE *f = fopen(path, "r");
    ASSERT(f);
    double base;
    ASSERT_EQ(hm_hlog_start_time(f, &base), 0);
    hm_hlog_entry e;
    long long total = 0;
    double prev = -1;
    *lines = 0;
    int rc;
    while ((rc = hm_hlog_read(f, &e)) == 1) {
        double at = base + e.start_s;
        ASSERT(at >= prev - 0.0005); /* in time order (to the log's ms) */
        if (*lines == 0) *first = at;
        *last = prev = at;
        total += hm_hdr_count(&e.hist);
        hm_hdr_destroy(&e.hist);
        (*lines)++;
    }
    ASSERT_EQ(rc, 0);
    fclose(f);
    return total;
}

static void check_merge(void)
{
    start_app();
    char spec[16], name[32], log[128], in[2][128], out[128], md[128], mlog[128];
    for (int i = 0; i < 2; i++) {
        snprintf(spec, sizeof(spec), "%d/2", i);
        snprintf(name, sizeof(name), "m%d.json", i);
        snprintf(log, sizeof(log), "%s/m%d.hlog", dir, i);
        path_of(in[i], sizeof(in[i]), name);
        proc p;
        int rc = run_hammer(&p, name,
                            (const char *[]){"--shard", spec, "-n", "601", "-c", "8", "--run-id",
                                             "merge-test", "--hdr-log", log, "--interval", "100ms",
                                             "--threshold", "ok>=100%", NULL},
                            120);
        if (rc != 0) HM_FAIL_("shard %s: exit %d\n%s", spec, rc, p.out);
    }
    path_of(out, sizeof(out), "merged.json");
    path_of(md, sizeof(md), "merged.md");
    path_of(mlog, sizeof(mlog), "merged.hlog");
    char html[256];
    path_of(html, sizeof(html), "merged.html");
    char log0[128], log1[128];
    snprintf(log0, sizeof(log0), "%s/m0.hlog", dir);
    snprintf(log1, sizeof(log1), "%s/m1.hlog", dir);
    proc p;
    int rc = run_merge(&p, (const char *[]){"--json", out, "--markdown", md, "--html", html,
                                            "--hdr-log", mlog, in[0], log0, in[1], log1, NULL});
    if (rc != 0) HM_FAIL_("merge: exit %d\n%s", rc, p.out);
    ASSERT(strstr(p.out, "Actions sent      601"));
    ASSERT(strstr(p.out, "Result            PASS"));
    json_t *m = load_json(out);
    ASSERT_EQ(json_int_at(m, "actions.sent"), 601);
    ASSERT_EQ(json_int_at(m, "actions.ok"), 601);
    ASSERT_EQ(json_int_at(m, "latency_us.action.count"), 601);
    ASSERT_EQ(json_int_at(m, "signal.net_increment"), 601);
    ASSERT_EQ(json_int_at(m, "passed"), 1);
    json_t *th = json_array_get(json_object_get(m, "thresholds"), 0);
    ASSERT_STREQ(json_string_value(json_object_get(th, "threshold")), "ok>=100%");
    ASSERT(json_is_true(json_object_get(th, "passed")));
    json_t *shard0 = load_json(in[0]);
    ASSERT_EQ(json_array_size(json_object_get(shard0, "thresholds")), 0); /* left to merge */
    printf("merge: 2 shards of -n 601 -> %lld sent, %lld OK, latency count %lld, threshold "
           "ok>=100%% evaluated on the merged run\n",
           json_int_at(m, "actions.sent"), json_int_at(m, "actions.ok"),
           json_int_at(m, "latency_us.action.count"));
    struct stat st;
    ASSERT_EQ(stat(md, &st), 0);
    ASSERT_GT(st.st_size, 100);
    /* The HTML report renders the merged document: its sent count and the
     * document itself, embedded. */
    char *page = slurp(html);
    ASSERT(page != NULL);
    ASSERT(strstr(page, "<!DOCTYPE html>") || strstr(page, "<!doctype html>"));
    ASSERT(strstr(page, "601"));
    ASSERT(strstr(page, "merge-test"));
    free(page);

    int lines;
    double first, last, f0, l0, f1, l1;
    int n0, n1;
    long long total = log_total(mlog, &first, &last, &lines);
    long long t0 = log_total(log0, &f0, &l0, &n0), t1 = log_total(log1, &f1, &l1, &n1);
    ASSERT_EQ(total, t0 + t1);
    ASSERT_EQ(total, 601);
    ASSERT_EQ(lines, n0 + n1);
    ASSERT(fabs(first - fmin(f0, f1)) < 0.002 && fabs(last - fmax(l0, l1)) < 0.002);
    printf("merge: --hdr-log: %d + %d intervals on one time line, count %lld\n", n0, n1, total);

    /* A run merged with itself: counts double. */
    rc = run_merge(&p, (const char *[]){"--json", out, in[0], in[0], NULL});
    ASSERT_EQ(rc, 1); /* shard 1 of 2 is missing */
    ASSERT(strstr(p.out, "missing shards 1 of 2 (no input is shard 1)"));
    json_t *self = load_json(out);
    ASSERT_EQ(json_int_at(self, "actions.sent"), 2 * json_int_at(shard0, "actions.sent"));
    ASSERT_EQ(json_int_at(self, "latency_us.action.count"),
              2 * json_int_at(shard0, "latency_us.action.count"));
    ASSERT_EQ(json_int_at(self, "latency_us.action.max"),
              json_int_at(shard0, "latency_us.action.max"));
    json_decref(self);
    printf("merge: a shard merged with itself doubles its counts; the missing shard fails it\n");

    /* Another run is refused. */
    ASSERT_EQ(run_hammer(&p, "other.json",
                         (const char *[]){"--shard", "1/2", "-n", "601", "-c", "8", "--run-id",
                                          "another", NULL},
                         120),
              0);
    char other[128];
    path_of(other, sizeof(other), "other.json");
    rc = run_merge(&p, (const char *[]){in[0], other, NULL});
    ASSERT_EQ(rc, 2);
    ASSERT(strstr(p.out, "different runs"));
    rc = run_merge(&p, (const char *[]){in[0], log0, NULL});
    ASSERT_EQ(rc, 2);
    ASSERT(strstr(p.out, "--hdr-log"));
    rc = run_merge(&p, (const char *[]){"/nonexistent/x.json", NULL});
    ASSERT_EQ(rc, 2);
    printf("merge: other runs, stray logs and missing files: exit 2 with the reason\n");
    json_decref(m);
    json_decref(shard0);
    stop_app();
}

int main(int argc, char **argv)
{
    if (argc < 4) HM_FAIL_("usage: %s HAMMER BENCH_APP BEHAVIOUR", argv[0]);
    hammer = argv[1];
    bench_app = argv[2];
    snprintf(dir, sizeof(dir), "/tmp/hammer-shard-XXXXXX");
    ASSERT(mkdtemp(dir));
    const char *what = argv[3];
    if (!strcmp(what, "usage"))
        check_usage();
    else if (!strcmp(what, "shares"))
        check_shares();
    else if (!strcmp(what, "start_at"))
        check_start_at();
    else if (!strcmp(what, "interrupt"))
        check_interrupt();
    else if (!strcmp(what, "run_id"))
        check_run_id();
    else if (!strcmp(what, "merge"))
        check_merge();
    else
        HM_FAIL_("unknown behaviour %s", what);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}
