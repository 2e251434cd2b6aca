/* The bench_app executable's --processes 2: two independent servers on
 * ports P and P+1 (X-Via-Worker 0 and 1, each knowing only its own
 * contexts, each listing one worker in /_health), both stopped by one
 * SIGTERM (exit 0, both ports closed); --port 0 with --processes is
 * refused (exit 2). argv[1]: the bench_app executable. */
#include "bench_app_client.h"

int main(int argc, char **argv)
{
    ba_test_begin(argc, argv, false);
    if (argc < 2) HM_FAIL_("usage: %s BENCH_APP", argv[0]);
    const char *exe = argv[1];
    char *bad[] = {(char *)exe, "--port", "0", "--processes", "2", "--quiet", NULL};
    ASSERT_EQ(wait_child(spawn(bad), 5000), 2);

    int base = free_port_pair();
    char port_s[16];
    snprintf(port_s, sizeof(port_s), "%d", base);
    char *args[] = {(char *)exe, "--port", port_s, "--processes", "2", "--quiet", NULL};
    pid_t pid = spawn(args);
    wait_ports(base, 2);
    for (int i = 0; i < 2; i++) {
        page pg;
        resp r;
        get_route(base + i, "/bench/counter", NULL, &pg, &r);
        ASSERT_EQ(via_worker(r.head), i);
        action(base + i, "increment", &pg, NULL, -1, &r);
        ASSERT_EQ(r.status, 200);
        ASSERT_EQ(via_worker(r.head), i);
        /* Independent servers: the other one does not know the context. */
        action(base + 1 - i, "increment", &pg, NULL, -1, &r);
        ASSERT_EQ(r.status, 400);
        ASSERT_EQ(via_worker(r.head), 1 - i);
        int hw;
        json_t *h = health_with(base + i, NULL, &hw);
        ASSERT_EQ(hw, i);
        ASSERT_EQ(json_array_size(json_object_get(h, "workers")), 1);
        json_decref(h);
    }
    stop_server(pid);
    ASSERT(!port_open(base) && !port_open(base + 1));
    printf("--processes 2: X-Via-Worker 0 and 1 on two ports, SIGTERM stops both, exit 0; "
           "--port 0 refused: ok\n");
    return 0;
}
