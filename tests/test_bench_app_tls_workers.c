/* bench_app over HTTPS with --workers 2 --dispatch session: TLS ends at
 * the reactor (the links to the workers stay plain), the cookie still
 * picks the worker, SSE streams through it and their ends reach the
 * workers; resumption, misbehaving clients and the reactor's own HTTP
 * answers all work through TLS. */
#include "bench_app_client.h"

enum { WORKERS = 2 };

int main(int argc, char **argv)
{
    hm_bench_app_options o = ba_test_options(ba_test_begin(argc, argv, false));
    make_pki();
    o.tls_cert = g_cert;
    o.tls_key = g_key;
    o.workers = WORKERS;
    o.dispatch = "session";
    int port;
    pid_t pid = start_server(&o, &port);
    g_tls = client_ctx(0, NULL, 0, false);
    char wire[128], ev[4096];
    page pages[WORKERS];
    for (int w = 0; w < WORKERS; w++) {
        char sid[40], cookie[128];
        session_for_worker(w, WORKERS, 0x7150, sid, sizeof(sid));
        snprintf(cookie, sizeof(cookie), "Cookie: via_session_id=%s\r\n", sid);
        page pg;
        resp r;
        get_route(port, "/bench/counter", cookie, &pg, &r);
        ASSERT_STREQ(pg.session, sid);
        ASSERT_EQ(via_worker(r.head), w);
        action(port, "increment", &pg, NULL, -1, &r);
        ASSERT_EQ(r.status, 200);
        ASSERT_EQ(via_worker(r.head), w);
        sse *s = sse_open(port, pg.ctx, pg.cookie_hdr);
        ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
        ASSERT_EQ(via_worker(s->head), w);
        wire_id(&pg, wire, sizeof(wire));
        sse_event(s, 1, ev, sizeof(ev));
        ASSERT_EQ(signal_in(ev, wire), 1);
        action(port, "increment", &pg, NULL, -1, &r);
        ASSERT_EQ(r.status, 200);
        ASSERT_EQ(sse_wait(s, 3, IO_TIMEOUT_MS), 3);
        sse_event(s, 2, ev, sizeof(ev));
        ASSERT_EQ(signal_in(ev, wire), 2);
        sse_close(s);
        pages[w] = pg;
    }
    /* Both streams' ends reach the workers, noticed at their next patch. */
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    for (;;) {
        int hw;
        json_t *h = health_with(port, NULL, &hw);
        ASSERT_EQ(hw, conns_made(port) % WORKERS); /* no cookie: as fd */
        long long open = worker_count(h, 0, "sse") + worker_count(h, 1, "sse");
        json_decref(h);
        if (open == 0) break;
        ASSERT_LT(now_ms(), until);
        for (int w = 0; w < WORKERS; w++) {
            resp r;
            action(port, "increment", &pages[w], NULL, -1, &r);
            ASSERT_EQ(r.status, 200);
        }
        usleep(10000);
    }
    printf("TLS --workers 2: cookie dispatch, SSE through the reactor: ok\n");
    check_tls_resume(port, 0, false);
    check_tls_bad_clients(port);
    check_http_framing(port, WORKERS); /* the reactor's own answers, through TLS */
    stop_server(pid);
    SSL_CTX_free(g_tls);
    g_tls = NULL;
    printf("TLS --workers 2: resumption, bad clients, framing at the reactor: ok\n");
    return 0;
}
