/* The server watch's timing and verdict, and the progress line of a run
 * that waits (src/cli/server_watch.h, src/stats/progress.c):
 * - each interval's /_health sample is taken at the interval's end, so it
 *   counts every request the interval completed (not the one before);
 * - after a -d run against bench_app, the contexts its SSE stream holds
 *   are said as a note at once, with no wait and no WARNING;
 * - a server that keeps its contexts after the clients left gets a note
 *   after a wait it announces; one whose contexts grow beyond what hammer
 *   opened gets the WARNING; Ctrl-C skips the wait; the HTML shows the
 *   verdict and the samples after the run;
 * - against a server that accepts and never answers, the lines show the
 *   requests in flight and how long nothing completed, no OK percentage,
 *   and from the first Ctrl-C what the run waits for (line mode and the
 *   live line on a pty).
 * argv: HAMMER PYTHON3 MISBEHAVE_SERVER */
#include "run_util.h"

#include <math.h>
#include <pty.h>

static const char *hammer, *python, *misbehave;
static char json_path[256], html_path[256];

static double num_at(json_t *root, const char *dotted)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", dotted);
    json_t *cur = root;
    for (char *tok = strtok(buf, "."); tok && cur; tok = strtok(NULL, "."))
        cur = json_object_get(cur, tok);
    return json_is_number(cur) ? json_number_value(cur) : NAN;
}

/* Fails unless root.a.b is the string want. */
static void expect_str(json_t *root, const char *a, const char *b, const char *want)
{
    const char *got = json_string_value(json_object_get(json_object_get(root, a), b));
    if (!got || strcmp(got, want))
        HM_FAIL_("%s.%s is %s, want \"%s\"", a, b, got ? got : "missing", want);
}

