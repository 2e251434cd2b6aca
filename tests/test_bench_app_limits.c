/* bench_app's limits on slow and greedy clients (issue 11): a request's
 * header section must be complete header_timeout_ms after its first byte,
 * however often a byte arrives (the idle timeout restarts on every read);
 * a request whose headers come slowly but in time is served; and a signal
 * value larger than max_signal_bytes (a string's bytes, an array's JSON)
 * answers 413, for actions and for SSE requests, while one at the limit
 * passes. argv[1]: the engine backend. */
#include "bench_app_client.h"

#define IDLE_MS 2000
#define HEADER_MS 1000
#define SIGNAL_MAX 4096

/* Sends the request in pieces of `step` bytes, pause_ms apart (the last
 * piece completes it); returns the response's status. */
static int trickle(int port, const char *req, size_t step, int pause_ms)
{
    int fd = tcp_connect(port);
    size_t n = strlen(req);
    for (size_t off = 0; off < n; off += step) {
        send_all(fd, req + off, n - off < step ? n - off : step);
        if (off + step < n) usleep((useconds_t)pause_ms * 1000);
    }
    char buf[4096];
    ssize_t k = read_until(fd, buf, sizeof(buf) - 1, now_ms() + IO_TIMEOUT_MS);
    fd_close(fd);
    ASSERT_GT(k, 12);
    buf[k] = '\0';
    return atoi(buf + 9);
}

static void header_deadline(int port)
{
    /* One byte every 100 ms of a header section that never ends: the idle
     * timeout alone would keep it forever. */
    int fd = tcp_connect(port);
    static const char start[] = "GET /_health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    send_all(fd, start, sizeof(start) - 1);
    int64_t t0 = now_ms();
    int64_t until = t0 + HEADER_MS + IO_TIMEOUT_MS;
    bool closed = false;
    while (!closed && now_ms() < until) {
        char b[64];
        ssize_t k = read_until(fd, b, sizeof(b), now_ms() + 100);
        if (k == 0 || k == -2) {
            closed = true;
            break;
        }
        ASSERT_EQ(k, -1); /* no answer, only the close */
        if (send(fd, "x", 1, MSG_NOSIGNAL) != 1) closed = true;
    }
    if (!closed)
        HM_FAIL_("a client sending a header byte every 100 ms was still connected after %lld ms "
                 "(header timeout %d ms)",
                 (long long)(now_ms() - t0), HEADER_MS);
    ASSERT_GE(now_ms() - t0, HEADER_MS - 100);
    fd_close(fd);
    printf("a header section trickling in is cut at the header timeout: ok\n");

    /* Slow but in time: three pieces 100 ms apart. */
    static const char req[] = "GET /_health HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n";
    ASSERT_EQ(trickle(port, req, sizeof(req) / 3 + 1, 100), 200);
    printf("a header section that completes in time is served: ok\n");
}

/* {"via_ctx":ctx,"pad":<value>} with a string (or a one-string array) of n bytes. */
static char *body_with(const page *p, size_t n, bool array)
{
    char *b = malloc(n + 256);
    ASSERT(b);
    int k = snprintf(b, 256, "{\"via_ctx\":\"%s\",\"pad\":%s\"", p->ctx, array ? "[" : "");
    memset(b + k, 'x', n);
    snprintf(b + k + n, 8, "\"%s}", array ? "]" : "");
    return b;
}

static void signal_cap(int port)
{
    page p;
    get_page(port, NULL, &p);
    char hdrs[512];
    snprintf(hdrs, sizeof(hdrs), "Content-Type: application/json\r\n%s", p.cookie_hdr);
    resp r;
    char *b = body_with(&p, SIGNAL_MAX, false);
    req1(port, "POST", "/_action/increment", hdrs, b, &r);
    ASSERT_EQ(r.status, 200);
    free(b);
    b = body_with(&p, SIGNAL_MAX + 1, false);
    req1(port, "POST", "/_action/increment", hdrs, b, &r);
    ASSERT_EQ(r.status, 413);
    ASSERT_STREQ(r.body, "Payload Too Large");
    free(b);
    /* An array counts by its JSON: ["x..."] is the string plus 4 bytes. */
    b = body_with(&p, SIGNAL_MAX - 4, true);
    req1(port, "POST", "/_action/increment", hdrs, b, &r);
    ASSERT_EQ(r.status, 200);
    free(b);
    b = body_with(&p, SIGNAL_MAX - 3, true);
    req1(port, "POST", "/_action/increment", hdrs, b, &r);
    ASSERT_EQ(r.status, 413);
    free(b);
    printf("actions: a signal value over the limit answers 413, one at it passes: ok\n");

    /* The SSE request's query carries signals too. */
    static char json[SIGNAL_MAX + 256];
    int k = snprintf(json, sizeof(json), "{\"via_ctx\":\"%s\",\"pad\":\"", p.ctx);
    memset(json + k, 'y', SIGNAL_MAX + 1);
    snprintf(json + k + SIGNAL_MAX + 1, 8, "\"}");
    sse *s = sse_open_query(port, json, p.cookie_hdr);
    sse_read_to_end(s);
    ASSERT_EQ(status_of(s), 413);
    sse_close(s);
    snprintf(json + k + SIGNAL_MAX, 8, "\"}");
    s = sse_open_query(port, json, p.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    ASSERT_EQ(status_of(s), 200);
    char ev[4096], wire[128];
    wire_id(&p, wire, sizeof(wire));
    sse_event(s, 1, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), 2); /* the two actions that passed */
    sse_close(s);
    printf("SSE: the same limit on the query's signals: ok\n");
}

int main(int argc, char **argv)
{
    hm_bench_app_options o = ba_test_options(ba_test_begin(argc, argv, true));
    o.idle_timeout_ms = IDLE_MS;
    o.header_timeout_ms = HEADER_MS;
    o.max_signal_bytes = SIGNAL_MAX;
    int port;
    pid_t pid = start_server(&o, &port);
    header_deadline(port);
    signal_cap(port);
    stop_server(pid);

    /* The defaults: 10 s for headers, 64 KiB per signal value. */
    hm_bench_app_options d;
    hm_bench_app_defaults(&d);
    ASSERT_EQ(d.header_timeout_ms, 10000);
    ASSERT_EQ(d.max_signal_bytes, 0); /* 0 = 64 KiB */
    o = ba_test_options(o.backend);
    pid = start_server(&o, &port);
    page p;
    get_page(port, NULL, &p);
    char hdrs[512];
    snprintf(hdrs, sizeof(hdrs), "Content-Type: application/json\r\n%s", p.cookie_hdr);
    resp r;
    char *b = body_with(&p, 64 << 10, false);
    req1(port, "POST", "/_action/increment", hdrs, b, &r);
    ASSERT_EQ(r.status, 200);
    free(b);
    b = body_with(&p, (64 << 10) + 1, false);
    req1(port, "POST", "/_action/increment", hdrs, b, &r);
    ASSERT_EQ(r.status, 413);
    free(b);
    stop_server(pid);
    printf("default signal limit 64 KiB: ok\n");
    return 0;
}
