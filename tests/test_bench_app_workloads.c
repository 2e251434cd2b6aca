/* bench_app's benchmark workloads, each with its SSE patches:
 * /bench/cpu sets count to the Mandelbrot sum 65451 on every call (and
 * patches every time); /bench/io sleeps 2 ms without blocking the worker:
 * concurrent actions overlap their sleeps (the extra time 50 concurrent
 * ones take over 50 concurrent /bench/counter actions is far less than the
 * extra time 50 sequential ones take over 50 sequential counter actions,
 * all measured here); /bench/spreadsheet runs its viewport query and moves
 * viewRow = focusRow = count % 100, the client's viewRow replacing the
 * server's. argv[1]: the engine backend. */
#include "bench_app_client.h"

static void test_cpu(int port)
{
    static resp r;
    page pg;
    get_route(port, "/bench/cpu", NULL, &pg, &r);
    ASSERT(strstr(r.body, "@post('/_action/increment')"));
    char ev[4096];
    sse *s = sse_open(port, pg.ctx, pg.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    sse_event(s, 1, ev, sizeof(ev));
    json_t *j = signals_of(ev);
    ASSERT_EQ(int_of(j, &pg, "count"), 0);
    json_decref(j);
    conn *c = conn_open(port);
    for (size_t i = 0; i < 2; i++) { /* the value never changes, the patch still comes */
        act(c, "increment", &pg, NULL, &r);
        ASSERT_EQ(sse_wait(s, 3 + i, IO_TIMEOUT_MS), 3 + i);
        sse_event(s, 2 + i, ev, sizeof(ev));
        j = signals_of(ev);
        ASSERT_EQ(int_of(j, &pg, "count"), 65451);
        ASSERT_EQ(json_object_size(j), 1);
        json_decref(j);
    }
    conn_close(c);
    sse_close(s);
    printf("/bench/cpu: 65451 on the 1st and the 2nd call: ok\n");
}

enum { N = 50, ROUNDS = 3 };

/* N actions of pg, one after another on one connection: microseconds. */
static int64_t sequential(int port, const page *pg)
{
    static resp r;
    conn *c = conn_open(port);
    int64_t t0 = hm_now_ns();
    for (int i = 0; i < N; i++)
        act(c, "increment", pg, NULL, &r);
    int64_t us = (hm_now_ns() - t0) / 1000;
    conn_close(c);
    return us;
}

/* N actions of pg at once, one per connection: microseconds from the
 * first send to the last answer. */
static int64_t concurrent(int port, const page *pg)
{
    static resp r;
    static char req[N][1024];
    conn *cs[N];
    size_t len[N];
    for (int i = 0; i < N; i++) {
        cs[i] = conn_open(port);
        char body[256];
        int bl = snprintf(body, sizeof(body), "{\"via_ctx\":\"%s\"}", pg->ctx);
        len[i] =
            (size_t)snprintf(req[i], sizeof(req[i]),
                             "POST /_action/increment HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                             "Content-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s",
                             port, pg->cookie_hdr, bl, body);
    }
    int64_t t0 = hm_now_ns();
    for (int i = 0; i < N; i++)
        send_all(cs[i]->fd, req[i], len[i]);
    for (int i = 0; i < N; i++) {
        read_resp(cs[i], false, &r);
        ASSERT_EQ(r.status, 200);
    }
    int64_t us = (hm_now_ns() - t0) / 1000;
    for (int i = 0; i < N; i++)
        conn_close(cs[i]);
    return us;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static void test_io(int port)
{
    static resp r;
    page io, counter;
    get_route(port, "/bench/io", NULL, &io, &r);
    get_route(port, "/bench/counter", NULL, &counter, &r);
    char ev[4096];
    sse *s = sse_open(port, io.ctx, io.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    size_t seen = 2;
    int64_t seq_io = INT64_MAX, seq_counter = INT64_MAX;
    int64_t conc_io = INT64_MAX, conc_counter = INT64_MAX;
    for (int round = 0; round < ROUNDS; round++) {
        seq_counter = min64(seq_counter, sequential(port, &counter));
        seq_io = min64(seq_io, sequential(port, &io));
        seen += N;
        ASSERT_EQ(sse_wait(s, seen, IO_TIMEOUT_MS), seen); /* the queue holds 50 */
        conc_counter = min64(conc_counter, concurrent(port, &counter));
        conc_io = min64(conc_io, concurrent(port, &io));
        seen += N;
        ASSERT_EQ(sse_wait(s, seen, IO_TIMEOUT_MS), seen);
    }
    /* Every action incremented once, in the order they finished. */
    for (size_t i = 2; i < seen; i++) {
        sse_event(s, i, ev, sizeof(ev));
        json_t *j = signals_of(ev);
        ASSERT_EQ(int_of(j, &io, "count"), (long long)i - 1);
        json_decref(j);
    }
    ASSERT_EQ(sse_wait(s, seen + 1, 100), seen);
    sse_close(s);
    int64_t sleeps_in_series = seq_io - seq_counter, sleeps_overlapped = conc_io - conc_counter;
    printf("/bench/io, %d actions (fastest of %d): sequential %lld us (counter %lld us), "
           "concurrent %lld us (counter %lld us)\n",
           N, ROUNDS, (long long)seq_io, (long long)seq_counter, (long long)conc_io,
           (long long)conc_counter);
    /* In series the 2 ms sleeps add up (N x 2 ms, give or take the noise). */
    ASSERT_GT(sleeps_in_series, N * 2000 / 2);
    /* Overlapped they cost about one sleep; serialized, as much as above. */
    ASSERT_LT(2 * sleeps_overlapped, sleeps_in_series);
    printf("/bench/io: %d concurrent sleeps overlap (%lld us extra vs %lld us in series): ok\n", N,
           (long long)sleeps_overlapped, (long long)sleeps_in_series);
}

static void test_sheet(int port)
{
    enum { K = 105 };
    static resp r;
    page pg;
    get_route(port, "/bench/spreadsheet", NULL, &pg, &r);
    ASSERT(strstr(r.body, "@post('/_action/increment')"));
    char ev[4096];
    sse *s = sse_open(port, pg.ctx, pg.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    sse_event(s, 1, ev, sizeof(ev));
    json_t *j = signals_of(ev);
    ASSERT_EQ(json_object_size(j), 5);
    static const char *const names[] = {"count", "viewRow", "viewCol", "focusRow", "focusCol"};
    for (size_t i = 0; i < HM_ARRAY_LEN(names); i++)
        ASSERT_EQ(int_of(j, &pg, names[i]), 0);
    json_decref(j);

    conn *c = conn_open(port);
    for (int k = 1; k <= K; k++)
        act(c, "increment", &pg, NULL, &r);
    ASSERT_EQ(sse_wait(s, 2 + K, IO_TIMEOUT_MS), 2 + K);
    for (int k = 1; k <= K; k++) {
        sse_event(s, 1 + (size_t)k, ev, sizeof(ev));
        j = signals_of(ev);
        ASSERT_EQ(json_object_size(j), 3); /* the changed ones: count, viewRow, focusRow */
        ASSERT_EQ(int_of(j, &pg, "count"), k);
        ASSERT_EQ(int_of(j, &pg, "viewRow"), k % 100);
        ASSERT_EQ(int_of(j, &pg, "focusRow"), k % 100);
        json_decref(j);
    }
    /* The client's viewRow replaces the server's before the action. */
    char w[160], f[256];
    wire_of(&pg, "viewRow", w, sizeof(w));
    snprintf(f, sizeof(f), ",\"%s\":250", w);
    act(c, "increment", &pg, f, &r);
    ASSERT_EQ(sse_wait(s, 3 + K, IO_TIMEOUT_MS), 3 + K);
    sse_event(s, 2 + K, ev, sizeof(ev));
    j = signals_of(ev);
    ASSERT_EQ(int_of(j, &pg, "count"), K + 1);
    ASSERT_EQ(int_of(j, &pg, "viewRow"), 51);
    ASSERT_EQ(int_of(j, &pg, "focusRow"), 51);
    json_decref(j);
    conn_close(c);
    sse_close(s);
    printf("/bench/spreadsheet: count = k, viewRow = focusRow = k %% 100, client overwrite: "
           "ok\n");
}

int main(int argc, char **argv)
{
    hm_bench_app_options o = ba_test_options(ba_test_begin(argc, argv, true));
    int port;
    pid_t pid = start_server(&o, &port);
    test_cpu(port);
    test_io(port);
    test_sheet(port);
    stop_server(pid);
    return 0;
}