static int count(const char *out, const char *needle)
{
    int n = 0;
    for (const char *q = out; (q = strstr(q, needle)); q++)
        n++;
    return n;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* tests/misbehave/server.py with extra arguments; its URL into url. */
static void server_start(proc *s, char *url, size_t len, char *const extra[])
{
    char *argv[16] = {(char *)python, (char *)misbehave};
    int n = 2;
    for (int i = 0; extra[i] && n < 15; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    proc_start(s, argv);
    track(s->pid);
    ASSERT(proc_wait_output(s, "\n"));
    snprintf(url, len, "http://127.0.0.1:%d", atoi(s->out));
}

static void server_stop(proc *s)
{
    kill(s->pid, SIGTERM);
    proc_wait(s, 30);
    untrack(s->pid);
}

/* Finding: the line at 10 s printed the sample from before the run. Each
 * interval's sample now comes at its end: bench_app's request count then
 * covers every action hammer completed by then. */
static void check_sample_at_interval_end(void)
{
    unlink(json_path);
    char *argv[] = {(char *)hammer, "-d", "2s", "--interval", "400ms",   "--json",
                    json_path,      "-c", "20", "scenario",   "counter", NULL};
    proc p;
    ASSERT_EQ(proc_run(&p, argv, 120), 0);
    json_t *j = load_json(json_path);
    json_t *iv = json_object_get(j, "intervals");
    ASSERT_GT(json_array_size(iv), 2);
    double done = 0;
    int checked = 0;
    size_t i;
    json_t *pt;
    json_array_foreach(iv, i, pt)
    {
        done += num_at(pt, "ok");
        double served = num_at(pt, "server.workers_requests");
        ASSERT(!isnan(served));
        if (num_at(pt, "ok") <= 0) continue;
        if (served < done)
            HM_FAIL_("interval %zu (t %.3f): /_health counted %.0f requests, hammer had %.0f "
                     "answered: the sample is older than the interval",
                     i, num_at(pt, "t"), served, done);
        checked++;
    }
    ASSERT_GT(checked, 1);
    json_decref(j);
    printf("every interval's sample counts the requests it completed (%d intervals)\n", checked);
}

/* A clean -d run against the embedded bench_app: its one SSE stream (and
 * context) stay counted, said once as a note, at once. */
static void check_clean_run(void)
{
    unlink(json_path);
    const double d = 3;
    char *argv[] = {(char *)hammer, "-d",      "3s",       "--interval", "1s",
                    "--json",       json_path, "scenario", "counter",    NULL};
    proc p;
    double t0 = mono_s();
    ASSERT_EQ(proc_run(&p, argv, 120), 0);
    double took = mono_s() - t0;
    json_t *j = load_json(json_path);
    ASSERT(!strstr(p.out, "WARNING"));
    ASSERT(!strstr(p.out, "waiting up to"));
    ASSERT_EQ(count(p.out, "\nNote              the server still counts"), 1);
    ASSERT(strstr(p.out, "docs/php-via.md#the-sse-stream"));
    expect_str(j, "server_watch", "verdict", "open_streams");
    expect_str(j, "server_watch", "verdict_level", "note");
    ASSERT_EQ(json_int_at(j, "server_watch.waited"), 0);
    ASSERT_GE(num_at(j, "server_watch.own.streams"), 1);
    /* No grace spent (waited 0, no wait said): what would keep the run
     * past its -d. The time itself is printed, not bounded: a busy machine
     * stretches the set-up and tear-down of any run. */
    json_decref(j);
    printf("clean -d %.0fs run: a note at once, no warning, %.1f s in all\n", d, took);
}

/* A server that keeps every context after its client left: a note, after
 * a wait the run says while it waits. The HTML shows it too. */
static void check_kept(void)
{
    proc s;
    char url[64];
    char *extra[] = {NULL};
    server_start(&s, url, sizeof(url), extra);
    unlink(json_path);
    unlink(html_path);
    char *argv[] = {(char *)hammer, "--url",   url,       "-t",     "1",
                    "-c",           "4",       "-d",      "2s",     "--watch-grace",
                    "1s",           "--json",  json_path, "--html", html_path,
                    "scenario",     "counter", NULL};
    proc p;
    ASSERT_EQ(proc_run(&p, argv, 120), 0);
    json_t *j = load_json(json_path);
    ASSERT(strstr(p.out, "waiting up to 1 s for the server to release 1 context; Ctrl-C skips\n"));
    ASSERT(!strstr(p.out, "WARNING"));
    ASSERT_EQ(count(p.out, "\nNote              the server still holds 1 of the 1 context hammer "
                           "opened"),
              1);
    expect_str(j, "server_watch", "verdict", "kept");
    ASSERT_EQ(json_int_at(j, "server_watch.waited"), 1);
    ASSERT_GE(num_at(j, "server_watch.waited_s"), num_at(j, "server_watch.grace_s") - 0.3);
    size_t n_after =
        json_array_size(json_object_get(json_object_get(j, "server_watch"), "after_run"));
    ASSERT_GT(n_after, 1);
    /* the HTML report: the verdict, and the samples after the run */
    char *html = slurp(html_path);
    ASSERT(strstr(html, "<p>After the run: the server still holds 1 of the 1 context hammer"));
    char samples[64];
    snprintf(samples, sizeof(samples), "; %zu samples after it)</figcaption>", n_after);
    ASSERT(strstr(html, samples));
    free(html);
    json_decref(j);
    server_stop(&s);
    printf("kept contexts: a note after the announced wait, %zu samples after the run\n", n_after);
}

/* Contexts that grow beyond what hammer's clients opened: the WARNING. */
static void check_grew(void)
{
    proc s;
    char url[64];
    char *extra[] = {"--health-grow", "50", NULL};
    server_start(&s, url, sizeof(url), extra);
    unlink(json_path);
    char *argv[] = {
        (char *)hammer, "--url",         url,  "-t",     "1",       "-c",       "4",       "-d",
        "2s",           "--watch-grace", "1s", "--json", json_path, "scenario", "counter", NULL};
    proc p;
    ASSERT_EQ(proc_run(&p, argv, 120), 0);
    json_t *j = load_json(json_path);
    ASSERT(strstr(p.out, "\nWARNING           the server holds "));
    ASSERT(strstr(p.out, "(hammer opened 1)"));
    expect_str(j, "server_watch", "verdict", "grew");
    expect_str(j, "server_watch", "verdict_level", "warning");
    json_decref(j);
    server_stop(&s);
    printf("contexts growing beyond hammer's own: WARNING\n");
}

/* Ctrl-C during the wait ends it, and the run is not taken for interrupted. */
static void check_ctrl_c_skips(void)
{
    proc s;
    char url[64];
    char *extra[] = {NULL};
    server_start(&s, url, sizeof(url), extra);
    unlink(json_path);
    char *argv[] = {
        (char *)hammer, "--url",         url,   "-t",     "1",       "-c",       "4",       "-d",
        "1s",           "--watch-grace", "60s", "--json", json_path, "scenario", "counter", NULL};
    proc p;
    proc_start(&p, argv);
    ASSERT(proc_wait_output(&p, "waiting up to 60 s for the server to release"));
    kill(p.pid, SIGINT);
    ASSERT_EQ(proc_wait(&p, 120), 0);
    json_t *j = load_json(json_path);
    ASSERT_EQ(json_int_at(j, "server_watch.skipped"), 1);
    ASSERT(num_at(j, "server_watch.waited_s") < num_at(j, "server_watch.grace_s") / 2);
    ASSERT_EQ(json_int_at(j, "interrupted"), 0);
    ASSERT(strstr(p.out, "(Ctrl-C ended the wait)"));
    server_stop(&s);
    printf("Ctrl-C during the wait: skipped after %.1f s of 60\n",
           num_at(j, "server_watch.waited_s"));
    json_decref(j);
}

/* A server that accepts and never reads: line mode. */
static void check_never_answers_lines(void)
{
    proc s;
    char url[96];
    char *extra[] = {"--mode", "never-read", "--good-conns", "1", NULL};
    server_start(&s, url, sizeof(url), extra);
    strncat(url, "/flood", sizeof(url) - strlen(url) - 1);
    char *argv[] = {
        (char *)hammer, "--url", url,         "-t", "1",          "-c",    "4",
        "-d",           "30s",   "--timeout", "8s", "--interval", "500ms", "--no-server-watch",
        "scenario",     "get",   NULL};
    proc p;
    proc_start(&p, argv);
    if (!proc_wait_output(&p, "in flight 4  nothing completed for "))
        HM_FAIL_("no line saying nothing completed; output:\n%s", p.out);
    /* nothing completed: no percentage, no latency */
    ASSERT(strstr(p.out, "requests/s  OK       -  p99        -  in flight 4"));
    ASSERT(!strstr(p.out, "100.00%"));
    kill(p.pid, SIGINT);
    ASSERT(proc_wait_output(&p, "stopping: waiting for 4 in flight (up to "));
    /* said while the run waits, not at its end */
    ASSERT_EQ(waitpid(p.pid, NULL, WNOHANG), 0);
    ASSERT_EQ(proc_wait(&p, 120), 1);
    server_stop(&s);
    printf("never answered (lines): in flight, nothing completed, stopping said at once\n");
}

/* The same on a terminal: the live line (--no-tui: not the live view). */
static void check_never_answers_live(void)
{
    proc s;
    char url[96];
    char *extra[] = {"--mode", "never-read", "--good-conns", "1", NULL};
    server_start(&s, url, sizeof(url), extra);
    strncat(url, "/flood", sizeof(url) - strlen(url) - 1);
    char *argv[] = {(char *)hammer,
                    "--url",
                    url,
                    "-t",
                    "1",
                    "-c",
                    "4",
                    "-d",
                    "30s",
                    "--timeout",
                    "8s",
                    "--no-server-watch",
                    "--no-tui",
                    "scenario",
                    "get",
                    NULL};
    proc p = {0};
    int master;
    p.pid = forkpty(&master, NULL, NULL, NULL);
    ASSERT(p.pid >= 0);
    if (p.pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    track(p.pid);
    p.out_fd = master;
    if (!proc_wait_output(&p, "in flight 4  nothing completed for "))
        HM_FAIL_("no live line saying nothing completed; output:\n%s", p.out);
    /* the live line: redrawn in place, no OK percentage, no latency */
    const char *live = strstr(p.out, " 0 requests/s  OK       -  p99        -  in flight 4");
    if (!live) HM_FAIL_("no live line with in flight 4 and no OK%%; output:\n%s", p.out);
    while (live > p.out && live[-1] != '\r' && live[-1] != '\n')
        live--;
    ASSERT(live > p.out && live[-1] == '\r' && live[0] == '[');
    kill(p.pid, SIGINT);
    ASSERT(proc_wait_output(&p, "stopping: waiting for 4 in flight (up to "));
    ASSERT_EQ(waitpid(p.pid, NULL, WNOHANG), 0);
    int status;
    for (;;) { /* a pty's reads end in EIO once the child exits */
        proc_read(&p, 200);
        pid_t r = waitpid(p.pid, &status, WNOHANG);
        if (r == p.pid) break;
    }
    untrack(p.pid);
    close(master);
    ASSERT(WIFEXITED(status));
    server_stop(&s);
    printf("never answered (live line on a pty): in flight, stopping said at once\n");
}

int main(int argc, char **argv)
{
    if (argc < 4) HM_FAIL_("usage: %s HAMMER PYTHON3 MISBEHAVE_SERVER", argv[0]);
    hammer = argv[1];
    python = argv[2];
    misbehave = argv[3];
    atexit(kill_started);
    snprintf(json_path, sizeof(json_path), "/tmp/hammer-watch2-%d.json", (int)getpid());
    snprintf(html_path, sizeof(html_path), "/tmp/hammer-watch2-%d.html", (int)getpid());
    const char *only = argc > 4 ? argv[4] : "";
    if (!*only || !strcmp(only, "interval")) check_sample_at_interval_end();
    if (!*only || !strcmp(only, "clean")) check_clean_run();
    if (!*only || !strcmp(only, "kept")) check_kept();
    if (!*only || !strcmp(only, "grew")) check_grew();
    if (!*only || !strcmp(only, "ctrl_c")) check_ctrl_c_skips();
    if (!*only || !strcmp(only, "lines")) check_never_answers_lines();
    if (!*only || !strcmp(only, "live")) check_never_answers_live();
    unlink(json_path);
    unlink(html_path);
    return 0;
}
