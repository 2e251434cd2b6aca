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
    free(page2);
    printf("a document with a server watch and error examples: both drawn\n");

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
