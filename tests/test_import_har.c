/* hammer import-har: a browser recording into a flow, and the flow replayed.
 *
 * tests/data/phpvia-bench.har is Chromium clicking through the real php-via
 * v0.12.0 bench_app.php (tests/tools/record_har.js; docs/flows.md says
 * how): the counter page three clicks, the spreadsheet page three clicks.
 * Its flow must read as written by hand (pages, the stream, repeated clicks
 * with their pauses, no context ids, no assets) and replay with -c 20
 * against the same routes on the embedded bench_app. Variants of it test
 * what other browsers' HARs lack (no _resourceType, no SSE body), and
 * tests/data/bench-app-live.har (hand-written, Firefox-style) a signal the
 * user sets (the live spreadsheet's direction key).
 * argv: HAMMER DATA_DIR */
#include "run_util.h"

#include "flow/flow.h"

#include <stdarg.h>
#include <stdbool.h>
#include <sys/stat.h>

static const char *hammer, *data;
static char dir[256], json_path[300];

/* hammer import-har ARGS... > OUT; returns the exit code, stdout+stderr in p. */
static int import(proc *p, const char *out, ...)
{
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)hammer;
    argv[n++] = "import-har";
    va_list ap;
    va_start(ap, out);
    for (char *a; (a = va_arg(ap, char *)) != NULL && n < 15;)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    int rc = proc_run(p, argv, 30);
    if (out) {
        FILE *f = fopen(out, "w");
        ASSERT(f);
        /* stdout and stderr share the pipe: keep the flow, not the note */
        const char *note = strstr(p->out, "hammer import-har: ");
        const char *after = note ? strchr(note, '\n') : NULL;
        fwrite(p->out, 1, note ? (size_t)(note - p->out) : p->out_len, f);
        if (after) fputs(after + 1, f);
        fclose(f);
    }
    return rc;
}

static hm_flow_file *load(const char *path)
{
    hm_flow_file *f = NULL;
    char why[512];
    if (hm_flow_load(path, &f, why, sizeof(why)) < 0) HM_FAIL_("the imported flow: %s", why);
    return f;
}

static json_t *row(json_t *j, const char *name)
{
    return json_row(j, "steps", "name", name);
}

/* A copy of a HAR with what other browsers' exports lack taken out. */
static void strip(const char *in, const char *out, bool types, bool streams)
{
    json_t *h = load_json(in);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(json_object_get(h, "log"), "entries"), i, e)
    {
        if (types) json_object_del(e, "_resourceType");
        json_t *content = json_object_get(json_object_get(e, "response"), "content");
        if (streams &&
            strstr(json_string_value(json_object_get(content, "mimeType")), "event-stream"))
            json_object_del(content, "text");
    }
    ASSERT_EQ(json_dump_file(h, out, JSON_INDENT(1)), 0);
    json_decref(h);
}

