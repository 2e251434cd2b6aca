/* bench_app --workers 4 --dispatch fd (OpenSwoole's dispatch_mode 2):
 * every request on a connection goes to the connection's id (1, 2, ... in
 * accept order) % 4, so actions on the page's own keep-alive connection
 * always reach the context, and an action on a new connection only when
 * that connection's id lands on the same worker. */
#include "bench_app_client.h"

enum { WORKERS = 4 };

int main(int argc, char **argv)
{
    ba_test_begin(argc, argv, false);
    hm_bench_app_options o = ba_test_options(HM_BACKEND_AUTO);
    o.workers = WORKERS;
    o.dispatch = "fd";
    int port;
    pid_t pid = start_server(&o, &port);

    conn *c = conn_open(port); /* the server's first connection: worker 1 */
    ASSERT_EQ(conns_made(port), 1);
    resp r;
    conn_req(c, "GET", "/bench/counter", NULL, NULL, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(via_worker(r.head), 1);
    page pg;
    const char *m = strstr(r.body, "_\\/");
    ASSERT(m && is_hex(m + 3, 16));
    memcpy(pg.hex, m + 3, 16);
    pg.hex[16] = '\0';
    snprintf(pg.ctx, sizeof(pg.ctx), "/bench/counter_/%s", pg.hex);
    const char *v = r.cookie + strlen("via_session_id="), *semi = strchr(v, ';');
    ASSERT(semi);
    copy_str(pg.session, sizeof(pg.session), v, (size_t)(semi - v));
    snprintf(pg.cookie_hdr, sizeof(pg.cookie_hdr), "Cookie: via_session_id=%s\r\n", pg.session);
    for (int i = 0; i < 20; i++) {
        action_on(c, "increment", &pg, NULL, -1, &r);
        ASSERT_EQ(r.status, 200);
        ASSERT_EQ(via_worker(r.head), 1);
    }
    conn_close(c);
    /* New connections 2 to 9: those with id % 4 == 1 (5, 9) reach the context. */
    int ok = 0;
    for (int i = 0; i < 8; i++) {
        action(port, "increment", &pg, NULL, -1, &r);
        int id = conns_made(port);
        ASSERT_EQ(id, 2 + i);
        ASSERT_EQ(via_worker(r.head), id % WORKERS);
        ASSERT_EQ(r.status, id % WORKERS == 1 ? 200 : 400);
        ok += r.status == 200;
    }
    ASSERT_EQ(ok, 2);
    stop_server(pid);
    printf("dispatch fd: the page's keep-alive connection 20/20, new connections by id %% 4: "
           "ok\n");
    return 0;
}
