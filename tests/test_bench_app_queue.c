/* bench_app's patch delivery and its queue of 50 events per context
 * (php-via's Channel(50)), as they behave on OpenSwoole:
 *
 *   - by default a patch goes to the waiting SSE stream the moment it is
 *     queued: 100 connections each firing an action at once, ten times
 *     over, give the observer exactly one patch per action, in order;
 *   - only a stream whose writer is blocked (its client stopped reading)
 *     leaves patches in the queue, which then drops the oldest: once the
 *     client reads again it gets everything up to the block, then the
 *     newest events, the last action's among them;
 *   - with --sse-poll-ms the stream sleeps between reads, so 60 actions
 *     landing in one sleep leave it the newest 50 patches, in order (the
 *     interval is sized from how long 60 actions take on this machine,
 *     measured first, so a slow machine gets a longer interval rather than
 *     a false failure).
 *
 * argv[1]: the engine backend. */
#include "bench_app_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

enum { ACTIONS = 60, QUEUE = 50, CONNS = 100, ROUNDS = 10 };

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

/* CONNS connections send an action each before any answer is read, ROUNDS
 * times: every action must come back as its own patch. */
static void one_patch_per_action(int port)
{
    page p;
    get_page(port, NULL, &p);
    char wire[128], ev[4096];
    wire_id(&p, wire, sizeof(wire));
    sse *s = sse_open(port, p.ctx, p.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    char body[256], req[1024];
    snprintf(body, sizeof(body), "{\"via_ctx\":\"%s\"}", p.ctx);
    int rl = snprintf(req, sizeof(req),
                      "POST /_action/increment HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                      "Content-Type: application/json\r\n%sContent-Length: %zu\r\n\r\n%s",
                      port, p.cookie_hdr, strlen(body), body);
    static conn *cs[CONNS];
    for (int i = 0; i < CONNS; i++)
        cs[i] = conn_open(port);
    resp r;
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < CONNS; i++)
            send_all(cs[i]->fd, req, (size_t)rl);
        for (int i = 0; i < CONNS; i++) {
            read_resp(cs[i], false, &r);
            ASSERT_EQ(r.status, 200);
        }
    }
    for (int i = 0; i < CONNS; i++)
        conn_close(cs[i]);
    size_t want = 2 + CONNS * ROUNDS;
    ASSERT_EQ(sse_wait(s, want, IO_TIMEOUT_MS), want);
    for (size_t i = 2; i < want; i++) {
        sse_event(s, i, ev, sizeof(ev));
        ASSERT_EQ(signal_in(ev, wire), (long long)(i - 1));
    }
    ASSERT_EQ(sse_wait(s, want + 1, 200), want);
    sse_close(s);
    notice_closed_streams(port, &p, "increment", 0);
    printf("%d connections x %d rounds: one patch per action, in order: ok\n", CONNS, ROUNDS);
}

/* The counts of /examples/spreadsheet's signals patches in raw stream
 * bytes, in order (each event is one chunk, so its text is contiguous). */
static size_t counts_in(const char *raw, size_t n, const char *wire, long long *out, size_t cap)
{
    size_t k = 0, wl = strlen(wire);
    for (const char *p = raw; p < raw + n && k < cap;) {
        const char *hit = memmem(p, (size_t)(raw + n - p), wire, wl);
        if (!hit) break;
        p = hit + wl;
        if (p + 2 < raw + n && p[0] == '"' && p[1] == ':') out[k++] = atoll(p + 2);
    }
    return k;
}