static void recorded(void)
{
    char har[512], out[512];
    snprintf(har, sizeof(har), "%s/phpvia-bench.har", data);
    snprintf(out, sizeof(out), "%s/bench.yaml", dir);
    proc p;
    ASSERT_EQ(import(&p, out, har, NULL), 0);
    printf("--- the flow imported from %s:\n%s---\n", har, p.out);
    /* What a person would write, and nothing a person would not. */
    ASSERT(strstr(p.out, "# Imported by hammer import-har from "));
    ASSERT(strstr(p.out, "Left out: 5 static assets, 6 Dev Bar requests."));
    ASSERT(strstr(p.out, "name: bench-counter\nsteps:\n- page: /bench/counter\n- sse: open\n"
                         "- repeat: 3\n  steps:\n  - think: "));
    ASSERT(strstr(p.out, "  - action: increment\n  - wait: patch\n"));
    ASSERT(strstr(p.out, "- page: /bench/spreadsheet\n- sse: open\n- repeat: 3\n"));
    ASSERT(!strstr(p.out, "via_ctx"));
    ASSERT(!strstr(p.out, "__bench_")); /* no context-bound ids */
    ASSERT(!strstr(p.out, "signals:")); /* every value echoed the stream */
    ASSERT(!strstr(p.out, "via.css"));  /* assets left out */
    ASSERT(!strstr(p.out, "/_via/"));   /* the Dev Bar left out */
    ASSERT(!strstr(p.out, "favicon"));
    hm_flow_file *f = load(out);
    ASSERT_EQ(f->n_flows, 1);
    const hm_flow *fl = &f->flows[0];
    ASSERT_EQ(fl->n_steps, 7); /* page sse repeat think page sse repeat */
    ASSERT_EQ(fl->steps[2].kind, HM_FLOW_REPEAT);
    ASSERT_EQ(fl->steps[2].times, 3);
    ASSERT_EQ(fl->steps[2].steps[0].kind, HM_FLOW_THINK);
    /* the recorder pauses 400..1200 ms between clicks */
    ASSERT_GE(fl->steps[2].steps[0].think_min_ns, 300 * 1000000LL);
    ASSERT_LE(fl->steps[2].steps[0].think_max_ns, 1300 * 1000000LL);
    ASSERT_EQ(fl->steps[4].kind, HM_FLOW_PAGE);
    hm_flow_free(f);

    /* Replayed with -c 20 against the same routes on bench_app. */
    char *argv[] = {(char *)hammer, "--mode", "browser", "-c",   "20", "-n",
                    "120",          "--json", json_path, "flow", out,  NULL};
    int rc = proc_run(&p, argv, 120);
    if (rc) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 0);
    json_t *j = load_json(json_path);
    ASSERT_EQ(json_int_at(j, "actions.ok"), 120);
    ASSERT_EQ(json_int_at(j, "actions.failed"), 0);
    ASSERT_EQ(json_int_at(j, "check.passed"), 1);
    ASSERT_EQ(json_int_at(row(j, "action increment"), "count"), 120);
    ASSERT_EQ(json_int_at(row(j, "wait patch"), "count"), 120);
    ASSERT_EQ(json_int_at(row(j, "wait patch"), "failed"), 0);
    ASSERT_GE(json_int_at(row(j, "page /bench/counter"), "count"), 20);
    ASSERT_GE(json_int_at(row(j, "page /bench/spreadsheet"), "count"), 1);
    ASSERT_GE(json_int_at(row(j, "sse open"), "count"), 21);
    ASSERT_EQ(json_int_at(row(j, "sse open"), "failed"), 0);
    ASSERT_EQ(json_int_at(j, "passed"), 1);
    json_decref(j);
    printf("recorded HAR: imported, and replayed with -c 20 (120 actions, every wait held)\n");

    /* A HAR without _resourceType and without the stream's body (as other
     * browsers write it): the same steps; the numbers the tab echoed are
     * left out by guess, and the importer says so. */
    char bare[512];
    snprintf(bare, sizeof(bare), "%s/bare.har", dir);
    strip(har, bare, true, true);
    ASSERT_EQ(import(&p, NULL, bare, NULL), 0);
    ASSERT(strstr(p.out, "- page: /bench/counter\n- sse: open\n- repeat: 3\n"));
    ASSERT(!strstr(p.out, "signals:"));
    ASSERT(strstr(p.out, "numeric signals were taken for server state"));
    /* --signals all keeps them, under the names the page gave them. */
    ASSERT_EQ(import(&p, NULL, bare, "--signals", "all", NULL), 0);
    ASSERT(strstr(p.out, "- action: increment\n  signals:\n    count: 0\n- wait: patch\n"));
    ASSERT(strstr(p.out, "    viewRow: 2\n"));
    ASSERT(!strstr(p.out, "__bench_"));
    printf("HARs without resource types or stream bodies import alike\n");
}

static void user_signals(void)
{
    char har[512], out[512];
    snprintf(har, sizeof(har), "%s/bench-app-live.har", data);
    snprintf(out, sizeof(out), "%s/live.yaml", dir);
    proc p;
    ASSERT_EQ(import(&p, out, har, NULL), 0);
    ASSERT(strstr(p.out, "Left out: 1 static asset, 1 request to other hosts, 1 request of "
                         "another method."));
    ASSERT(strstr(p.out, "- repeat: 2\n  steps:\n  - think: 800ms..840ms\n  - action: "
                         "navigate\n    signals:\n      direction: ArrowDown\n  - wait: patch\n"));
    ASSERT(strstr(p.out, "- think: 600ms\n- action: navigate\n  signals:\n    direction: "
                         "ArrowRight\n- wait: patch\n"));
    ASSERT(strstr(p.out, "direction: ArrowDown"));
    ASSERT(strstr(p.out, "direction: ArrowRight"));
    ASSERT(strstr(p.out, "- get: /_health\n- close\n"));
    ASSERT(!strstr(p.out, "focusRow"));
    ASSERT(!strstr(p.out, "analytics"));
    /* Options: assets kept, pauses scaled and clamped. */
    ASSERT_EQ(import(&p, NULL, har, "--keep-assets", "--think-scale", "2", NULL), 0);
    ASSERT(strstr(p.out, "- get: /datastar.js\n"));
    ASSERT(strstr(p.out, "think: 1.6s..1.7s"));
    ASSERT(strstr(p.out, "- think: 1.2s\n"));
    ASSERT_EQ(import(&p, NULL, har, "--max-think", "500ms", "--name", "keys", NULL), 0);
    ASSERT(strstr(p.out, "name: keys\n"));
    ASSERT(strstr(p.out, "- think: 500ms\n"));
    ASSERT(!strstr(p.out, "800ms"));

    char *argv[] = {(char *)hammer, "--mode", "browser", "-c",   "5", "-n",
                    "30",           "--json", json_path, "flow", out, NULL};
    int rc = proc_run(&p, argv, 120);
    if (rc) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 0);
    json_t *j = load_json(json_path);
    ASSERT_EQ(json_int_at(j, "actions.ok"), 30);
    ASSERT_EQ(json_int_at(row(j, "wait patch"), "failed"), 0);
    ASSERT_GE(json_int_at(row(j, "get /_health"), "count"), 5);
    json_decref(j);
    printf("a signal the user set (direction) is kept, and the flow replays\n");
}

