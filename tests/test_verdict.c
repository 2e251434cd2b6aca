/* The run's verdict (docs/output.md, "How to read the verdict"): a check
 * is PASS only when evaluated on enough successful work, every FAIL names
 * its criteria in the summary, the JSON's result.reasons and the HTML
 * report, a flow expectation that never ran says so, and browser mode's
 * action and action->patch rows time different events.
 * argv: HAMMER SERVER_PY PART (tests/misbehave/server.py), PART one of
 *   zero_ok     every action answered 500: the check is not evaluated (both models)
 *   few_ok      a quarter of the actions OK: not evaluated, with the share it saw
 *   reasons     a failed threshold and failed actions named; a clean run has none; HTML
 *   merge       hammer merge: the merged run's reasons
 *   flow_skip   a hammer-model flow's signal expectation: not evaluated, why
 *   patch_time  a server that answers 200 ms after the patch: action > action->patch */
#include "run_util.h"

#include <stdio.h>
#include <string.h>

static const char *hammer, *server_py;
static char dir[] = "/tmp/hm_verdict_XXXXXX", json_path[300];

/* server.py in `mode` (extra args may be NULL); returns its port. */
static int start_server(proc *srv, const char *mode, const char *a, const char *b)
{
    char *argv[] = {"/usr/bin/python3", (char *)server_py, "--mode", (char *)mode,
                    (char *)a,          (char *)b,         NULL};
    proc_start(srv, argv);
    track(srv->pid);
    ASSERT(proc_wait_output(srv, "\n"));
    int port = atoi(srv->out);
    ASSERT_GT(port, 0);
    return port;
}

static void stop_server(proc *srv)
{
    kill(srv->pid, SIGTERM);
    proc_wait(srv, 20);
    untrack(srv->pid);
}

/* Runs hammer with args (NULL-terminated) and --json; returns the exit
 * code, the output in p, the document in *doc. */
