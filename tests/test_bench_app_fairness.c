/* bench_app serves connections fairly on both engines: the same hammer run
 * (-c 200 -n 2000 scenario spreadsheet, the README's headline command with
 * fewer actions, so a slow start of some connections weighs more) against
 * a bench_app on io_uring and one on epoll, interleaved, ROUNDS rounds
 * each; the io_uring server's median action p99/p50 must stay within
 * FACTOR times the epoll server's. A ratio against a ratio, so the
 * machine's speed cancels out. When io_uring accepted one connection per
 * loop turn, the last of 200 clients waited behind the busy ones for most
 * of the run: p99 was most of the run (ratio 15-30, against 1.2-2 on
 * epoll), and this test failed. On a machine so overloaded that the epoll
 * server's own p99 is many times its median, the comparison can no longer
 * tell (it then passes either way). argv[1]: the hammer executable. Skips
 * (77) where io_uring cannot be used; runs alone (RUN_SERIAL). */
#include "bench_app_client.h"

#define ROUNDS 5
#define ACTIONS "2000"
/* On a quiet 2-vCPU machine the io_uring server's ratio is 3.4-3.6
 * against epoll's 1.05-1.35 (11ad10f and after, 8 runs each): a tail that
 * is its own open question, and 3.0 failed half the runs there. The
 * accept starvation this test exists for gave 15-30. */
#define FACTOR 5.0

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One hammer run against port; the action p99/p50 of its JSON. */
static double run_ratio(const char *hammer, int port, const char *engine, int round)
{
    char url[64], json[512];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    snprintf(json, sizeof(json), "%s/%s.%d.json", g_tmp, engine, round);
    char *argv[] = {(char *)hammer, "-q",     "--url", url,        "-c",          "200", "-n",
                    ACTIONS,        "--json", json,    "scenario", "spreadsheet", NULL};
    pid_t pid = spawn(argv);
    int rc = wait_child(pid, 150000);
    if (rc != 0) HM_FAIL_("hammer against the %s server exited %d", engine, rc);
    json_error_t err;
    json_t *j = json_load_file(json, 0, &err);
    if (!j) HM_FAIL_("%s: %s", json, err.text);
    json_t *a = json_object_get(json_object_get(j, "latency_us"), "action");
    double p50 = (double)json_integer_value(json_object_get(a, "p50"));
    double p99 = (double)json_integer_value(json_object_get(a, "p99"));
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(j, "actions"), "ok")),
              atoi(ACTIONS));
    json_decref(j);
    ASSERT_GT(p50, 0);
    printf("round %d %-8s action p50 %8.0f us  p99 %8.0f us  ratio %.2f\n", round, engine, p50, p99,
           p99 / p50);
    return p99 / p50;
}

int main(int argc, char **argv)
{
    ba_test_begin(argc, argv, false);
    if (argc < 2) HM_FAIL_("usage: test_bench_app_fairness HAMMER");
    const char *why = NULL;
    if (hm_io_uring_probe(&why) < 0) {
        printf("SKIP: io_uring is not available here (%s)\n", why ? why : "?");
        return 77;
    }
    hm_bench_app_options o = ba_test_options(HM_BACKEND_IO_URING);
    int uring_port, epoll_port;
    pid_t uring = start_server(&o, &uring_port);
    o.backend = HM_BACKEND_EPOLL;
    pid_t epoll = start_server(&o, &epoll_port);
    double ru[ROUNDS], re[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        /* The order flips every round, so neither server always runs first. */
        if (i % 2 == 0) {
            ru[i] = run_ratio(argv[1], uring_port, "io_uring", i);
            re[i] = run_ratio(argv[1], epoll_port, "epoll", i);
        } else {
            re[i] = run_ratio(argv[1], epoll_port, "epoll", i);
            ru[i] = run_ratio(argv[1], uring_port, "io_uring", i);
        }
    }
    stop_server(uring);
    stop_server(epoll);
    qsort(ru, ROUNDS, sizeof(double), cmp_double);
    qsort(re, ROUNDS, sizeof(double), cmp_double);
    double mu = ru[ROUNDS / 2], me = re[ROUNDS / 2];
    printf("median p99/p50: io_uring %.2f, epoll %.2f (limit %.1fx)\n", mu, me, FACTOR);
    if (mu > FACTOR * me)
        HM_FAIL_("the io_uring server's action tail (p99/p50 %.2f) is more than %.1f times the "
                 "epoll server's (%.2f): some connections wait behind the others",
                 mu, FACTOR, me);
    printf("io_uring and epoll servers equally fair: ok\n");
    return 0;
}
