/* bench_app --http2 against hostile h2c clients, each scripted here with
 * raw frames (HPACK literals without indexing), each against a server of
 * its own so that the server's peak RSS (VmHWM) is that client's:
 *
 *   flood       streams opened past SETTINGS_MAX_CONCURRENT_STREAMS as
 *               fast as the socket takes them, responses and refusals
 *               never read: the server stops reading and says GOAWAY
 *               ENHANCE_YOUR_CALM; its RSS stays under the bound.
 *   rapid_reset HEADERS + RST_STREAM pairs (CVE-2023-44487): past
 *               nghttp2's reset rate limit the connection ends with GOAWAY
 *               ENHANCE_YOUR_CALM, and the handlers of streams reset
 *               before they began never run.
 *   preface     the preface dripped a byte at a time: closed at the
 *               header timeout, unanswered.
 *   continuation a HEADERS without END_HEADERS, no CONTINUATION: GOAWAY
 *               ENHANCE_YOUR_CALM at the header timeout; a CONTINUATION
 *               flood: the same at nghttp2's limit of 8.
 *   body        a HEADERS without END_STREAM and no DATA while PINGs keep
 *               the connection busy: the stream is reset (CANCEL) at the
 *               idle timeout, then the connection, with no stream open,
 *               ends with GOAWAY NO_ERROR one idle timeout later.
 *   sse         SSE subscribers that never read while actions are fired.
 *
 * In each, a plain HTTP/1.1 client is served while the hostile one holds
 * its connection. Waits derive from the header and idle timeouts given to
 * the server; IO_TIMEOUT_MS is the slack. argv[1]: the engine backend;
 * argv[2] (optional): one case. */
#include "bench_app_client.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <sys/socket.h>

#define HEADER_MS 300
#define IDLE_MS 3000
/* What a hostile connection may add to the server's resident set. Under
 * ASan, freed memory stays resident in its quarantine (256 MiB at most). */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_BOUND_KIB (64L * 1024 + 256L * 1024)
#else
#define RSS_BOUND_KIB (64L * 1024)
#endif

/* ---- the server's memory ---------------------------------------------------- */

/* A "VmRSS:" / "VmHWM:" line of /proc/pid/status, in KiB. */
static long status_kib(pid_t pid, const char *key)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    ASSERT(f);
    long kib = -1;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, key, strlen(key))) kib = atol(line + strlen(key));
    fclose(f);
    ASSERT_GE(kib, 0);
    return kib;
}

static void served_meanwhile(int port)
{
    resp r;
    req1(port, "GET", "/_health", NULL, NULL, &r);
    ASSERT_EQ(r.status, 200);
}

/* ---- raw frames ------------------------------------------------------------- */

static size_t frame_head(uint8_t *out, size_t len, uint8_t type, uint8_t flags, uint32_t sid)
{
    out[0] = (uint8_t)(len >> 16);
    out[1] = (uint8_t)(len >> 8);
    out[2] = (uint8_t)len;
    out[3] = type;
    out[4] = flags;
    out[5] = (uint8_t)(sid >> 24 & 0x7f);
    out[6] = (uint8_t)(sid >> 16);
    out[7] = (uint8_t)(sid >> 8);
    out[8] = (uint8_t)sid;
    return 9;
}

static size_t frame(uint8_t *out, uint8_t type, uint8_t flags, uint32_t sid, const void *p,
                    size_t len)
{
    size_t k = frame_head(out, len, type, flags, sid);
    if (len) memcpy(out + k, p, len);
    return k + len;
}

/* An HPACK integer with an n-bit prefix, the byte's other bits `flags`. */
static size_t hpack_int(uint8_t *out, int prefix, uint8_t flags, size_t v)
{
    size_t max = ((size_t)1 << prefix) - 1, k = 0;
    if (v < max) {
        out[k++] = (uint8_t)(flags | v);
        return k;
    }
    out[k++] = (uint8_t)(flags | max);
    for (v -= max; v >= 128; v >>= 7)
        out[k++] = (uint8_t)(0x80 | (v & 0x7f));
    out[k++] = (uint8_t)v;
    return k;
}

