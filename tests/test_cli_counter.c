/* hammer end to end against bench_app: the counter scenario on both engines
 * and with one and two threads; a target that is down; a server killed in
 * the middle of a run; usage errors.
 * argv: HAMMER BENCH_APP */
#include "engine/engine.h"
#include "run_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static const char *hammer, *bench_app;
static char json_path[256];

static void check_counter_run(const char *engine, const char *threads)
{
    proc p;
    unlink(json_path);
    /* It checks results, not speed: --timeout well above a busy machine's. */
    char *argv[] = {(char *)hammer,  "-c",       "200",          "-n",        "5000", "-t",
                    (char *)threads, "--engine", (char *)engine, "--timeout", "60s",  "--json",
                    json_path,       "scenario", "counter",      NULL};
    int rc = proc_run(&p, argv, 90);
    if (rc != 0) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 0);
    ASSERT(strstr(p.out, "Actions sent      5000"));
    ASSERT(strstr(p.out, "matches HTTP OK: YES"));
    json_t *j = load_json(json_path);
    ASSERT_EQ(json_int_at(j, "actions.sent"), 5000);
    ASSERT_EQ(json_int_at(j, "actions.ok"), 5000);
    ASSERT_EQ(json_int_at(j, "actions.failed"), 0);
    ASSERT_EQ(json_int_at(j, "signal.net_increment"), 5000);
    ASSERT_EQ(json_int_at(j, "signal.matches_ok"), 1);
    ASSERT_EQ(json_int_at(j, "latency_us.action.count"), 5000);
    ASSERT_GT(json_int_at(j, "patches.observed"), 0);
    ASSERT_STREQ(json_string_value(json_object_get(j, "engine")), engine);
    ASSERT_EQ(json_int_at(j, "threads"), atoi(threads));
    json_decref(j);
    printf("counter -c 200 -n 5000 on %s with %s thread(s): ok\n", engine, threads);
}

static void check_target_down(void)
{
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", free_port());
    char *argv[] = {(char *)hammer, "--url", url, "-n", "10", "scenario", "counter", NULL};
    proc p;
    ASSERT_EQ(proc_run(&p, argv, 30), 2);
    ASSERT(strstr(p.out, "unreachable"));
    printf("target down: exit 2 with \"%.*s\"\n", (int)strcspn(p.out, "\n"), p.out);
}

static void check_server_killed(void)
{
    int port = free_port();
    char port_s[16];
    snprintf(port_s, sizeof(port_s), "%d", port);
    char *app_argv[] = {(char *)bench_app, "--port", port_s, NULL};
    proc app;
    proc_start(&app, app_argv);
    ASSERT(proc_wait_output(&app, "listening"));

    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    unlink(json_path);
    char *argv[] = {(char *)hammer, "--url",     url,         "-c", "20",
                    "-n",           "100000000", "--timeout", "2s", "--json",
                    json_path,      "scenario",  "counter",   NULL};
    proc p;
    proc_start(&p, argv);
    proc_read(&p, 1500); /* let it run */
    kill(app.pid, SIGKILL);
    proc_wait(&app, 10);
    int rc = proc_wait(&p, 120);
    ASSERT_EQ(rc, 1);
    ASSERT(strstr(p.out, "Errors"));
    ASSERT(strstr(p.out, "Result            FAIL"));
    json_t *j = load_json(json_path);
    ASSERT_GT(json_int_at(j, "actions.ok"), 0);
    ASSERT_GT(json_int_at(j, "actions.failed"), 0);
    ASSERT_GT(json_int_at(j, "errors.connect") + json_int_at(j, "errors.reset") +
                  json_int_at(j, "errors.closed"),
              0);
    json_decref(j);
    printf("server killed mid-run: exit 1, errors counted, JSON written\n");
}

static void check_usage_errors(void)
{
    proc p;
    char *a1[] = {(char *)hammer, "scenario", "nope", NULL};
    ASSERT_EQ(proc_run(&p, a1, 10), 2);
    ASSERT(strstr(p.out, "unknown scenario 'nope'"));
    char *a2[] = {(char *)hammer, "-c", "zero", "scenario", "counter", NULL};
    ASSERT_EQ(proc_run(&p, a2, 10), 2);
    char *a3[] = {(char *)hammer, "--signals", "[1,2]", "-n", "5", "scenario", "counter", NULL};
    ASSERT_EQ(proc_run(&p, a3, 30), 2);
    ASSERT(strstr(p.out, "--signals"));
    char *a4[] = {(char *)hammer, "--route", "/nope", "-n", "5", "scenario", "counter", NULL};
    ASSERT_EQ(proc_run(&p, a4, 30), 2);
    ASSERT(strstr(p.out, "404"));
    char *a5[] = {(char *)hammer, "--action", "missing", "-n", "5", "scenario", "counter", NULL};
    ASSERT_EQ(proc_run(&p, a5, 30), 2);
    ASSERT(strstr(p.out, "no action named 'missing'"));
    char *a6[] = {(char *)hammer, "--version", NULL};
    ASSERT_EQ(proc_run(&p, a6, 10), 0);
    ASSERT(strstr(p.out, "io_uring") && strstr(p.out, "epoll"));
    printf("usage errors: exit 2 with a reason\n");
}

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s HAMMER BENCH_APP", argv[0]);
    hammer = argv[1];
    bench_app = argv[2];
    snprintf(json_path, sizeof(json_path), "/tmp/hammer-test-%d.json", (int)getpid());
    check_usage_errors();
    check_target_down();
    const char *why = NULL;
    if (hm_io_uring_probe(&why) == 0) {
        check_counter_run("io_uring", "1");
        check_counter_run("io_uring", "2");
    } else {
        printf("io_uring runs skipped: %s\n", why);
    }
    check_counter_run("epoll", "1");
    check_counter_run("epoll", "2");
    check_server_killed();
    unlink(json_path);
    return 0;
}
