/* bench_app --workers 4 --dispatch stream (what php-via's dispatch_mode 7
 * really does): each request goes to the least busy worker, ties taken in
 * turn, whatever its cookie or connection. With one request at a time
 * every worker is free, so request k (from 0) goes to worker k % 4: the
 * page's context lives on one worker, and of the actions that follow only
 * those that land there succeed (the others: 400 Invalid context), on
 * fresh connections and on one keep-alive connection alike. */
#include "bench_app_client.h"

enum { WORKERS = 4 };

int main(int argc, char **argv)
{
    ba_test_begin(argc, argv, false);
    hm_bench_app_options o = ba_test_options(HM_BACKEND_AUTO);
    o.workers = WORKERS;
    o.dispatch = "stream";
    int port;
    pid_t pid = start_server(&o, &port);
    int requests = 0; /* forwarded so far; the next goes to requests % 4 */

    page pg;
    resp r;
    get_route(port, "/bench/counter", "Cookie: via_session_id=0123456789abcdef0123456789abcdef\r\n",
              &pg, &r);
    int owner = via_worker(r.head);
    ASSERT_EQ(owner, requests++ % WORKERS);
    int per[WORKERS] = {0}, ok = 0;
    for (int i = 0; i < 40; i++) {
        action(port, "increment", &pg, NULL, -1, &r);
        int w = via_worker(r.head);
        ASSERT_EQ(w, requests++ % WORKERS);
        per[w]++;
        if (w == owner) {
            ASSERT_EQ(r.status, 200);
            ok++;
        } else {
            ASSERT_EQ(r.status, 400);
            ASSERT_STREQ(r.body, "Invalid context");
        }
    }
    for (int w = 0; w < WORKERS; w++)
        ASSERT_EQ(per[w], 10);
    ASSERT_EQ(ok, 10);
    /* The same on one keep-alive connection: the connection does not count. */
    conn *c = conn_open(port);
    for (int i = 0; i < 8; i++) {
        action_on(c, "increment", &pg, NULL, -1, &r);
        int w = via_worker(r.head);
        ASSERT_EQ(w, requests++ % WORKERS);
        ASSERT_EQ(r.status, w == owner ? 200 : 400);
    }
    conn_close(c);
    int hw;
    json_t *h = health_with(port, NULL, &hw);
    ASSERT_EQ(hw, requests++ % WORKERS);
    ASSERT_EQ(json_array_size(json_object_get(h, "workers")), WORKERS);
    json_decref(h);
    stop_server(pid);
    printf("dispatch stream: request k to worker k %% 4, 10/40 reach the owner, the rest get "
           "400 Invalid context: ok\n");
    return 0;
}
