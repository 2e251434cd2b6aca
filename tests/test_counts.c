/* The count lines of the summary against the embedded bench_app: every pair
 * of counts that can differ either agrees or says why on the same line, and
 * the JSON holds the counts apart.
 * argv: HAMMER DATA_DIR (tests/data, its HAR recordings) */
#include "run_util.h"

static const char *hammer, *data_dir;
static char json_path[256], flow_path[256];

/* The summary line that starts with `name`, NUL-terminated in buf. */
static const char *line_of(const char *out, const char *name, char *buf, size_t cap)
{
    const char *l = strstr(out, name);
    if (!l) HM_FAIL_("no '%s' line in:\n%s", name, out);
    size_t n = strcspn(l, "\n");
    if (n >= cap) n = cap - 1;
    memcpy(buf, l, n);
    buf[n] = 0;
    return buf;
}

/* Connections: requested and established agree, or the line says why. */
static void check_connections_line(const char *out, json_t *j)
{
    char l[512];
    line_of(out, "Connections ", l, sizeof(l));
    long long req = json_int_at(j, "connections.requested");
    long long est = json_int_at(j, "connections.established");
    long long rec = json_int_at(j, "connections.reconnects");
    if (est - rec != req && !strstr(l, "established ("))
        HM_FAIL_("%lld requested, %lld established, %lld reconnects, and no reason: %s", req, est,
                 rec, l);
    printf("  %s\n", l);
}

/* --think is refused in the hammer model, as -m is, naming --mode browser. */
static void check_think_refused(void)
{
    proc p;
    char *argv[] = {(char *)hammer, "-n", "5", "--think", "100ms", "scenario", "counter", NULL};
    ASSERT_EQ(proc_run(&p, argv, 60), 2);
    ASSERT(strstr(p.out, "--think"));
    ASSERT(strstr(p.out, "--mode browser"));
    char *get[] = {(char *)hammer, "--url", "http://127.0.0.1:1/", "--think", "1s", "scenario",
                   "get",          NULL};
    ASSERT_EQ(proc_run(&p, get, 60), 2);
    ASSERT(strstr(p.out, "--think applies to --mode browser, not get"));
    printf("--think without --mode browser: exit 2, %.*s\n", (int)strcspn(p.out, "\n"), p.out);
}

/* The hammer model: one more connection than requested (the set-up page
 * load), said on the line. */
static void check_hammer_model(void)
{
    proc p;
    unlink(json_path);
    char *argv[] = {(char *)hammer, "-c",     "20",      "-n",       "400",     "--timeout",
                    "60s",          "--json", json_path, "scenario", "counter", NULL};
    int rc = proc_run(&p, argv, 120);
    if (rc != 0) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 0);
    json_t *j = load_json(json_path);
    printf("hammer model:\n");
    check_connections_line(p.out, j);
    ASSERT_EQ(json_int_at(j, "patches.observed"), json_int_at(j, "actions.ok"));
    ASSERT_EQ(json_int_at(j, "disruption.connect_failures"), 0);
    json_decref(j);
}

/* A recorded flow without a check: its streams' opening events are not
 * patches, so patches match the OK actions and the rest is said apart. */
static void check_flow(const char *mode, const char *what)
{
    proc p;
    unlink(json_path);
    char *argv[] = {(char *)hammer, "--mode", (char *)mode, "-c",      "10",   "-n",      "60",
                    "--timeout",    "60s",    "--json",     json_path, "flow", flow_path, NULL};
    int rc = proc_run(&p, argv, 240);
    if (rc != 0) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 0);
    json_t *j = load_json(json_path);
    long long ok = json_int_at(j, "actions.ok");
    long long observed = json_int_at(j, "patches.observed");
    long long opening = json_int_at(j, "patches.opening");
    printf("%s flow %s: %lld OK, %lld patches, %lld opening events\n", mode, what, ok, observed,
           opening);
    ASSERT_GT(ok, 0);
    ASSERT(observed <= ok);
    ASSERT_GT(opening, 0);
    char l[512];
    line_of(p.out, "Patches observed ", l, sizeof(l));
    ASSERT(strstr(l, "on opening streams"));
    printf("  %s\n", l);
    /* Every stream that delivered counts as opened; more streams than
     * observers (a VU's new pages) are said on the line. */
    long long opened = json_int_at(j, "sse.opened");
    long long connected = json_int_at(j, "patches.observers_connected");
    ASSERT(opened >= connected);
    line_of(p.out, "SSE streams ", l, sizeof(l));
    if (opened > connected) ASSERT(strstr(l, "more than the observers"));
    printf("  %s\n", l);
    check_connections_line(p.out, j);
    json_decref(j);
}

/* `hammer import-har` of tests/data/NAME into flow_path. */
static void import_har(const char *name)
{
    proc p;
    char har[512];
    snprintf(har, sizeof(har), "%s/%s", data_dir, name);
    char *imp[] = {(char *)hammer, "import-har", har, NULL};
    ASSERT_EQ(proc_run(&p, imp, 60), 0);
    const char *yaml = strstr(p.out, "name:");
    ASSERT(yaml);
    /* stderr notes come after the YAML on the same pipe: keep the YAML. */
    const char *end = strstr(yaml, "\nhammer import-har:");
    write_file(flow_path, "%.*s", (int)(end ? end - yaml + 1 : (long)strlen(yaml)), yaml);
}

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s HAMMER DATA_DIR", argv[0]);
    hammer = argv[1];
    data_dir = argv[2];
    snprintf(json_path, sizeof(json_path), "/tmp/hammer-counts-%d.json", (int)getpid());
    snprintf(flow_path, sizeof(flow_path), "/tmp/hammer-counts-%d.yaml", (int)getpid());
    check_think_refused();
    check_hammer_model();
    import_har("phpvia-bench.har");
    check_flow("browser", "imported from phpvia-bench.har");
    /* The hammer model runs no page after the first action: a flow of one. */
    write_file(flow_path, "%s",
               "steps: [{page: /bench/counter}, {sse: open}, {action: increment}]\n");
    check_flow("hammer", "of one page without a check");
    unlink(json_path);
    unlink(flow_path);
    return 0;
}