static void blocked_writer(int port)
{
    page p;
    resp r;
    get_route(port, "/examples/spreadsheet", NULL, &p, &r);
    char count[160], dir[160], fields[256];
    wire_of(&p, "count", count, sizeof(count));
    wire_of(&p, "direction", dir, sizeof(dir));
    snprintf(fields, sizeof(fields), ",\"%s\":\"ArrowDown\"", dir);

    /* How many bytes one navigate sends the stream (the table patch and
     * the signals patch), on a stream that reads. */
    sse *s = sse_open(port, p.ctx, p.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    size_t before = s->len;
    conn *kc = conn_open(port);
    for (int i = 0; i < 5; i++)
        act(kc, "navigate", &p, fields, &r);
    ASSERT_EQ(sse_wait(s, 12, IO_TIMEOUT_MS), 12);
    size_t per_action = (s->len - before) / 5;
    sse_close(s);
    long long base = 5 + notice_closed_streams(port, &p, "navigate", 0);

    /* A stream that stops reading: enough actions to fill the kernel's
     * buffers (the server's send buffer grows at most to tcp_wmem's
     * maximum; the client's is small) and the 1 MiB php-via lets a writer
     * buffer, a quarter more for safety. */
    long long wmem = 4 << 20;
    FILE *f = fopen("/proc/sys/net/ipv4/tcp_wmem", "r");
    if (f) {
        long long a, b;
        if (fscanf(f, "%lld %lld %lld", &a, &b, &wmem) != 3) wmem = 4 << 20;
        fclose(f);
    }
    long long n = (wmem + (5 << 18)) * 5 / 4 / (long long)per_action + 100;
    if (n > 40000) n = 40000;
    /* A small receive buffer, set before connecting (a window shrunk
     * after the handshake makes the kernel drop segments and the server
     * back off its retransmissions for seconds). */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT(fd >= 0);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    char q[512], enc[1024], req[2048];
    snprintf(q, sizeof(q), "{\"via_ctx\":\"%s\"}", p.ctx);
    url_encode(q, enc, sizeof(enc));
    int rl = snprintf(req, sizeof(req), "GET /_sse?datastar=%s HTTP/1.1\r\nHost: x\r\n%s\r\n", enc,
                      p.cookie_hdr);
    send_all(fd, req, (size_t)rl);
    usleep(100000);
    for (long long i = 0; i < n; i++)
        act(kc, "navigate", &p, fields, &r);
    conn_close(kc);
    /* The server stopped taking patches from this stream long ago; the
     * last action's is among the newest that waited in the queue. */
    size_t cap = (size_t)n * 2 + 64, len = 0, bufcap = 1 << 20;
    char *raw = malloc(bufcap);
    long long *counts = calloc(cap, sizeof(*counts));
    ASSERT(raw && counts);
    size_t k = 0, scanned = 0;
    int64_t until = now_ms() + IO_TIMEOUT_MS; /* renewed by every read that brings bytes */
    long long last = 0;
    while (last != base + n) {
        if (now_ms() > until)
            HM_FAIL_("the last action's patch (count %lld) never came; last seen %lld", base + n,
                     last);
        if (bufcap - len < 65536) {
            bufcap *= 2;
            raw = realloc(raw, bufcap);
            ASSERT(raw);
        }
        ssize_t got = read_until(fd, raw + len, bufcap - len, until);
        if (got <= 0)
            HM_FAIL_("read %zd after %zu bytes, %zu counts, last %lld, want %lld", got, len, k,
                     last, base + n);
        len += (size_t)got;
        until = now_ms() + IO_TIMEOUT_MS;
        /* Only complete chunks are scanned: events never straddle one. */
        const char *end = raw + len;
        while (end > raw + scanned && !(end - raw >= 2 && end[-2] == '\r' && end[-1] == '\n'))
            end--;
        size_t upto = (size_t)(end - raw);
        if (upto > scanned) {
            k += counts_in(raw + scanned, upto - scanned, count, counts + k, cap - k);
            scanned = upto;
        }
        if (k) last = counts[k - 1];
    }
    fd_close(fd);
    /* One count per action, base + 1, base + 2, ... up to where the writer
     * blocked, then a gap, then the newest (the queue holds 50 events: 25
     * navigates). */
    ASSERT_EQ(counts[0], base + 1);
    size_t i = 1;
    while (i < k && counts[i] == counts[i - 1] + 1)
        i++;
    ASSERT_LT(i, k);                    /* some patches were dropped */
    ASSERT_GT(counts[i - 1], base + 1); /* many went out before the block */
    size_t tail = k - i;
    ASSERT_LE(tail, QUEUE / 2);
    for (size_t j = i + 1; j < k; j++)
        ASSERT_EQ(counts[j], counts[j - 1] + 1);
    ASSERT_EQ(counts[k - 1], base + n);
    printf("a blocked writer: %lld actions, the first %lld patches, then the newest %zu: ok\n", n,
           counts[i - 1] - base, tail);
    free(raw);
    free(counts);
}

int main(int argc, char **argv)
{
    hm_backend_kind backend = ba_test_begin(argc, argv, true);

    /* The default: patches leave as they are queued. */
    hm_bench_app_options o = ba_test_options(backend);
    hm_bench_app_options d;
    hm_bench_app_defaults(&d);
    ASSERT_EQ(d.sse_poll_ms, 0);
    int port;
    pid_t pid = start_server(&o, &port);
    one_patch_per_action(port);
    blocked_writer(port);

    /* The baseline for the poll interval: the same burst, on this server. */
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
    printf("--sse-poll-ms: a queue of 50 drops the oldest patches: ok\n");
    return 0;
}