static void bad_input(void)
{
    proc p;
    char path[512];
    snprintf(path, sizeof(path), "%s/x.har", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"log\": {\"entries\": [\n", f);
    fclose(f);
    ASSERT_EQ(import(&p, NULL, path, NULL), 2);
    ASSERT(strstr(p.out, "x.har:2:"));
    ASSERT(strstr(p.out, "not JSON"));
    f = fopen(path, "w");
    fputs("{\"log\": {}}", f);
    fclose(f);
    ASSERT_EQ(import(&p, NULL, path, NULL), 2);
    ASSERT(strstr(p.out, "has no log.entries"));
    f = fopen(path, "w");
    fputs("{\"log\": {\"entries\": [{\"startedDateTime\": \"2026-01-01T00:00:00.000Z\", "
          "\"time\": 1, \"request\": {\"method\": \"GET\", \"url\": "
          "\"http://127.0.0.1:1/a.css\"}, \"response\": {\"status\": 200, \"content\": "
          "{\"mimeType\": \"text/css\"}}}]}}",
          f);
    fclose(f);
    ASSERT_EQ(import(&p, NULL, path, NULL), 2);
    ASSERT(strstr(p.out, "holds no page load"));
    ASSERT_EQ(import(&p, NULL, "/nonexistent.har", NULL), 2);
    ASSERT_EQ(import(&p, NULL, path, "--signals", "some", NULL), 2);
    ASSERT(strstr(p.out, "--signals takes auto, all or none"));
    printf("bad HARs and options: exit 2 with the reason\n");
}

/* Writes a HAR of the entries (method, url, _resourceType, mimeType, ms). */
static void har_of(const char *path, const char *const (*es)[4], size_t n)
{
    FILE *f = fopen(path, "w");
    ASSERT(f);
    fputs("{\"log\": {\"entries\": [", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f,
                "%s{\"startedDateTime\": \"2026-01-01T00:00:%02zu.000Z\", \"time\": 1, "
                "\"_resourceType\": \"%s\", \"request\": {\"method\": \"%s\", \"url\": "
                "\"http://127.0.0.1:1%s\", \"postData\": {\"text\": \"{}\"}}, \"response\": "
                "{\"status\": 200, \"content\": {\"mimeType\": \"%s\"}}}",
                i ? ", " : "", i, es[i][2], es[i][0], es[i][1], es[i][3]);
    fputs("]}}", f);
    fclose(f);
}

/* What the fuzzer found (fuzz/regressions/har_import/action_before_page):
 * an action before any page load, or after a page whose stream the HAR
 * lacks, was written as a flow that hammer refuses. */
