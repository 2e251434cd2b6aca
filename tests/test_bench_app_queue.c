/* bench_app's patch queue: 50 events per context (php-via's Channel(50)),
 * a push to a full queue dropping the oldest. A stream that polls (the
 * server's sse_poll_ms) sleeps between reads; 60 actions landing in one
 * sleep leave it the newest 50 patches, in order. The poll interval is
 * sized from how long 60 actions take on this machine (measured first,
 * on a server of its own), so a slow machine gets a longer interval
 * rather than a false failure. argv[1]: the engine backend. */
#include "bench_app_client.h"

enum { ACTIONS = 60, QUEUE = 50 };

/* ACTIONS increments on one keep-alive connection; the time they took. */
static int64_t burst(int port, const page *p)
{
    resp r;
    int64_t t0 = now_ms();
    conn *kc = conn_open(port);
    for (int i = 0; i < ACTIONS; i++) {
        action_on(kc, "increment", p, NULL, -1, &r);
        ASSERT_EQ(r.status, 200);
    }
    conn_close(kc);
    return now_ms() - t0;
}

int main(int argc, char **argv)
{
    hm_backend_kind backend = ba_test_begin(argc, argv, true);

    /* The baseline: the same burst on a server that wakes streams at once. */
    hm_bench_app_options o = ba_test_options(backend);
    int port;
    pid_t pid = start_server(&o, &port);
    page p;
    get_page(port, NULL, &p);
    sse *s = sse_open(port, p.ctx, p.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    int64_t base = burst(port, &p);
    ASSERT_EQ(sse_wait(s, 2 + ACTIONS, IO_TIMEOUT_MS), 2 + ACTIONS); /* nothing dropped */
    sse_close(s);
    stop_server(pid);

    int64_t poll_ms = 20 * base > 1000 ? 20 * base : 1000;
    o.sse_poll_ms = poll_ms;
    pid = start_server(&o, &port);
    printf("%d actions took %lld ms: SSE poll interval %lld ms\n", ACTIONS, (long long)base,
           (long long)poll_ms);
    get_page(port, NULL, &p);
    char wire[128], ev[4096];
    wire_id(&p, wire, sizeof(wire));
    s = sse_open(port, p.ctx, p.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    int64_t synced = now_ms(); /* the stream sleeps its interval from about now */
    sse_event(s, 1, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), 0);
    int64_t took = burst(port, &p);
    if (now_ms() - synced >= poll_ms)
        HM_FAIL_("the burst took %lld ms, the poll interval is %lld ms: the baseline (%lld ms) "
                 "does not hold",
                 (long long)took, (long long)poll_ms, (long long)base);
    ASSERT_EQ(sse_wait(s, 2 + QUEUE, (int)poll_ms + IO_TIMEOUT_MS), 2 + QUEUE);
    for (int i = 0; i < QUEUE; i++) {
        sse_event(s, 2 + (size_t)i, ev, sizeof(ev));
        ASSERT_EQ(signal_in(ev, wire), ACTIONS - QUEUE + 1 + i);
    }
    ASSERT_EQ(sse_wait(s, 3 + QUEUE, 300), 2 + QUEUE);
    sse_close(s);
    stop_server(pid);
    printf("queue of 50 drops the oldest patches: ok\n");
    return 0;
}
