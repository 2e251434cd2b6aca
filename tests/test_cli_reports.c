/* A run's reports besides the summary: --html (charts from the JSON
 * document, which it embeds), `hammer report RUN.json --html` (the same
 * page again, byte for byte), the server watch and error examples drawn
 * when a document has them, --passes, and --hgrm in HdrHistogram's layout.
 * argv: HAMMER */
#include "base/hm_base.h"
#include "run_util.h"

#include <math.h>

static const char *hammer;
static char dir[] = "/tmp/hm_reports_XXXXXX";

/* The document embedded in an HTML report. */
static json_t *embedded(const char *html)
{
    const char *tag = "<script id=\"hammer-run-data\" type=\"application/json\">";
    const char *start = strstr(html, tag);
    ASSERT(start);
    start += strlen(tag);
    const char *end = strstr(start, "</script>");
    ASSERT(end);
    json_error_t err;
    json_t *doc = json_loadb(start, (size_t)(end - start), 0, &err);
    if (!doc) HM_FAIL_("embedded JSON does not parse: %s", err.text);
    return doc;
}

static void path_in(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

static int report(const char *json, const char *html)
{
    char *argv[] = {(char *)hammer, "report", (char *)json, "--html", (char *)html, NULL};
    proc p;
    int rc = proc_run(&p, argv, 60);
    if (rc) fprintf(stderr, "%s", p.out);
    return rc;
}

/* The SVG of the chart of that kind (up to its </svg>), copied; NULL when
 * the page has none. */
static char *chart(const char *page, const char *kind)
{
    char key[128];
    snprintf(key, sizeof(key), "data-chart=\"%s\"", kind);
    const char *start = strstr(page, key);
    if (!start) return NULL;
    const char *end = strstr(start, "</svg>");
    ASSERT(end);
    return strndup(start, (size_t)(end - start));
}

/* Whether the chart of that kind has a series of that name. */
static bool chart_has(const char *page, const char *kind, const char *series)
{
    char *svg = chart(page, kind), key[256];
    snprintf(key, sizeof(key), "data-series=\"%s\"", series);
    bool has = svg && strstr(svg, key);
    free(svg);
    return has;
}

/* What the report says of a clean run: status codes, the histogram, each
 * request kind, the bands, in flight apart from the VUs, the partial last
 * interval marked, no empty errors chart, server fields in words. */
static void check_clean_run(const char *page, json_t *doc)
{
    const char *want[] = {
        "<h2>Status codes</h2>",      "<tr data-status=\"200\">",  "data-chart=\"histogram\"",
        "<h2>By request kind</h2>",   "<tr data-kind=\"action\">", "<tr data-kind=\"page\">",
        "<tr data-kind=\"connect\">", "<tr data-kind=\"sse\">",    "class=\"band\"",
        "<h2>Latency histogram</h2>",
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(want); i++)
        if (!strstr(page, want[i])) HM_FAIL_("the report lacks %s", want[i]);
    /* the histogram's bars count every action */
    char *hist = chart(page, "histogram");
    ASSERT(hist && strstr(hist, "data-series=\"action\""));
    free(hist);
    ASSERT(chart_has(page, "in-flight", "requests in flight"));
    ASSERT(!chart_has(page, "gauges", "requests in flight"));
    ASSERT(chart_has(page, "gauges", "virtual users (senders)"));
    /* a clean run: a line, not an empty errors chart */
    ASSERT(!strstr(page, "data-chart=\"errors\""));
    ASSERT(!strstr(page, "<figcaption>Errors per second"));
    ASSERT(strstr(page, "No errors during the run."));
    /* -d 2500ms at 1 s intervals: the last interval is partial, and so drawn */
    json_t *iv = json_object_get(doc, "intervals");
    size_t n = json_array_size(iv);
    ASSERT(n >= 2);
    double last = json_number_value(json_object_get(json_array_get(iv, n - 1), "dt"));
    double prev = json_number_value(json_object_get(json_array_get(iv, n - 2), "dt"));
    ASSERT(last < 0.9 * prev);
    char *tp = chart(page, "throughput"), pts[64];
    ASSERT(tp && strstr(tp, "data-partial-last=\"1\""));
    ASSERT(strstr(tp, "class=\"partial\" data-partial=\"1\" data-series=\"sent per second\""));
    snprintf(pts, sizeof(pts), "data-points=\"%zu\"", n - 1); /* the full-length points */
    ASSERT(strstr(tp, pts));
    free(tp);
    ASSERT(strstr(page, "final, partial interval"));
    /* bench_app's /_health fields in words, counters per second, the
     * broker's state in a line; no raw field name drawn */
    ASSERT(chart_has(page, "server-rate", "requests served (workers' sum)"));
    ASSERT(strstr(page, "data-series=\"contexts (connections"));
    ASSERT(!strstr(page, "data-series=\"connections_contexts\""));
    ASSERT(!strstr(page, "data-series=\"workers_requests\""));
    ASSERT(strstr(page, "Server watch: broker connected: 1 in each of the "));
    printf("--html: status codes, a latency histogram, each request kind, p50/p90/p99 bands, "
           "in flight apart from the VUs, the partial last interval dotted, no empty errors "
           "chart, the server's fields in words and one chart per unit\n");
}

static void check_hgrm(const char *path, json_t *doc)
{
    FILE *f = fopen(path, "r");
    ASSERT(f);
    char line[256];
    ASSERT(fgets(line, sizeof(line), f));
    ASSERT_STREQ(line, "       Value   Percentile   TotalCount 1/(1-Percentile)\n");
    double prev_p = -1, prev_v = -1, v = 0, p = 0;
    long long total = 0, rows = 0;
    while (fgets(line, sizeof(line), f)) {
        if (line[0] == '\n') continue;
        if (line[0] == '#') break;
        ASSERT_EQ(sscanf(line, "%lf %lf %lld", &v, &p, &total), 3);
        ASSERT(p >= prev_p && v >= prev_v);
        prev_p = p;
        prev_v = v;
        rows++;
    }
    fclose(f);
    ASSERT_GT(rows, 20);
    ASSERT(p == 1.0);
    ASSERT_EQ(total, json_int_at(doc, "latency_us.action.count"));
    /* milliseconds with three decimals: the maximum in µs, scaled */
    ASSERT(fabs(v * 1000 - (double)json_int_at(doc, "latency_us.action.max")) < 0.6);
    printf("--hgrm: %lld rows, up to %lld samples and a %.3f ms maximum, as the JSON says\n", rows,
           total, v);
}

int main(int argc, char **argv)
{
    if (argc < 2) HM_FAIL_("usage: %s HAMMER", argv[0]);
    hammer = argv[1];
    ASSERT(mkdtemp(dir));
    char json[300], html[300], again[300], hgrm[300];
    path_in(json, sizeof(json), "run.json");
    path_in(html, sizeof(html), "run.html");
    path_in(again, sizeof(again), "again.html");
    path_in(hgrm, sizeof(hgrm), "run.hgrm");

    char *run[] = {(char *)hammer, "-q", "-d",     "2500ms", "-c",       "20",      "--html", html,
                   "--json",       json, "--hgrm", hgrm,     "scenario", "counter", NULL};
    proc p;
    ASSERT_EQ(proc_run(&p, run, 120), 0);
    char *page = slurp(html);
    json_t *doc = load_json(json), *inside = embedded(page);
    ASSERT(json_equal(doc, inside)); /* rendered from exactly what --json wrote */
    const char *want[] = {
        "data-chart=\"percentiles\"", "data-series=\"action\"",   "data-series=\"action → patch\"",
        "data-chart=\"throughput\"",  "data-chart=\"latency\"",   "data-series=\"p99\"",
        "data-chart=\"gauges\"",      "No errors during the run", "<h2>Latency distribution</h2>",
    };
    check_clean_run(page, doc);
    for (size_t i = 0; i < HM_ARRAY_LEN(want); i++)
        if (!strstr(page, want[i])) HM_FAIL_("the report lacks %s", want[i]);
    ASSERT(!strstr(page, "http://") || strstr(page, "http://127.0.0.1")); /* nothing fetched */
    ASSERT(!strstr(page, "<script src"));
    ASSERT(!strstr(page, "<link"));
    printf("--html: charts for the distribution, throughput, latency and gauges; "
           "the embedded document equals --json's\n");

    ASSERT_EQ(report(json, again), 0);
    char *page2 = slurp(again);
    ASSERT_STREQ(page2, page);
    free(page2);
    printf("hammer report RUN.json --html: the same page, byte for byte\n");
    check_hgrm(hgrm, doc);

    /* What a document may carry that this run did not: the server watch
     * (issue 12) and error examples. They are drawn when present. */
    json_t *fields = json_pack("[s,s]", "contexts", "sse_streams");
    json_object_set_new(doc, "server_watch", json_pack("{s:o}", "fields", fields));
    size_t i;
    json_t *pt;
    json_array_foreach(json_object_get(doc, "intervals"), i, pt) json_object_set_new(
        pt, "server", json_pack("{s:f,s:f}", "contexts", 10.0 + (double)i, "sse_streams", 3.0));
    json_object_set_new(json_object_get(doc, "errors"), "timeout", json_integer(3));
    /* ... and failures: 50 responses 503 and 3 timeouts in the second interval */
    json_t *second = json_array_get(json_object_get(doc, "intervals"), 1);
    json_object_set_new(second, "failed", json_integer(53));
    json_object_set_new(second, "errors", json_pack("{s:i}", "timeout", 3));
    json_object_set_new(json_object_get(json_object_get(doc, "actions"), "by_status"), "503",
                        json_integer(50));
    json_object_set_new(
        doc, "error_reasons",
        json_pack("{s:{s:s,s:s}}", "timeout", "example", "no response in 5s", "where", "action"));
    json_dump_file(doc, json, 0);
    ASSERT_EQ(report(json, again), 0);
    page2 = slurp(again);
    /* contexts is held for clients; sse_streams (not an "sse" field) is
     * drawn with the server's other fields. */
    ASSERT(strstr(page2, "data-chart=\"server\""));
    ASSERT(strstr(page2, "data-chart=\"server-other\""));
    ASSERT(strstr(page2, "data-chart=\"server\"") < strstr(page2, "data-series=\"contexts\""));
    ASSERT(strstr(page2, "data-series=\"contexts\"") <
           strstr(page2, "data-chart=\"server-other\""));
    ASSERT(strstr(page2, "data-chart=\"server-other\"") <
           strstr(page2, "data-series=\"sse_streams\""));
    ASSERT(strstr(page2, "data-series=\"contexts\""));
    ASSERT(strstr(page2, "data-series=\"sse_streams\""));
    ASSERT(strstr(page2, "<code>no response in 5s</code>"));
    ASSERT(strstr(page2, "where: <code>action</code>"));
    /* a failing run: its errors chart, each status and failure kind */
    ASSERT(chart_has(page2, "errors", "HTTP status not 2xx"));
    ASSERT(chart_has(page2, "errors", "timeout"));
    ASSERT(!strstr(page2, "No errors during the run"));
    ASSERT(strstr(page2, "<tr data-status=\"503\"><td class=\"fail\">HTTP 503</td>"));
    ASSERT(strstr(page2, "<tr data-status=\"no response: timeout\">"));
    free(page2);
    printf("a document with a server watch, failures and error examples: all drawn\n");

    /* get's actions are requests, as the text summary names them */
    json_object_set_new(doc, "scenario", json_string("get"));
    json_dump_file(doc, json, 0);
    ASSERT_EQ(report(json, again), 0);
    page2 = slurp(again);
    ASSERT(strstr(page2, "<tr data-kind=\"request\"><td>request</td>"));
    ASSERT(!strstr(page2, "<tr data-kind=\"action\">"));
    ASSERT(chart_has(page2, "percentiles", "request"));
    ASSERT(chart_has(page2, "histogram", "request"));
    ASSERT(!chart_has(page2, "percentiles", "action"));
    free(page2);
    json_object_set_new(doc, "scenario", json_string("counter"));
    printf("scenario get: its phase is \"request\", as in the text summary\n");

    /* --passes: one page with the comparison and each pass. */
    char *passes[] = {(char *)hammer, "-q", "--passes", "cold,warm", "-n",     "500",
                      "-c",           "10", "--html",   html,        "--json", json,
                      "--hgrm",       hgrm, "scenario", "counter",   NULL};
    ASSERT_EQ(proc_run(&p, passes, 120), 0);
    free(page);
    page = slurp(html);
    ASSERT(strstr(page, "2 passes of scenario counter"));
    ASSERT(strstr(page, "data-series=\"cold\""));
    ASSERT(strstr(page, "data-series=\"warm\""));
    ASSERT(strstr(page, "Pass warm: scenario counter"));
    char cold[300], warm[300];
    path_in(cold, sizeof(cold), "run.cold.hgrm");
    path_in(warm, sizeof(warm), "run.warm.hgrm");
    ASSERT_EQ(access(cold, R_OK), 0);
    ASSERT_EQ(access(warm, R_OK), 0);
    printf("--passes: one page comparing the passes; one .hgrm per pass\n");

    /* A flow: its steps and checks get tables. */
    char flow[300];
    path_in(flow, sizeof(flow), "flow.yaml");
    FILE *ff = fopen(flow, "w");
    fputs("name: shop\nsteps:\n  - page: /bench/counter\n  - expect: {status: 200}\n"
          "  - repeat: forever\n    steps:\n      - action: increment\n",
          ff);
    fclose(ff);
    char *flow_run[] = {(char *)hammer, "-q", "-n",   "100", "-c", "4",
                        "--html",       html, "flow", flow,  NULL};
    ASSERT_EQ(proc_run(&p, flow_run, 120), 0);
    free(page);
    page = slurp(html);
    ASSERT(strstr(page, "<h2>Steps</h2>"));
    ASSERT(strstr(page, "<h2>Checks</h2>"));
    ASSERT(strstr(page, "<td>status 200</td>"));
    unlink(flow);
    printf("a flow: its steps and checks in tables\n");

    /* hammer report refuses what is not a run's document. */
    char notdoc[300];
    path_in(notdoc, sizeof(notdoc), "not.json");
    FILE *f = fopen(notdoc, "w");
    fputs("{\"schema\":\"hammer_matrix\"}", f);
    fclose(f);
    char *bad[] = {(char *)hammer, "report", notdoc, "--html", again, NULL};
    ASSERT_EQ(proc_run(&p, bad, 30), 2);
    ASSERT(strstr(p.out, "is not a hammer run's JSON document"));
    /* Without --html, as vegeta's report: the summary as text, read from
     * the document alone; --markdown - the same as Markdown. */
    char *text[] = {(char *)hammer, "report", json, NULL};
    ASSERT_EQ(proc_run(&p, text, 30), 0);
    if (!strstr(p.out, "=== hammer report: scenario ") || !strstr(p.out, "\nActions sent      ") ||
        !strstr(p.out, "\nResult            PASS\n") || strstr(p.out, "shard"))
        HM_FAIL_("hammer report RUN.json printed:\n%s", p.out);
    char *md[] = {(char *)hammer, "report", json, "--markdown", "-", NULL};
    ASSERT_EQ(proc_run(&p, md, 30), 0);
    if (strncmp(p.out, "# hammer report\n", 16) || !strstr(p.out, "| Result | **PASS** |"))
        HM_FAIL_("hammer report RUN.json --markdown - printed:\n%s", p.out);
    printf("hammer report RUN.json: the summary as text (and as Markdown)\n");

    free(page);
    json_decref(doc);
    json_decref(inside);
    const char *files[] = {"run.json",      "run.html",      "again.html", "run.hgrm",
                           "run.cold.hgrm", "run.warm.hgrm", "not.json"};
    for (size_t k = 0; k < HM_ARRAY_LEN(files); k++) {
        char path[300];
        path_in(path, sizeof(path), files[k]);
        unlink(path);
    }
    rmdir(dir);
    return 0;
}