/* A literal field without indexing (RFC 7541 6.2.2) whose name is static
 * table entry idx, its value not Huffman-coded. */
static size_t hpack_lit(uint8_t *out, size_t idx, const char *v)
{
    size_t n = strlen(v);
    size_t k = hpack_int(out, 4, 0, idx);
    k += hpack_int(out + k, 7, 0, n);
    memcpy(out + k, v, n);
    return k + n;
}

/* GET path: :method GET, :scheme http (indexed), :path and :authority. */
static size_t get_block(uint8_t *out, const char *path)
{
    size_t k = 0;
    out[k++] = 0x82; /* :method GET */
    out[k++] = 0x86; /* :scheme http */
    k += hpack_lit(out + k, 4, path);
    k += hpack_lit(out + k, 1, "127.0.0.1");
    return k;
}

static size_t headers(uint8_t *out, uint32_t sid, uint8_t flags, const char *path)
{
    uint8_t block[256];
    size_t n = get_block(block, path);
    return frame(out, NGHTTP2_HEADERS, flags, sid, block, n);
}

static size_t rst(uint8_t *out, uint32_t sid, uint32_t code)
{
    uint8_t p[4] = {(uint8_t)(code >> 24), (uint8_t)(code >> 16), (uint8_t)(code >> 8),
                    (uint8_t)code};
    return frame(out, NGHTTP2_RST_STREAM, 0, sid, p, 4);
}

static size_t ping(uint8_t *out)
{
    static const uint8_t p[8] = "hostile";
    return frame(out, NGHTTP2_PING, 0, 0, p, 8);
}

/* A connection to 127.0.0.1:port with a receive buffer of rcvbuf bytes
 * (0: the system's), the client preface and an empty SETTINGS sent. */
static int raw_open(int port, int rcvbuf, bool preface)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    if (rcvbuf) ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)), 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    if (preface) {
        uint8_t b[64];
        memcpy(b, NGHTTP2_CLIENT_MAGIC, NGHTTP2_CLIENT_MAGIC_LEN);
        size_t k = NGHTTP2_CLIENT_MAGIC_LEN;
        k += frame(b + k, NGHTTP2_SETTINGS, 0, 0, NULL, 0);
        send_all(fd, (const char *)b, k);
    }
    return fd;
}

/* Frames read from a raw connection. */
typedef struct rd {
    int fd;
    uint8_t buf[1 << 16];
    size_t off, len;
    bool eof;
} rd;

typedef struct h2frame {
    uint8_t type, flags;
    uint32_t sid;
    uint8_t payload[1 << 14];
    size_t len;
} h2frame;

