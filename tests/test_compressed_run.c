/* hammer against bench_app --brotli: browser mode asks for compression by
 * default and passes, with the compressed bytes (fewer) and what they
 * decoded to (more) in the summary and the JSON; --no-compressed gets
 * plain bodies; hammer mode asks only with --compressed, and then passes
 * too (its SSE observer decodes every event as it arrives); get decodes
 * the page it discards.
 * argv: HAMMER BENCH_APP */
#include "run_util.h"

static const char *hammer;
static char json_path[256];

static json_t *run(const char *url, char *const extra[], int n_extra)
{
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)hammer;
    argv[n++] = "--url";
    argv[n++] = (char *)url;
    argv[n++] = "--no-server-watch";
    argv[n++] = "--timeout";
    argv[n++] = "10s";
    argv[n++] = "--json";
    argv[n++] = json_path;
    for (int i = 0; i < n_extra; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    unlink(json_path);
    proc p;
    int rc = proc_run(&p, argv, 120);
    if (rc != 0) HM_FAIL_("exit %d:\n%s", rc, p.out);
    bool says = strstr(p.out, "Compression       ") != NULL;
    json_t *j = load_json(json_path);
    ASSERT_EQ(says, json_int_at(j, "bytes.compressed") > 0);
    return j;
}

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s HAMMER BENCH_APP", argv[0]);
    hammer = argv[1];
    snprintf(json_path, sizeof(json_path), "/tmp/hammer-compressed-%d.json", (int)getpid());
    int port = free_port();
    char port_s[16], url[64];
    snprintf(port_s, sizeof(port_s), "%d", port);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    char *app_argv[] = {argv[2], "--port", port_s, "--brotli", NULL};
    proc app;
    proc_start(&app, app_argv);
    ASSERT(proc_wait_output(&app, "listening"));

    char *browser[] = {"--mode", "browser", "-c", "5", "-n", "300", "scenario", "counter"};
    json_t *j = run(url, browser, 8);
    long long wire = json_int_at(j, "bytes.compressed"),
              decoded = json_int_at(j, "bytes.decompressed");
    ASSERT_GT(wire, 0);
    ASSERT_LT(wire, decoded);
    ASSERT_LT(wire, json_int_at(j, "bytes.read")); /* part of what was read */
    ASSERT_EQ(json_int_at(j, "options.compressed"), 1);
    ASSERT_EQ(json_int_at(j, "check.passed"), 1);
    ASSERT_EQ(json_int_at(j, "patches.observed"), json_int_at(j, "actions.ok"));
    json_decref(j);
    printf("browser mode: %lld compressed bytes decoded to %lld, check passed\n", wire, decoded);

    char *plain[] = {"--mode", "browser", "--no-compressed", "-c",     "5",
                     "-n",     "300",     "scenario",        "counter"};
    j = run(url, plain, 9);
    ASSERT_EQ(json_int_at(j, "bytes.compressed"), 0);
    ASSERT_EQ(json_int_at(j, "options.compressed"), 0);
    ASSERT_EQ(json_int_at(j, "check.passed"), 1);
    json_decref(j);

    char *hm[] = {"-c", "10", "-n", "500", "scenario", "counter"};
    j = run(url, hm, 6);
    ASSERT_EQ(json_int_at(j, "bytes.compressed"), 0);
    ASSERT_EQ(json_int_at(j, "options.compressed"), 0);
    json_decref(j);
    char *hmc[] = {"--compressed", "-c", "10", "-n", "500", "scenario", "counter"};
    j = run(url, hmc, 7);
    ASSERT_GT(json_int_at(j, "bytes.compressed"), 0);
    ASSERT_LT(json_int_at(j, "bytes.compressed"), json_int_at(j, "bytes.decompressed"));
    ASSERT_EQ(json_int_at(j, "check.passed"), 1);
    json_decref(j);
    printf("hammer mode: plain by default, compressed with --compressed, check passed\n");

    char page[96];
    snprintf(page, sizeof(page), "%s/bench/counter", url);
    char *get[] = {"--compressed", "-c", "2", "-n", "20", "scenario", "get"};
    j = run(page, get, 7);
    ASSERT_GT(json_int_at(j, "bytes.compressed"), 0);
    ASSERT_LT(json_int_at(j, "bytes.compressed"), json_int_at(j, "bytes.decompressed"));
    ASSERT_EQ(json_int_at(j, "actions.ok"), 20);
    json_decref(j);
    printf("get --compressed: pages decoded as they are discarded\n");

    kill(app.pid, SIGTERM);
    proc_wait(&app, 30);
    unlink(json_path);
    return 0;
}
