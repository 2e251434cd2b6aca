/* bench_app --workers 4 --dispatch session (php-via's dispatch_func): a
 * request with a via_session_id cookie goes to worker crc32(id) % 4, the
 * page and every action of that session alike; __Host-via_session_id wins
 * over via_session_id wherever it stands; a request without one goes to
 * its connection's id % 4. /_health answers with the answering worker's
 * own counts and lists all four. An SSE stream through the reactor carries
 * its worker's patches, and its end reaches the worker (stream count,
 * cleanup). Every X-Via-Worker is the worker the rule predicts. */
#include "bench_app_client.h"

enum { WORKERS = 4 };

static void expect_worker(const resp *r, int want)
{
    if (via_worker(r->head) != want)
        HM_FAIL_("X-Via-Worker %d, dispatch says %d:\n%s", via_worker(r->head), want, r->head);
}

int main(int argc, char **argv)
{
    ba_test_begin(argc, argv, false);
    hm_bench_app_options o = ba_test_options(HM_BACKEND_AUTO);
    o.workers = WORKERS;
    o.dispatch = "session";
    int port;
    pid_t pid = start_server(&o, &port);

    /* No cookie: the connection's id % 4 (this test is the only client). */
    page pg;
    resp r;
    for (int i = 0; i < 3; i++) {
        get_route(port, "/bench/counter", NULL, &pg, &r);
        expect_worker(&r, conns_made(port) % WORKERS);
    }
    ASSERT_EQ(conns_made(port), 3);

    /* A chosen session id for each worker: the page and all its actions
     * (each on a new connection) reach worker crc32(id) % 4. */
    page owned[WORKERS];
    for (int w = 0; w < WORKERS; w++) {
        char sid[40], cookie[128];
        session_for_worker(w, WORKERS, 0xabc0, sid, sizeof(sid));
        snprintf(cookie, sizeof(cookie), "Cookie: via_session_id=%s\r\n", sid);
        get_route(port, "/bench/counter", cookie, &owned[w], &r);
        ASSERT_STREQ(owned[w].session, sid);
        expect_worker(&r, w);
        for (int i = 0; i < 5; i++) {
            action(port, "increment", &owned[w], NULL, -1, &r);
            ASSERT_EQ(r.status, 200);
            expect_worker(&r, w);
        }
    }
    /* __Host-via_session_id wins over via_session_id, wherever it is. */
    char both[512];
    snprintf(both, sizeof(both), "Cookie: via_session_id=%s; __Host-via_session_id=%s\r\n",
             owned[0].session, owned[3].session);
    req1(port, "GET", "/nope", both, NULL, &r);
    ASSERT_EQ(r.status, 404);
    expect_worker(&r, 3);
    printf("dispatch session: cookie -> worker crc32(id) %% 4, no cookie -> connection %% 4, "
           "__Host- first: ok\n");

    /* /_health: the answering worker's own counts, and all four. */
    int hw;
    json_t *h = health_with(port, owned[2].cookie_hdr, &hw);
    ASSERT_EQ(hw, 2);
    ASSERT_EQ(json_array_size(json_object_get(h, "workers")), WORKERS);
    for (int i = 0; i < WORKERS; i++) {
        /* Its own page, and the page of connection i if there was one. */
        ASSERT_EQ(worker_count(h, i, "contexts"), 1 + (i >= 1 && i <= 3));
        ASSERT_GE(worker_count(h, i, "requests"), 6);
    }
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(h, "connections"), "contexts")),
              worker_count(h, 2, "contexts"));
    json_decref(h);
    printf("/_health: the answering worker's counts, all four workers: ok\n");

    /* SSE through the reactor: streamed patches, and the client's close
     * reaches the worker (its stream count drops at the next patch, its
     * cleanup runs). */
    page *p1 = &owned[1];
    char wire[128], ev[4096];
    wire_id(p1, wire, sizeof(wire));
    sse *s = sse_open(port, p1->ctx, p1->cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    ASSERT_EQ(status_of(s), 200);
    ASSERT_EQ(via_worker(s->head), 1);
    sse_event(s, 1, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), 5);
    conn *kc = conn_open(port);
    for (int i = 0; i < 3; i++) {
        action_on(kc, "increment", p1, NULL, -1, &r);
        ASSERT_EQ(r.status, 200);
        expect_worker(&r, 1);
        ASSERT_EQ(sse_wait(s, 3 + (size_t)i, IO_TIMEOUT_MS), 3 + (size_t)i);
        sse_event(s, 2 + (size_t)i, ev, sizeof(ev));
        ASSERT_EQ(signal_in(ev, wire), 6 + i);
    }
    conn_close(kc);
    h = health_with(port, p1->cookie_hdr, &hw);
    ASSERT_EQ(hw, 1);
    ASSERT_EQ(worker_count(h, 1, "sse"), 1);
    json_decref(h);
    /* As in php-via, the worker notices the stream's end at its next write:
     * patches until the stream count drops. */
    sse_close(s);
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    for (;;) {
        h = health_with(port, NULL, &hw);
        ASSERT_EQ(hw, conns_made(port) % WORKERS);
        long long n = worker_count(h, 1, "sse");
        json_decref(h);
        if (n == 0) break;
        ASSERT_LT(now_ms(), until);
        action(port, "increment", p1, NULL, -1, &r);
        ASSERT_EQ(r.status, 200);
        usleep(10000);
    }
    until = now_ms() + IO_TIMEOUT_MS; /* cleanup_delay_ms later, the context goes */
    for (;;) {
        action(port, "increment", p1, NULL, -1, &r);
        expect_worker(&r, 1);
        if (r.status == 400) break;
        ASSERT_EQ(r.status, 200);
        ASSERT_LT(now_ms(), until);
        usleep(20000);
    }
    printf("SSE through the reactor, its end reaching the worker: ok\n");
    stop_server(pid);
    return 0;
}
