/* hammer matrix with a profile whose app fails its actions (bench_app
 * --max-body-bytes 1: every action's body is refused, 413, fast): its runs
 * are "failed" with their reasons, not "ok"; its figures stay in the
 * tables marked ✗; its dots in the throughput chart are hollow, with a
 * legend; it is never the fastest. A document saved before runs carried
 * "measured" still leaves an under-100%-OK profile out when rendered.
 * argv: HAMMER BENCH_APP */
#include "run_util.h"

#include <stdlib.h>
#include <string.h>

/* The <g> of the dot whose data-series is series, up to its '>'. */
static void dot_tag(const char *html, const char *series, char *out, size_t len)
{
    char key[200];
    snprintf(key, sizeof(key), "data-series=\"%s\"", series);
    const char *at = strstr(html, key);
    if (!at) HM_FAIL_("no dot %s in the HTML", series);
    size_t n = strcspn(at, ">");
    ASSERT(n < len);
    memcpy(out, at, n);
    out[n] = 0;
}

/* Whether doc's summary leaves profile out of the counter workload's fastest. */
static bool left_out(json_t *doc, const char *profile)
{
    json_t *ws = json_object_get(json_object_get(doc, "summary"), "counter");
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(ws, "left_out"), i, p)
    {
        if (!strcmp(json_string_value(p), profile)) return true;
    }
    return false;
}

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s HAMMER BENCH_APP", argv[0]);
    char dir[] = "/tmp/hammer-matrix-failed-XXXXXX";
    ASSERT(mkdtemp(dir));
    char ini[300], md[300], html[300], js[300], logs[300], old[300], again[300];
    snprintf(ini, sizeof(ini), "%s/profiles.ini", dir);
    snprintf(md, sizeof(md), "%s/results.md", dir);
    snprintf(html, sizeof(html), "%s/results.html", dir);
    snprintf(js, sizeof(js), "%s/results.json", dir);
    snprintf(logs, sizeof(logs), "%s/logs", dir);
    snprintf(old, sizeof(old), "%s/old.json", dir);
    snprintf(again, sizeof(again), "%s/again.json", dir);
    write_file(ini,
               "[matrix]\nruns = 2\nactions = 200\nconcurrency = 10\nbaseline = good\n"
               "timeout = 60s\nhealth_timeout = 60s\n\n"
               "[profile good]\ncommand = '%s' --port {port}\nhealth = /_health\n\n"
               "[profile rejects]\ncommand = '%s' --port {port} --max-body-bytes 1\n"
               "health = /_health\n\n"
               "[workload counter]\nscenario = counter\n",
               argv[2], argv[2]);
    proc p;
    char *m[] = {argv[1],  "matrix", "-q",     "--markdown", md,  "--html", html,
                 "--json", js,       "--logs", logs,         ini, NULL};
    int rc = proc_run(&p, m, 280);
    if (rc != 1) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 1);
    ASSERT(strstr(p.out, "rejects: ") && strstr(p.out, "/s FAILED"));

    /* The JSON: each pass's status from hammer's verdict, with reasons. */
    json_t *doc = load_json(js);
    size_t i;
    json_t *run;
    int good = 0, bad = 0;
    json_array_foreach(json_object_get(doc, "runs"), i, run)
    {
        const char *profile = json_string_value(json_object_get(run, "profile"));
        const char *status = json_string_value(json_object_get(run, "status"));
        json_t *reasons = json_object_get(run, "reasons");
        ASSERT(json_is_true(json_object_get(run, "measured")));
        if (!strcmp(profile, "good")) {
            ASSERT_STREQ(status, "ok");
            ASSERT_EQ(json_array_size(reasons), 0);
            good++;
            continue;
        }
        ASSERT_STREQ(status, "failed"); /* hammer exited 1: not "ok" */
        ASSERT_EQ(json_int_at(run, "hammer_exit"), 1);
        ASSERT_GT(json_array_size(reasons), 0);
        size_t k;
        json_t *r;
        json_array_foreach(reasons, k, r)
        {
            const char *t = json_string_value(r);
            ASSERT(t && (!strncmp(t, "cold: ", 6) || !strncmp(t, "warm: ", 6)));
        }
        const char *reason = json_string_value(json_object_get(run, "reason"));
        ASSERT(reason && strstr(reason, json_string_value(json_array_get(reasons, 0))));
        json_t *warm = json_object_get(json_object_get(run, "passes"), "warm");
        ASSERT_STREQ(json_string_value(json_object_get(warm, "status")), "failed");
        ASSERT_GT(json_array_size(json_object_get(warm, "reasons")), 0);
        ASSERT_EQ(json_int_at(warm, "ok"), 0);
        bad++;
    }
    ASSERT_EQ(good, 2);
    ASSERT_EQ(bad, 2);
    json_t *ws = json_object_get(json_object_get(doc, "summary"), "counter");
    json_t *rows = json_object_get(ws, "rows");
    ASSERT_STREQ(json_string_value(json_object_get(json_array_get(rows, 0), "profile")), "good");
    ASSERT(json_is_true(json_object_get(json_array_get(rows, 0), "comparable")));
    ASSERT(json_is_false(json_object_get(json_array_get(rows, 1), "comparable")));
    ASSERT_EQ(json_int_at(json_array_get(rows, 1), "failing_runs"), 2);
    ASSERT_EQ(json_int_at(json_array_get(rows, 1), "runs"), 2); /* still measured */
    ASSERT_STREQ(json_string_value(json_object_get(json_object_get(ws, "fastest"), "profile")),
                 "good");
    ASSERT(left_out(doc, "rejects"));
    ASSERT(!left_out(doc, "good"));

    /* Markdown: marked in the table, left out of the fastest, the reasons listed. */
    char *text = slurp(md);
    ASSERT(strstr(text, "| rejects \u2717 | "));
    ASSERT(strstr(text, "| good | "));
    ASSERT(strstr(text, "Fastest (warm r/s, every run passed at 100% OK): good, "));
    ASSERT(strstr(text, "Left out: rejects (failed runs or OK<100%"));
    ASSERT(strstr(text, "- round 1, rejects × counter: FAILED — cold: "));
    free(text);

    /* HTML: the failing profile's dots are hollow, with a legend saying why. */
    char *report = slurp(html);
    char tag[600];
    dot_tag(report, "rejects · warm", tag, sizeof(tag));
    ASSERT(strstr(tag, "data-hollow=\"1\""));
    dot_tag(report, "rejects · cold", tag, sizeof(tag));
    ASSERT(strstr(tag, "data-hollow=\"1\""));
    dot_tag(report, "good · warm", tag, sizeof(tag));
    ASSERT(!strstr(tag, "data-hollow"));
    ASSERT(strstr(report, "data-legend=\"hollow\""));
    ASSERT(strstr(report, "<p class=\"fastest\">Fastest (warm r/s, every run passed at 100% OK): "
                          "good, "));
    ASSERT(strstr(report, "rejects ✗"));
    free(report);

    /* A document saved before runs carried "measured" and pass statuses
     * (its failing runs said "ok"): rendered again, the under-100%-OK
     * profile is still left out and drawn hollow. */
    json_array_foreach(json_object_get(doc, "runs"), i, run)
    {
        json_object_del(run, "measured");
        json_object_del(run, "reasons");
        json_object_del(run, "reason");
        json_object_set_new(run, "status", json_string("ok"));
    }
    json_object_del(doc, "summary");
    ASSERT_EQ(json_dump_file(doc, old, JSON_INDENT(2)), 0);
    json_decref(doc);
    char *render[] = {argv[1], "matrix", "-q", "--render", old, "--json", again, NULL};
    rc = proc_run(&p, render, 60);
    if (rc != 1) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 1); /* its passes did not pass */
    doc = load_json(again);
    ASSERT(left_out(doc, "rejects"));
    ASSERT_STREQ(
        json_string_value(json_object_get(
            json_object_get(json_object_get(json_object_get(doc, "summary"), "counter"), "fastest"),
            "profile")),
        "good");
    json_decref(doc);

    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    printf("matrix: a failing profile is failed with its reasons, hollow, never the fastest\n");
    return 0;
}