static int run(proc *p, json_t **doc, const char *const args[])
{
    char *argv[40];
    int n = 0;
    argv[n++] = (char *)hammer;
    argv[n++] = "--json";
    argv[n++] = json_path;
    argv[n++] = "--timeout"; /* results, not speed: far above a busy machine's */
    argv[n++] = "30s";
    for (int i = 0; args[i] && n < 38; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    unlink(json_path);
    int rc = proc_run(p, argv, 240);
    *doc = load_json(json_path);
    return rc;
}

static const char *str_at(json_t *j, const char *a, const char *b)
{
    json_t *v = json_object_get(json_object_get(j, a), b);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Whether result.reasons has an element containing text. */
static bool has_reason(json_t *j, const char *text)
{
    json_t *reasons = json_object_get(json_object_get(j, "result"), "reasons");
    ASSERT(json_is_array(reasons));
    size_t i;
    json_t *r;
    json_array_foreach(reasons, i,
                       r) if (json_is_string(r) && strstr(json_string_value(r), text)) return true;
    return false;
}

/* The summary's line starting with prefix (to its end), or "". */
static const char *line_of(const char *out, const char *prefix, char *buf, size_t len)
{
    const char *l = strstr(out, prefix);
    buf[0] = 0;
    if (l) snprintf(buf, len, "%.*s", (int)strcspn(l, "\n"), l);
    return buf;
}

/* 0 OK is never PASS: every action answered 500, in both load models. */
static void zero_ok(void)
{
    proc srv, p;
    char url[64], line[400];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", start_server(&srv, "all-500", NULL, NULL));
    const char *modes[] = {"hammer", "browser"};
    for (int m = 0; m < 2; m++) {
        const char *args[] = {"--url",  url,      "-c",       "4",       "-n", "40",
                              "--mode", modes[m], "scenario", "counter", NULL};
        json_t *j;
        ASSERT_EQ(run(&p, &j, args), 1);
        ASSERT_EQ(json_int_at(j, "actions.ok"), 0);
        line_of(p.out, "Check ", line, sizeof(line));
        printf("%s: %s\n", modes[m], line);
        ASSERT(strstr(line, "NOT EVALUATED — no OK action"));
        ASSERT(!strstr(line, "PASS"));
        ASSERT_EQ(json_int_at(j, "check.passed"), 0);
        ASSERT_EQ(json_int_at(j, "check.evaluated"), 0);
        ASSERT_STREQ(str_at(j, "check", "not_evaluated"), "no OK action");
        ASSERT(has_reason(j, "check not evaluated: no OK action"));
        ASSERT(has_reason(j, "100.00% of actions failed (40 of 40)"));
        ASSERT(strstr(p.out, "Result            FAIL\n  - 100.00% of actions failed (40 of 40)\n"));
        json_decref(j);
        /* The HTML report reads the same verdict from the JSON. */
        char html[320];
        snprintf(html, sizeof(html), "%s/zero.html", dir);
        char *report[] = {(char *)hammer, "report", json_path, "--html", html, NULL};
        ASSERT_EQ(proc_run(&p, report, 60), 0);
        char *page = slurp(html);
        ASSERT(strstr(page, "NOT EVALUATED — no OK action"));
        ASSERT(strstr(page, "<li>check not evaluated: no OK action</li>"));
        free(page);
    }
    stop_server(&srv);
}

/* Ten OK actions of 40 (the rest 500): the check saw a quarter of the
 * work, which is not enough to call it PASS. */
static void few_ok(void)
{
    const char *modes[] = {"hammer", "browser"};
    for (int m = 0; m < 2; m++) {
        proc srv, p;
        char url[64], line[400];
        snprintf(url, sizeof(url), "http://127.0.0.1:%d",
                 start_server(&srv, "all-500", "--skip", "10"));
        /* One VU (sender): the ten answered first are its own. */
        const char *args[] = {"--url",  url,      "-c",       "1",       "-n", "40",
                              "--mode", modes[m], "scenario", "counter", NULL};
        json_t *j;
        ASSERT_EQ(run(&p, &j, args), 1);
        ASSERT_EQ(json_int_at(j, "actions.ok"), 10);
        line_of(p.out, "Check ", line, sizeof(line));
        printf("%s: %s\n", modes[m], line);
        ASSERT(strstr(line, "NOT EVALUATED — it saw the effect of 10 of 40 actions (25.00%)"));
        ASSERT_EQ(json_int_at(j, "check.evaluated"), 0);
        ASSERT(has_reason(j, "check not evaluated: it saw the effect of 10 of 40 actions"));
        ASSERT(has_reason(j, "75.00% of actions failed (30 of 40)"));
        json_decref(j);
        stop_server(&srv);
    }
}

/* A clean run passes with no reasons; a threshold that fails is named
 * with what was measured, in the summary, the JSON and the HTML report. */
static void reasons(void)
{
    proc p;
    json_t *j;
    const char *clean[] = {"-c", "10", "-n", "500", "scenario", "counter", NULL};
    ASSERT_EQ(run(&p, &j, clean), 0);
    ASSERT_EQ(json_int_at(j, "result.passed"), 1);
    ASSERT_EQ(json_array_size(json_object_get(json_object_get(j, "result"), "reasons")), 0);
    ASSERT_EQ(json_int_at(j, "check.evaluated"), 1);
    ASSERT(strstr(p.out, "Result            PASS\n"));
    json_decref(j);

    const char *strict[] = {"-c",      "10",       "-n",      "500", "--threshold",
                            "max<1us", "scenario", "counter", NULL};
    ASSERT_EQ(run(&p, &j, strict), 1);
    ASSERT_EQ(json_int_at(j, "passed"), 0);
    ASSERT_EQ(json_int_at(j, "result.passed"), 0);
    ASSERT_EQ(json_array_size(json_object_get(json_object_get(j, "result"), "reasons")), 1);
    ASSERT(has_reason(j, "threshold max<1us failed (measured "));
    const char *res = strstr(p.out, "Result            FAIL\n  - threshold max<1us failed");
    ASSERT(res);
    printf("threshold: %.*s\n", (int)strcspn(res + 24, "\n"), res + 24);
    json_decref(j);

    /* The HTML report says why, from the JSON. */
    char html[320];
    snprintf(html, sizeof(html), "%s/run.html", dir);
    char *report[] = {(char *)hammer, "report", json_path, "--html", html, NULL};
    ASSERT_EQ(proc_run(&p, report, 60), 0);
    char *page = slurp(html);
    ASSERT(strstr(page, "FAIL because:"));
    ASSERT(strstr(page, "<li>threshold max&lt;1us failed (measured "));
    free(page);
}

/* hammer merge: a threshold the shards left to it fails on the merged run,
 * and the merged document and summary say so. */
static void merge(void)
{
    char shard_json[2][320], spec[8], merged[320];
    proc p;
    for (int i = 0; i < 2; i++) {
        snprintf(spec, sizeof(spec), "%d/2", i);
        snprintf(shard_json[i], sizeof(shard_json[i]), "%s/shard%d.json", dir, i);
        char *argv[] = {(char *)hammer, "-q",      "--shard", spec,          "-n",
                        "100",          "-c",      "4",       "--run-id",    "verdict",
                        "--threshold",  "max<1us", "--json",  shard_json[i], "scenario",
                        "counter",      NULL};
        ASSERT_EQ(proc_run(&p, argv, 120), 0); /* a shard defers its thresholds */
    }
    snprintf(merged, sizeof(merged), "%s/merged.json", dir);
    char *argv[] = {(char *)hammer, "merge", "--json", merged, shard_json[0], shard_json[1], NULL};
    ASSERT_EQ(proc_run(&p, argv, 60), 1);
    ASSERT(strstr(p.out, "Result            FAIL\n  - threshold max<1us failed (measured "));
    json_t *j = load_json(merged);
    ASSERT_EQ(json_int_at(j, "result.passed"), 0);
    ASSERT(has_reason(j, "threshold max<1us failed (measured "));
    ASSERT_EQ(json_array_size(json_object_get(json_object_get(j, "result"), "reasons")), 1);
    json_decref(j);
}

/* In the hammer model a signal expectation after the first action never
 * runs: listed as not evaluated with why, not "0 held, 0 failed"; one the
 * run never reaches fails the run. */
static void flow_skip(void)
{
    char flow[320], line[400];
    snprintf(flow, sizeof(flow), "%s/skip.yaml", dir);
    write_file(flow, "name: skip\nsteps:\n  - page: /bench/counter\n  - sse: open\n"
                     "  - repeat: forever\n    steps:\n      - action: increment\n"
                     "      - expect: { signal: count, above: 0 }\n");
    proc p;
    json_t *j;
    const char *args[] = {"-c", "2", "-n", "40", "flow", flow, NULL};
    ASSERT_EQ(run(&p, &j, args), 0);
    line_of(p.out, "  n/a  ", line, sizeof(line));
    printf("hammer model: %s\n", line);
    ASSERT(strstr(line, "not evaluated — the hammer model does not wait for patches"));
    ASSERT(!strstr(p.out, "0 held, 0 failed"));
    json_t *c = json_array_get(json_object_get(j, "checks"), 0);
    ASSERT(c);
    ASSERT(json_is_false(json_object_get(c, "evaluated")));
    ASSERT(strstr(json_string_value(json_object_get(c, "not_evaluated")), "hammer model"));
    json_decref(j);

    /* Browser mode evaluates it. */
    const char *br[] = {"--mode", "browser", "-c", "2", "-n", "40", "flow", flow, NULL};
    ASSERT_EQ(run(&p, &j, br), 0);
    c = json_array_get(json_object_get(j, "checks"), 0);
    ASSERT(json_is_true(json_object_get(c, "evaluated")));
    ASSERT_EQ(json_int_at(c, "passed"), 40);
    json_decref(j);

    /* An expectation after a repeat that never ends is never reached. */
    snprintf(flow, sizeof(flow), "%s/unreached.yaml", dir);
    write_file(flow, "name: unreached\nsteps:\n  - page: /bench/counter\n  - sse: open\n"
                     "  - repeat: forever\n    steps:\n      - action: increment\n"
                     "      - wait: { signal: count, changed_by: 1 }\n"
                     "  - expect: { status: 200 }\n");
    ASSERT_EQ(run(&p, &j, br), 1);
    ASSERT(has_reason(j, "not evaluated: the run never reached it"));
    line_of(p.out, "  n/a  ", line, sizeof(line));
    printf("never reached: %s\n", line);
    json_decref(j);
}

/* Browser mode: the server sends the patch at once and answers the POST
 * 200 ms later, so action (POST sent -> answer) is at least 200 ms while
 * action->patch (POST sent -> the patch on the VU's stream) is shorter. */
static void patch_time(void)
{
    proc srv, p;
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d",
             start_server(&srv, "slow-answer", NULL, NULL));
    const char *args[] = {"--url",  url,       "-c",       "2",       "-n", "10",
                          "--mode", "browser", "scenario", "counter", NULL};
    json_t *j;
    ASSERT_EQ(run(&p, &j, args), 0);
    long long action = json_int_at(j, "latency_us.action.p50");
    long long patch = json_int_at(j, "latency_us.patch.p50");
    printf("action p50 %lld us, action->patch p50 %lld us\n", action, patch);
    ASSERT_EQ(json_int_at(j, "latency_us.patch.count"), 10);
    ASSERT_GE(action, 200000); /* the server's delay */
    ASSERT_LT(patch, action);
    /* The patch came before the answer, the answer 200 ms after the action
     * was applied: the rows differ by about that delay. */
    ASSERT_GT(action - patch, 100000);
    json_decref(j);
    stop_server(&srv);
}

static void cleanup(void)
{
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

int main(int argc, char **argv)
{
    if (argc < 4) HM_FAIL_("usage: %s HAMMER SERVER_PY PART", argv[0]);
    hammer = argv[1];
    server_py = argv[2];
    atexit(kill_started);
    ASSERT(mkdtemp(dir));
    atexit(cleanup);
    snprintf(json_path, sizeof(json_path), "%s/run.json", dir);
    const char *part = argv[3];
    if (!strcmp(part, "zero_ok"))
        zero_ok();
    else if (!strcmp(part, "few_ok"))
        few_ok();
    else if (!strcmp(part, "reasons"))
        reasons();
    else if (!strcmp(part, "merge"))
        merge();
    else if (!strcmp(part, "flow_skip"))
        flow_skip();
    else if (!strcmp(part, "patch_time"))
        patch_time();
    else
        HM_FAIL_("unknown part %s", part);
    printf("verdict %s: ok\n", part);
    return 0;
}
