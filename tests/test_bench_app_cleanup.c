/* bench_app context cleanup (cleanup_delay_ms 200 here): after a context's
 * last SSE stream ends (noticed at the stream's next write, as in php-via:
 * until then the context and its stream stay), and after POST
 * /_session/close, the context lives
 * on for the delay and then goes (actions answer 400 Invalid context,
 * /_health counts it no more); a close while a stream is open waits for the
 * stream; closing an unknown context answers 200 all the same; GET
 * /_session/close is no route. A context whose page never opened SSE stays.
 * argv[1]: the engine backend. */
#include "bench_app_client.h"

#define DELAY_MS 200

/* An action on p after its cleanup was scheduled (at t0 or later): 200
 * while the delay has not passed. A machine slow enough to let the delay pass
 * first says so instead of failing. */
static void still_there(int port, const page *p, int64_t t0)
{
    resp r;
    action(port, "increment", p, NULL, -1, &r);
    if (now_ms() - t0 < DELAY_MS)
        ASSERT_EQ(r.status, 200);
    else
        printf("(the action came %lld ms after the close: not checked)\n",
               (long long)(now_ms() - t0));
}

/* Waits until /_health counts `contexts`, then p's actions answer 400. */
static void gone(int port, const page *p, long long contexts)
{
    wait_health_count(port, "contexts", contexts);
    resp r;
    action(port, "increment", p, NULL, -1, &r);
    ASSERT_EQ(r.status, 400);
    ASSERT_STREQ(r.body, "Invalid context");
}

int main(int argc, char **argv)
{
    hm_bench_app_options o = ba_test_options(ba_test_begin(argc, argv, true));
    o.cleanup_delay_ms = DELAY_MS;
    int port;
    pid_t pid = start_server(&o, &port);
    page keep, a, b, c;
    get_page(port, NULL, &keep); /* never opens SSE: stays */
    get_page(port, NULL, &a);
    get_page(port, a.cookie_hdr, &b);
    get_page(port, a.cookie_hdr, &c);

    /* The last stream of a ends: cleanup a delay later. As in php-via, a
     * stream whose client went away ends at its next write, so a context
     * stays (and /_health counts its stream) until a patch comes. */
    sse *s1 = sse_open(port, a.ctx, a.cookie_hdr);
    ASSERT_EQ(sse_wait(s1, 2, IO_TIMEOUT_MS), 2);
    sse *s2 = sse_open(port, a.ctx, a.cookie_hdr);
    ASSERT_EQ(sse_wait(s2, 1, IO_TIMEOUT_MS), 1);
    sse_close(s1);
    usleep(2 * DELAY_MS * 1000);
    ASSERT_EQ(health_count(port, "sse"), 2);         /* nothing written since: not noticed */
    notice_closed_streams(port, &a, "increment", 1); /* s2 still open: no cleanup */
    usleep(2 * DELAY_MS * 1000);
    resp r;
    action(port, "increment", &a, NULL, -1, &r);
    ASSERT_EQ(r.status, 200);
    sse_close(s2);
    usleep(2 * DELAY_MS * 1000);
    ASSERT_EQ(health_count(port, "sse"), 1);
    int64_t t0 = now_ms(); /* no later than the server schedules the cleanup */
    action(port, "increment", &a, NULL, -1, &r); /* its patch finds s2 gone */
    ASSERT_EQ(r.status, 200);
    notice_closed_streams(port, &a, "increment", 0);
    still_there(port, &a, t0);
    gone(port, &a, 3);
    printf("cleanup after the last SSE stream ends (noticed at its next write): ok\n");

    /* /_session/close: the same delay. */
    t0 = now_ms();
    req1(port, "POST", "/_session/close", NULL, b.ctx, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(r.body_len, 0);
    still_there(port, &b, t0);
    gone(port, &b, 2);
    req1(port, "POST", "/_session/close", NULL, "/bench/counter_/nothing", &r);
    ASSERT_EQ(r.status, 200);
    req1(port, "GET", "/_session/close", NULL, NULL, &r);
    ASSERT_EQ(r.status, 404);
    printf("/_session/close: ok\n");

    /* Deferred while an SSE stream is open. */
    sse *s = sse_open(port, c.ctx, c.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    req1(port, "POST", "/_session/close", NULL, c.ctx, &r);
    ASSERT_EQ(r.status, 200);
    usleep(2 * DELAY_MS * 1000);
    action(port, "increment", &c, NULL, -1, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(sse_wait(s, 3, IO_TIMEOUT_MS), 3);
    sse_close(s);
    notice_closed_streams(port, &c, "increment", 0);
    gone(port, &c, 1);
    printf("/_session/close deferred while SSE is open: ok\n");

    action(port, "increment", &keep, NULL, -1, &r); /* never streamed: still there */
    ASSERT_EQ(r.status, 200);
    stop_server(pid);
    return 0;
}