/* The next frame: 1, 0 at EOF (or a reset after what came), -1 at until_ms. */
static int next_frame(rd *r, h2frame *f, int64_t until_ms)
{
    for (;;) {
        if (r->len - r->off >= 9) {
            const uint8_t *h = r->buf + r->off;
            size_t n = (size_t)h[0] << 16 | (size_t)h[1] << 8 | h[2];
            ASSERT_LE(n, sizeof(f->payload));
            if (r->len - r->off >= 9 + n) {
                f->type = h[3];
                f->flags = h[4];
                f->sid = (uint32_t)(h[5] & 0x7f) << 24 | (uint32_t)h[6] << 16 |
                         (uint32_t)h[7] << 8 | h[8];
                memcpy(f->payload, h + 9, n);
                f->len = n;
                r->off += 9 + n;
                return 1;
            }
        }
        if (r->eof) return 0;
        if (r->off) {
            memmove(r->buf, r->buf + r->off, r->len - r->off);
            r->len -= r->off;
            r->off = 0;
        }
        ssize_t k = read_until(r->fd, (char *)r->buf + r->len, sizeof(r->buf) - r->len, until_ms);
        if (k == -1) return -1;
        if (k <= 0) {
            r->eof = true; /* EOF, or the reset a close with our bytes unread gives */
            continue;
        }
        r->len += (size_t)k;
    }
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Reads until the server's GOAWAY and then the close, by until_ms;
 * returns the GOAWAY's error code (fails without one). */
static uint32_t goaway_then_close(rd *r, int64_t until_ms)
{
    h2frame *f = malloc(sizeof(*f));
    ASSERT(f);
    int64_t code = -1;
    for (;;) {
        int k = next_frame(r, f, until_ms);
        if (k < 0) HM_FAIL_("no close by the deadline (GOAWAY %s)", code < 0 ? "not seen" : "seen");
        if (k == 0) break;
        if (f->type == NGHTTP2_GOAWAY && code < 0) {
            ASSERT_GE(f->len, 8);
            code = be32(f->payload + 4);
        }
    }
    free(f);
    if (code < 0) HM_FAIL_("the server closed the connection without a GOAWAY");
    return (uint32_t)code;
}

/* A server with the given header and idle timeouts. */
static pid_t start_h2(hm_backend_kind backend, int header_ms, int idle_ms, int *port,
                      long *base_kib)
{
    hm_bench_app_options o = ba_test_options(backend);
    o.http2 = true;
    o.header_timeout_ms = header_ms;
    o.idle_timeout_ms = idle_ms;
    pid_t pid = start_server(&o, port);
    served_meanwhile(*port); /* warm: what every run allocates at its first request */
    *base_kib = status_kib(pid, "VmRSS:");
    return pid;
}

/* The peak over the start's RSS, which must stay under the bound. */
static long check_peak(pid_t pid, long base_kib, const char *what)
{
    long grown = status_kib(pid, "VmHWM:") - base_kib;
    printf("%s: peak RSS %ld KiB over the %ld KiB at start (bound %ld KiB)\n", what, grown,
           base_kib, RSS_BOUND_KIB);
    ASSERT_LT(grown, RSS_BOUND_KIB);
    return grown;
}

/* ---- the cases ---------------------------------------------------------------- */

/* Streams past the 128 as fast as the socket takes them, nothing read (a
 * 4 KiB receive buffer, so the server's writes block soon). The server
 * must stop reading: once a send has made no progress for ten header
 * timeouts (the server reads at memory speed otherwise), the client reads
 * and finds GOAWAY ENHANCE_YOUR_CALM, then the close. */
static void flood(hm_backend_kind backend)
{
    int port;
    long base;
    /* Its writes wait the idle timeout for a client that does not read:
     * long enough for this one to notice the stall and start reading. */
    pid_t pid = start_h2(backend, HEADER_MS, 100 * HEADER_MS, &port, &base);
    int fd = raw_open(port, 4096, true);
    ASSERT_EQ(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
    enum { BATCH = 512, MAX_STREAMS = 4 << 20 };
    static uint8_t batch[BATCH * 40];
    uint32_t sid = 1;
    long streams = 0, at_10k = -1;
    bool stalled = false, closed = false;
    while (!stalled && !closed && streams < MAX_STREAMS) {
        size_t n = 0;
        for (int i = 0; i < BATCH; i++, sid += 2)
            n += headers(batch + n, sid, NGHTTP2_FLAG_END_STREAM | NGHTTP2_FLAG_END_HEADERS,
                         "/_health");
        for (size_t off = 0; off < n && !stalled && !closed;) {
            ssize_t w = send(fd, batch + off, n - off, MSG_NOSIGNAL);
            if (w > 0) {
                off += (size_t)w;
                continue;
            }
            if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                closed = true; /* the server closed: a reset */
                break;
            }
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            if (poll(&p, 1, 10 * HEADER_MS) == 0) stalled = true;
        }
        streams += BATCH;
        long grown = status_kib(pid, "VmRSS:") - base;
        if (at_10k < 0 && streams >= 10000) at_10k = grown;
        if (grown >= RSS_BOUND_KIB)
            HM_FAIL_("after %ld streams nobody reads, the server's RSS grew by %ld KiB (bound %ld)",
                     streams, grown, RSS_BOUND_KIB);
    }
    if (!stalled && !closed)
        HM_FAIL_("the server read %ld streams from a client that reads nothing", streams);
    printf("flood: the server stopped reading after at most %ld streams (RSS +%ld KiB at 10,000)\n",
           streams, at_10k);
    served_meanwhile(port);
    int fl = fcntl(fd, F_GETFL);
    ASSERT_EQ(fcntl(fd, F_SETFL, fl & ~O_NONBLOCK), 0);
    rd *r = calloc(1, sizeof(*r));
    ASSERT(r);
    r->fd = fd;
    ASSERT_EQ(goaway_then_close(r, now_ms() + IO_TIMEOUT_MS), NGHTTP2_ENHANCE_YOUR_CALM);
    free(r);
    close(fd);
    check_peak(pid, base, "flood");
    served_meanwhile(port);
    stop_server(pid);
    printf("flood: streams past the limit nobody reads: GOAWAY ENHANCE_YOUR_CALM, RSS bounded, "
           "others served: ok\n");
}

static long long requests_handled(int port)
{
    json_t *h = health(port);
    long long n = worker_count(h, 0, "requests");
    json_decref(h);
    return n;
}

/* HEADERS + RST_STREAM pairs, the responses read as they come: past
 * nghttp2's limit (a burst of 1000 resets) it ends with GOAWAY
 * ENHANCE_YOUR_CALM; streams reset in the same read as their HEADERS
 * never reach a handler. */
static void rapid_reset(hm_backend_kind backend)
{
    int port;
    long base;
    pid_t pid = start_h2(backend, HEADER_MS, IDLE_MS, &port, &base);
    long long before = requests_handled(port);
    int fd = raw_open(port, 0, true);
    enum { PAIRS = 20000, BATCH = 250 };
    static uint8_t batch[BATCH * 60];
    rd *r = calloc(1, sizeof(*r));
    h2frame *f = malloc(sizeof(*f));
    ASSERT(r && f);
    r->fd = fd;
    uint32_t sid = 1;
    int64_t code = -1;
    int sent = 0;
    while (sent < PAIRS && code < 0) {
        size_t n = 0;
        for (int i = 0; i < BATCH; i++, sid += 2) {
            n += headers(batch + n, sid, NGHTTP2_FLAG_END_STREAM | NGHTTP2_FLAG_END_HEADERS,
                         "/_health");
            n += rst(batch + n, sid, NGHTTP2_CANCEL);
        }
        if (send(fd, batch, n, MSG_NOSIGNAL) != (ssize_t)n) break; /* closed */
        sent += BATCH;
        /* What has arrived so far, without waiting. */
        while (code < 0 && next_frame(r, f, now_ms()) == 1)
            if (f->type == NGHTTP2_GOAWAY) code = be32(f->payload + 4);
        if (r->eof) break;
    }
    if (code < 0) code = goaway_then_close(r, now_ms() + IO_TIMEOUT_MS);
    printf("rapid_reset: GOAWAY (error code %lld) after %d pairs sent\n", (long long)code, sent);
    ASSERT_EQ(code, NGHTTP2_ENHANCE_YOUR_CALM); /* not nghttp2's own INTERNAL_ERROR */
    free(f);
    free(r);
    close(fd);
    long long handled = requests_handled(port) - before - 1; /* the first /_health */
    printf("rapid_reset: %lld handlers ran for %d reset streams\n", handled, sent);
    ASSERT_LT(handled * 100, sent); /* at most one per read that split a pair */
    check_peak(pid, base, "rapid_reset");
    served_meanwhile(port);
    stop_server(pid);
    printf("rapid_reset: GOAWAY, reset streams not handled, RSS bounded: ok\n");
}

/* Waits for the server's close of fd, sending one more byte of drip every
 * 100 ms; fails when it is still open at until_ms. Returns when it closed. */
static int64_t close_while_dripping(int fd, const uint8_t *drip, size_t n, int64_t until_ms)
{
    for (size_t i = 0; now_ms() < until_ms; i++) {
        char b[256];
        ssize_t k = read_until(fd, b, sizeof(b), now_ms() + 100);
        if (k == 0 || k == -2) return now_ms();
        ASSERT_EQ(k, -1); /* no answer to a preface, only the close */
        if (send(fd, drip + i % n, 1, MSG_NOSIGNAL) != 1) return now_ms();
    }
    HM_FAIL_("a client dripping its preface is still connected");
}

static void slow_preface(hm_backend_kind backend)
{
    int port;
    long base;
    pid_t pid = start_h2(backend, HEADER_MS, IDLE_MS, &port, &base);
    /* The preface, then a SETTINGS frame whose 30 entries never end. */
    uint8_t drip[NGHTTP2_CLIENT_MAGIC_LEN + 9 + 180] = {0};
    memcpy(drip, NGHTTP2_CLIENT_MAGIC, NGHTTP2_CLIENT_MAGIC_LEN);
    frame_head(drip + NGHTTP2_CLIENT_MAGIC_LEN, 180, NGHTTP2_SETTINGS, 0, 0);
    int fd = raw_open(port, 0, false);
    int64_t t0 = now_ms();
    ASSERT_EQ(send(fd, drip, 1, MSG_NOSIGNAL), 1);
    served_meanwhile(port);
    int64_t t =
        close_while_dripping(fd, drip + 1, sizeof(drip) - 1, t0 + HEADER_MS + IO_TIMEOUT_MS);
    ASSERT_GE(t - t0, HEADER_MS - 100);
    close(fd);
    /* The same past the preface: the SETTINGS it begins must be complete
     * by the same deadline. */
    fd = raw_open(port, 0, false);
    t0 = now_ms();
    send_all(fd, (const char *)drip, NGHTTP2_CLIENT_MAGIC_LEN + 10);
    rd *r = calloc(1, sizeof(*r));
    ASSERT(r);
    r->fd = fd;
    ASSERT_EQ(goaway_then_close(r, t0 + HEADER_MS + IO_TIMEOUT_MS), NGHTTP2_ENHANCE_YOUR_CALM);
    ASSERT_GE(now_ms() - t0, HEADER_MS - 100);
    free(r);
    close(fd);
    check_peak(pid, base, "preface");
    stop_server(pid);
    printf("preface: dripped, it is cut at the header timeout (after it: GOAWAY "
           "ENHANCE_YOUR_CALM): ok\n");
}

/* A HEADERS without END_HEADERS whose CONTINUATION never comes. */
static void no_continuation(hm_backend_kind backend)
{
    int port;
    long base;
    pid_t pid = start_h2(backend, HEADER_MS, IDLE_MS, &port, &base);
    int fd = raw_open(port, 0, true);
    uint8_t b[256];
    size_t n = headers(b, 1, NGHTTP2_FLAG_END_STREAM, "/_health"); /* no END_HEADERS */
    int64_t t0 = now_ms();
    send_all(fd, (const char *)b, n);
    served_meanwhile(port);
    rd *r = calloc(1, sizeof(*r));
    ASSERT(r);
    r->fd = fd;
    ASSERT_EQ(goaway_then_close(r, t0 + HEADER_MS + IO_TIMEOUT_MS), NGHTTP2_ENHANCE_YOUR_CALM);
    ASSERT_GE(now_ms() - t0, HEADER_MS - 100);
    free(r);
    close(fd);
    check_peak(pid, base, "continuation");
    stop_server(pid);
    printf("continuation: a header block left open ends at the header timeout with GOAWAY "
           "ENHANCE_YOUR_CALM: ok\n");

    /* A CONTINUATION flood (CVE-2024-28182), each frame one more field:
     * nghttp2's limit of 8, long before a header timeout of 100 times the
     * usual. */
    pid = start_h2(backend, 100 * HEADER_MS, IDLE_MS, &port, &base);
    fd = raw_open(port, 0, true);
    static uint8_t fl[64 * 32];
    n = headers(fl, 1, NGHTTP2_FLAG_END_STREAM, "/_health");
    static const uint8_t field[] = {0x00, 3, 'x', '-', 'a', 1, 'b'}; /* x-a: b, new name */
    for (int i = 0; i < 64; i++)
        n += frame(fl + n, NGHTTP2_CONTINUATION, 0, 1, field, sizeof(field));
    t0 = now_ms();
    send_all(fd, (const char *)fl, n);
    r = calloc(1, sizeof(*r));
    ASSERT(r);
    r->fd = fd;
    ASSERT_EQ(goaway_then_close(r, t0 + IO_TIMEOUT_MS), NGHTTP2_ENHANCE_YOUR_CALM);
    free(r);
    close(fd);
    served_meanwhile(port);
    check_peak(pid, base, "continuation flood");
    stop_server(pid);
    printf("continuation: 64 CONTINUATIONs end the connection with GOAWAY ENHANCE_YOUR_CALM: "
           "ok\n");
}

/* A request whose body never comes, PINGs every 100 ms meanwhile. */
static void no_body(hm_backend_kind backend)
{
    int port;
    long base;
    pid_t pid = start_h2(backend, HEADER_MS, IDLE_MS, &port, &base);
    int fd = raw_open(port, 0, true);
    uint8_t b[256];
    size_t n = headers(b, 1, NGHTTP2_FLAG_END_HEADERS, "/_health"); /* no END_STREAM */
    int64_t t0 = now_ms();
    send_all(fd, (const char *)b, n);
    rd *r = calloc(1, sizeof(*r));
    h2frame *f = malloc(sizeof(*f));
    ASSERT(r && f);
    r->fd = fd;
    int64_t reset_at = -1, goaway = -1, until = t0 + 2 * IDLE_MS + IO_TIMEOUT_MS;
    bool served = false;
    for (;;) {
        int k = next_frame(r, f, now_ms() + 100);
        if (k == 0) break;
        if (now_ms() >= until)
            HM_FAIL_("the connection is still open after %lld ms", (long long)(now_ms() - t0));
        if (k < 0) {
            size_t m = ping(b);
            if (goaway < 0 && send(fd, b, m, MSG_NOSIGNAL) != (ssize_t)m) break;
            if (!served) served_meanwhile(port);
            served = true;
            continue;
        }
        if (f->type == NGHTTP2_RST_STREAM && f->sid == 1) {
            ASSERT_EQ(be32(f->payload), NGHTTP2_CANCEL);
            reset_at = now_ms();
        }
        if (f->type == NGHTTP2_GOAWAY) {
            goaway = be32(f->payload + 4);
            ASSERT_GT(reset_at, 0); /* after the reset */
            ASSERT_GE(now_ms() - reset_at, IDLE_MS - 100);
        }
        ASSERT_NE(f->type, NGHTTP2_HEADERS); /* no answer to an incomplete request */
    }
    if (reset_at < 0) HM_FAIL_("the stream waiting for its body was never reset");
    ASSERT_GE(reset_at - t0, IDLE_MS - 100);
    ASSERT_EQ(goaway, NGHTTP2_NO_ERROR);
    free(f);
    free(r);
    close(fd);
    check_peak(pid, base, "body");
    stop_server(pid);
    printf("body: a request body that never comes is reset at the idle timeout, the idle "
           "connection (PINGs do not count) then ends with GOAWAY NO_ERROR: ok\n");
}

/* SSE streams over h2c whose clients never read (4 KiB receive buffers,
 * windows of 2^31-1 so that only the socket holds them back), while a
 * plain client fires actions on their contexts. */
static void sse_non_readers(hm_backend_kind backend)
{
    enum { TABS = 16, ACTIONS = 150 };
    int port;
    long base;
    pid_t pid = start_h2(backend, HEADER_MS, IDLE_MS, &port, &base);
    page pg[TABS];
    int fds[TABS];
    for (int t = 0; t < TABS; t++) {
        get_page(port, NULL, &pg[t]);
        fds[t] = raw_open(port, 4096, false);
        uint8_t b[1024];
        memcpy(b, NGHTTP2_CLIENT_MAGIC, NGHTTP2_CLIENT_MAGIC_LEN);
        size_t k = NGHTTP2_CLIENT_MAGIC_LEN;
        const uint8_t big[6] = {0, NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 0x7f, 0xff, 0xff, 0xff};
        k += frame(b + k, NGHTTP2_SETTINGS, 0, 0, big, sizeof(big));
        const uint8_t inc[4] = {0x7f, 0xff, 0, 0}; /* the connection window too */
        k += frame(b + k, NGHTTP2_WINDOW_UPDATE, 0, 0, inc, sizeof(inc));
        char json[256], enc[512], path[600];
        snprintf(json, sizeof(json), "{\"via_ctx\":\"%.127s\"}", pg[t].ctx);
        url_encode(json, enc, sizeof(enc));
        snprintf(path, sizeof(path), "/_sse?datastar=%s", enc);
        char cookie[160];
        snprintf(cookie, sizeof(cookie), "via_session_id=%s", pg[t].session);
        uint8_t block[900];
        size_t bn = 0;
        block[bn++] = 0x82; /* :method GET */
        block[bn++] = 0x86; /* :scheme http */
        bn += hpack_lit(block + bn, 4, path);
        bn += hpack_lit(block + bn, 1, "127.0.0.1");
        bn += hpack_lit(block + bn, 19, "text/event-stream"); /* accept */
        bn += hpack_lit(block + bn, 32, cookie);
        k += frame(b + k, NGHTTP2_HEADERS, NGHTTP2_FLAG_END_STREAM | NGHTTP2_FLAG_END_HEADERS, 1,
                   block, bn);
        send_all(fds[t], (const char *)b, k);
    }
    wait_health_count(port, "sse", TABS);
    conn *c = conn_open(port);
    resp r;
    for (int i = 0; i < ACTIONS; i++)
        for (int t = 0; t < TABS; t++) {
            action_on(c, "increment", &pg[t], NULL, -1, &r);
            ASSERT_EQ(r.status, 200);
        }
    conn_close(c);
    served_meanwhile(port);
    check_peak(pid, base, "sse");
    for (int t = 0; t < TABS; t++)
        close(fds[t]);
    stop_server(pid);
    printf("sse: %d SSE subscribers that never read, %d actions fired: RSS bounded, actions "
           "answered: ok\n",
           TABS, TABS * ACTIONS);
}

int main(int argc, char **argv)
{
    hm_backend_kind backend = ba_test_begin(argc, argv, true);
    const char *only = argc > 2 ? argv[2] : NULL;
    static const struct {
        const char *name;
        void (*run)(hm_backend_kind);
    } cases[] = {
        {"flood", flood},          {"rapid_reset", rapid_reset},
        {"preface", slow_preface}, {"continuation", no_continuation},
        {"body", no_body},         {"sse", sse_non_readers},
    };
    int ran = 0;
    for (size_t i = 0; i < HM_ARRAY_LEN(cases); i++) {
        if (only && strcmp(only, cases[i].name) != 0) continue;
        cases[i].run(backend);
        ran++;
    }
    if (!ran) HM_FAIL_("no case named %s", only);
    return 0;
}
