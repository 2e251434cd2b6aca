/* Every php-via scenario against the embedded bench_app in both load
 * models, browser mode at 1000 VUs, the example plugin, and bad input.
 * argv: HAMMER PLUGIN_SO */
#include "run_util.h"

static const char *hammer, *plugin;
static char json_path[256];

/* These runs check results, not speed: a request (or an SSE stream's
 * headers) slower than hammer's 5 s default on a busy machine is not a
 * failure of what they test. */
#define TIMEOUT "60s"

static json_t *run_ok(char **argv, int timeout_s)
{
    proc p;
    unlink(json_path);
    int rc = proc_run(&p, argv, timeout_s);
    if (rc != 0) fprintf(stderr, "exit %d:\n%s\n", rc, p.out);
    ASSERT_EQ(rc, 0);
    ASSERT(strstr(p.out, "Result            PASS"));
    json_t *j = load_json(json_path);
    ASSERT_EQ(json_int_at(j, "actions.failed"), 0);
    ASSERT_EQ(json_int_at(j, "check.passed"), 1);
    ASSERT_GT(json_int_at(j, "patches.observed"), 0);
    return j;
}

static void scenario_both_modes(const char *name, const char *n)
{
    char *hm[] = {(char *)hammer, "-c",     "50",      "-n",       (char *)n,    "--timeout",
                  TIMEOUT,        "--json", json_path, "scenario", (char *)name, NULL};
    json_t *j = run_ok(hm, 120);
    ASSERT_EQ(json_int_at(j, "actions.ok"), atoi(n));
    json_decref(j);
    char *br[] = {(char *)hammer, "--mode",   "browser",    "-c",    "20",
                  "-n",           (char *)n,  "--timeout",  TIMEOUT, "--json",
                  json_path,      "scenario", (char *)name, NULL};
    j = run_ok(br, 120);
    ASSERT_EQ(json_int_at(j, "actions.ok"), atoi(n));
    json_decref(j);
    printf("%s: hammer and browser modes pass\n", name);
}

static void bad_input(void)
{
    proc p;
    char *a1[] = {(char *)hammer, "scenario", "nope", NULL};
    ASSERT_EQ(proc_run(&p, a1, 10), 2);
    ASSERT(strstr(p.out, "unknown scenario 'nope'"));
    char *a2[] = {(char *)hammer, "--signals", "{bad", "-n", "5", "scenario", "counter", NULL};
    ASSERT_EQ(proc_run(&p, a2, 30), 2);
    ASSERT(strstr(p.out, "--signals is not a JSON object"));
    /* /_health answers 200 but has no meta tag. */
    char *a3[] = {(char *)hammer, "--route", "/_health", "-n", "5", "scenario", "counter", NULL};
    ASSERT_EQ(proc_run(&p, a3, 30), 2);
    ASSERT(strstr(p.out, "no usable <meta data-signals>"));
    char *a4[] = {(char *)hammer, "--action", "missing", "-n", "5", "scenario", "cpu", NULL};
    ASSERT_EQ(proc_run(&p, a4, 30), 2);
    ASSERT(strstr(p.out, "no action named 'missing'"));
    char *a5[] = {(char *)hammer, "--plugin", "/nonexistent.so", "list", NULL};
    ASSERT_EQ(proc_run(&p, a5, 10), 2);
    ASSERT(strstr(p.out, "cannot load plugin"));
    printf("bad input: exit 2 with a reason naming what was missing\n");
}

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s HAMMER PLUGIN", argv[0]);
    hammer = argv[1];
    plugin = argv[2];
    snprintf(json_path, sizeof(json_path), "/tmp/hammer-scen-%d.json", (int)getpid());
    bad_input();
    scenario_both_modes("counter", "2000");
    scenario_both_modes("cpu", "1000");
    scenario_both_modes("io", "2000");
    scenario_both_modes("spreadsheet", "2000");
    scenario_both_modes("spreadsheet-live", "1000");

    /* custom: the counter page named explicitly, as for any php-via app. */
    char *cu[] = {(char *)hammer, "-n",       "1000",   "--route",   "/bench/counter", "--action",
                  "increment",    "--signal", "count",  "--timeout", TIMEOUT,          "--json",
                  json_path,      "scenario", "custom", NULL};
    json_decref(run_ok(cu, 60));
    printf("custom: pass\n");

    /* Browser mode at scale, within the open-file limit. */
    char *big[] = {(char *)hammer, "--mode", "browser", "-c",      "1000",     "-n",      "20000",
                   "--timeout",    TIMEOUT,  "--json",  json_path, "scenario", "counter", NULL};
    json_t *j = run_ok(big, 240);
    ASSERT_EQ(json_int_at(j, "actions.ok"), 20000);
    ASSERT_EQ(json_int_at(j, "patches.observers_connected"), 1000);
    ASSERT_EQ(json_int_at(j, "signal.net_increment"), 20000);
    json_decref(j);
    printf("browser mode -c 1000 -n 20000: pass\n");

    char *pl[] = {(char *)hammer, "--plugin", (char *)plugin, "-c",    "10",
                  "-n",           "200",      "--timeout",    TIMEOUT, "--json",
                  json_path,      "scenario", "double-click", NULL};
    j = run_ok(pl, 60);
    ASSERT_EQ(json_int_at(j, "actions.ok"), 200);
    ASSERT(strstr(json_string_value(json_object_get(json_object_get(j, "check"), "detail")),
                  "tabs lost increments"));
    json_decref(j);
    char *strict[] = {(char *)hammer, "--plugin", (char *)plugin, "--opt",    "strict=1",     "-c",
                      "10",           "-n",       "200",          "scenario", "double-click", NULL};
    proc p;
    /* Double clicks carry stale counts, so the strict check must fail. */
    ASSERT_EQ(proc_run(&p, strict, 60), 1);
    ASSERT(strstr(p.out, "Check             plugin check: FAIL"));
    printf("example plugin: loads, runs, and its check can fail\n");
    unlink(json_path);
    return 0;
}