static void actions_without_context(void)
{
    proc p;
    char har[512], out[512];
    snprintf(har, sizeof(har), "%s/ctx.har", dir);
    snprintf(out, sizeof(out), "%s/ctx.yaml", dir);
    /* The first HTML GET has a type no page has: a get:, not a page. */
    static const char *const before[][4] = {
        {"GET", "/a", "other", "text/html"},
        {"POST", "/_action/inc", "fetch", "text/html"},
        {"GET", "/b", "document", "text/html"},
    };
    har_of(har, before, HM_ARRAY_LEN(before));
    ASSERT_EQ(import(&p, out, har, NULL), 0);
    ASSERT(strstr(p.out, "Left out: 1 page-less action."));
    hm_flow_file *f = load(out);
    ASSERT_EQ(f->n_actions, 0);
    hm_flow_free(f);
    /* A page, no /_sse entry, an action: the stream is opened for its wait. */
    static const char *const nostream[][4] = {
        {"GET", "/a", "document", "text/html"},
        {"POST", "/_action/inc", "fetch", "text/html"},
    };
    har_of(har, nostream, HM_ARRAY_LEN(nostream));
    ASSERT_EQ(import(&p, out, har, NULL), 0);
    f = load(out);
    ASSERT_EQ(f->n_actions, 1);
    ASSERT_EQ(f->flows[0].steps[1].kind, HM_FLOW_SSE);
    hm_flow_free(f);
    /* The only page is also an asset (by its name): nothing to replay,
     * said, instead of a flow of no steps (har_import/nothing_to_replay). */
    static const char *const asset_page[][4] = {{"GET", "/via.css", "document", "text/html"}};
    har_of(har, asset_page, HM_ARRAY_LEN(asset_page));
    ASSERT_EQ(import(&p, NULL, har, NULL), 2);
    ASSERT(strstr(p.out, "holds nothing to replay"));
    printf("actions without a page or a stream: left out, or the stream opened\n");
}

/* A pause longer than an int64_t of nanoseconds (the fuzzer's
 * har_import/pause_of_centuries) is cut to --max-think like any other. */
static void pause_of_centuries(void)
{
    proc p;
    char har[512], out[512];
    snprintf(har, sizeof(har), "%s/late.har", dir);
    snprintf(out, sizeof(out), "%s/late.yaml", dir);
    FILE *f = fopen(har, "w");
    ASSERT(f);
    fputs("{\"log\": {\"entries\": [{\"startedDateTime\": \"2026-01-01T00:00:00.000Z\", "
          "\"time\": 1, \"request\": {\"method\": \"GET\", \"url\": \"http://127.0.0.1:1/a\"}, "
          "\"response\": {\"status\": 200, \"content\": {\"mimeType\": \"text/html\"}}}, "
          "{\"startedDateTime\": \"9000-01-01T00:00:00.000Z\", \"time\": 1, \"request\": "
          "{\"method\": \"GET\", \"url\": \"http://127.0.0.1:1/b\"}, \"response\": {\"status\": "
          "200, \"content\": {\"mimeType\": \"text/html\"}}}]}}",
          f);
    fclose(f);
    ASSERT_EQ(import(&p, out, har, NULL), 0);
    hm_flow_file *fl = load(out);
    ASSERT_EQ(fl->flows[0].n_steps, 3); /* page, think, page */
    ASSERT_EQ(fl->flows[0].steps[1].kind, HM_FLOW_THINK);
    ASSERT_EQ(fl->flows[0].steps[1].think_max_ns, 5000000000LL);
    hm_flow_free(fl);
    printf("a pause of centuries: cut to --max-think\n");
}

/* The recorder's name goes into the header comment: a DEL, a newline or a
 * NEL in it (har_import/control_in_creator) made a file hammer refuses, or
 * one whose comment ends early. */
static void controls_in_creator(void)
{
    proc p;
    char har[512], out[512];
    snprintf(har, sizeof(har), "%s/ctl.har", dir);
    snprintf(out, sizeof(out), "%s/ctl.yaml", dir);
    FILE *f = fopen(har, "w");
    ASSERT(f);
    fputs("{\"log\": {\"creator\": {\"name\": \"rec\\u007f\\nsteps: []\\u0085x\"}, \"entries\": "
          "[{\"startedDateTime\": \"2026-01-01T00:00:00.000Z\", \"time\": 1, \"request\": "
          "{\"method\": \"GET\", \"url\": \"http://127.0.0.1:1/a\"}, \"response\": {\"status\": "
          "200, \"content\": {\"mimeType\": \"text/html\"}}}]}}",
          f);
    fclose(f);
    ASSERT_EQ(import(&p, out, har, NULL), 0);
    ASSERT(strstr(p.out, "(rec??steps: []?x, 2026-01-01"));
    hm_flow_file *fl = load(out);
    ASSERT_EQ(fl->flows[0].n_steps, 1);
    hm_flow_free(fl);
    printf("controls in the recorder's name: '?' in the comment\n");
}

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s HAMMER DATA_DIR", argv[0]);
    hammer = argv[1];
    data = argv[2];
    /* A directory of its own, whatever an earlier (failed) run left. */
    snprintf(dir, sizeof(dir), "/tmp/hammer-import-har-XXXXXX");
    ASSERT(mkdtemp(dir));
    snprintf(json_path, sizeof(json_path), "%s/out.json", dir);
    recorded();
    user_signals();
    bad_input();
    actions_without_context();
    pause_of_centuries();
    controls_in_creator();
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}
