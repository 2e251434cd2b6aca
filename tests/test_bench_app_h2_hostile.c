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
 *   hpack       HPACK abuse: a table size update too large or out of
 *               place, an index past the tables (GOAWAY COMPRESSION_ERROR);
 *               churning inserts and one entry referenced 16,000 times
 *               (431, the connection serves on).
 *
 * flood, rapid_reset and preface run over h2 through ALPN too
 * ("tls_flood", ...): TLS changes how the writer falls behind and when
 * nghttp2 has the connection.
 *
 * In each, a plain HTTP/1.1 client is served while the hostile one holds
 * its connection. Waits derive from the header and idle timeouts given to
 * the server; IO_TIMEOUT_MS is the slack. argv[1]: the engine backend;
 * argv[2] (optional): one case. */
#include "bench_app_client.h"
#include "hpack_raw.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
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

/* ---- h2c or h2 over TLS -------------------------------------------------------- */

/* The case runs over TLS (h2 through ALPN): its server has the test's
 * certificate, raw connections agree on h2 with tls_h2, and the plain
 * HTTP/1.1 clients (served_meanwhile, /_health) use g_tls = tls_h1. */
static bool over_tls;
static SSL_CTX *tls_h1, *tls_h2;

/* send(2) on a raw connection, through its TLS when it has one: bytes
 * written, or -1 with errno EAGAIN (the socket is full) or EPIPE (the
 * server is gone). */
static ssize_t wire_send(int fd, const void *p, size_t n)
{
    SSL *ssl = ssl_of(fd);
    if (!ssl) return send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    int w = SSL_write(ssl, p, (int)n);
    if (w > 0) return w;
    int e = SSL_get_error(ssl, w);
    ERR_clear_error();
    errno = e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ ? EAGAIN : EPIPE;
    return -1;
}

/* Sends all of p, waiting while the socket is full; false when the
 * server is gone (or takes nothing for IO_TIMEOUT_MS). */
static bool wire_send_all(int fd, const void *p, size_t n)
{
    for (size_t off = 0; off < n;) {
        ssize_t w = wire_send(fd, (const uint8_t *)p + off, n - off);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        if (poll(&pf, 1, IO_TIMEOUT_MS) == 0) return false;
    }
    return true;
}

/* A connection to 127.0.0.1:port with a receive buffer of rcvbuf bytes
 * (0: the system's), over TLS (h2 agreed, non-blocking) in a TLS case;
 * with the client preface and an empty SETTINGS sent when preface. */
static int raw_open(int port, int rcvbuf, bool preface)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    if (rcvbuf) ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)), 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    if (over_tls) {
        g_tls = tls_h2;
        if (!tls_handshake(fd, true)) HM_FAIL_("TLS handshake with port %d failed", port);
        ASSERT_STREQ(g_alpn, "h2");
        g_tls = tls_h1;
    }
    if (preface) {
        uint8_t b[64];
        memcpy(b, NGHTTP2_CLIENT_MAGIC, NGHTTP2_CLIENT_MAGIC_LEN);
        size_t k = NGHTTP2_CLIENT_MAGIC_LEN;
        k += frame(b + k, NGHTTP2_SETTINGS, 0, 0, NULL, 0);
        ASSERT(wire_send_all(fd, b, k));
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
    if (over_tls) {
        o.tls_cert = g_cert;
        o.tls_key = g_key;
    }
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
    printf("%s%s: peak RSS %ld KiB over the %ld KiB at start (bound %ld KiB)\n", what,
           over_tls ? " (h2)" : "", grown, base_kib, RSS_BOUND_KIB);
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
            ssize_t w = wire_send(fd, batch + off, n - off);
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
    printf("flood: the server stopped reading after at most %ld streams (RSS +%ld KiB at 10,000, "
           "+%ld KiB now; %s)\n",
           streams, at_10k, status_kib(pid, "VmRSS:") - base,
           stalled ? "our writes stalled" : "the server closed");
    served_meanwhile(port);
    rd *r = calloc(1, sizeof(*r));
    ASSERT(r);
    r->fd = fd;
    /* A reader now: a 4 KiB window would take the TLS records in at a
     * few KiB a second (segments smaller than the window waits for). */
    int big = 1 << 20;
    ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big)), 0);
    /* What it queued (its socket's buffer, 64 KiB, 4096 frames) must come
     * by its own write deadline, the idle timeout. */
    ASSERT_EQ(goaway_then_close(r, now_ms() + 100 * HEADER_MS), NGHTTP2_ENHANCE_YOUR_CALM);
    free(r);
    fd_close(fd);
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
        if (!wire_send_all(fd, batch, n)) break; /* closed */
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
    fd_close(fd);
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
        if (wire_send(fd, drip + i % n, 1) != 1) return now_ms();
    }
    HM_FAIL_("a client dripping its preface is still connected");
}

/* Over TLS nghttp2 has the connection from the handshake on: it sends
 * its SETTINGS, and a preface not complete by the deadline ends with
 * GOAWAY. Reads the server's frames (never an answer: SETTINGS, a
 * WINDOW_UPDATE, a GOAWAY), sending one more byte of drip each 100 ms of silence, until
 * the close; returns the GOAWAY's code (fails without one, or when the
 * connection is still open at until_ms). */
static uint32_t goaway_while_dripping(int fd, const uint8_t *drip, size_t n, int64_t until_ms)
{
    rd *r = calloc(1, sizeof(*r));
    h2frame *f = malloc(sizeof(*f));
    ASSERT(r && f);
    r->fd = fd;
    int64_t code = -1;
    for (size_t i = 0;;) {
        if (now_ms() >= until_ms) HM_FAIL_("a client dripping its preface is still connected");
        int k = next_frame(r, f, now_ms() + 100);
        if (k == 0) break;
        if (k == 1) {
            if (f->type == NGHTTP2_GOAWAY && code < 0) code = be32(f->payload + 4);
            ASSERT(f->type != NGHTTP2_HEADERS && f->type != NGHTTP2_DATA); /* no answer */
            continue;
        }
        if (code < 0) wire_send(fd, drip + i++ % n, 1); /* fails once the server is gone */
    }
    free(f);
    free(r);
    if (code < 0) HM_FAIL_("the server closed the connection without a GOAWAY");
    return (uint32_t)code;
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
    ASSERT_EQ(wire_send(fd, drip, 1), 1);
    served_meanwhile(port);
    if (over_tls)
        ASSERT_EQ(
            goaway_while_dripping(fd, drip + 1, sizeof(drip) - 1, t0 + HEADER_MS + IO_TIMEOUT_MS),
            NGHTTP2_ENHANCE_YOUR_CALM);
    else
        close_while_dripping(fd, drip + 1, sizeof(drip) - 1, t0 + HEADER_MS + IO_TIMEOUT_MS);
    ASSERT_GE(now_ms() - t0, HEADER_MS - 100);
    fd_close(fd);
    /* The same past the preface: the SETTINGS it begins must be complete
     * by the same deadline. */
    fd = raw_open(port, 0, false);
    t0 = now_ms();
    ASSERT(wire_send_all(fd, drip, NGHTTP2_CLIENT_MAGIC_LEN + 10));
    rd *r = calloc(1, sizeof(*r));
    ASSERT(r);
    r->fd = fd;
    ASSERT_EQ(goaway_then_close(r, t0 + HEADER_MS + IO_TIMEOUT_MS), NGHTTP2_ENHANCE_YOUR_CALM);
    ASSERT_GE(now_ms() - t0, HEADER_MS - 100);
    free(r);
    fd_close(fd);
    check_peak(pid, base, "preface");
    stop_server(pid);
    printf("preface%s: dripped, it is cut at the header timeout (%s; after it: GOAWAY "
           "ENHANCE_YOUR_CALM): ok\n",
           over_tls ? " (h2)" : "", over_tls ? "GOAWAY ENHANCE_YOUR_CALM" : "unanswered");
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
    fd_close(fd);
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
    fd_close(fd);
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
            if (goaway < 0 && wire_send(fd, b, m) != (ssize_t)m) break;
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
            /* An idle spell after the reset, which came an idle spell after
             * t0. Measured from t0, which precedes both on the server's
             * clock: a reset read late here (a busy machine) would make
             * the gap since reset_at look short. */
            ASSERT_GE(now_ms() - t0, 2 * IDLE_MS - 100);
        }
        ASSERT_NE(f->type, NGHTTP2_HEADERS); /* no answer to an incomplete request */
    }
    if (reset_at < 0) HM_FAIL_("the stream waiting for its body was never reset");
    ASSERT_GE(reset_at - t0, IDLE_MS - 100);
    ASSERT_EQ(goaway, NGHTTP2_NO_ERROR);
    free(f);
    free(r);
    fd_close(fd);
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
        fd_close(fds[t]);
    stop_server(pid);
    printf("sse: %d SSE subscribers that never read, %d actions fired: RSS bounded, actions "
           "answered: ok\n",
           TABS, TABS * ACTIONS);
}

/* The :status of a response HEADERS frame (one frame: bench_app's heads
 * are small), decoded with inf, which every HEADERS of the connection
 * passes through in order. */
static int frame_status(nghttp2_hd_inflater *inf, const h2frame *f)
{
    ASSERT(f->flags & NGHTTP2_FLAG_END_HEADERS);
    const uint8_t *in = f->payload;
    size_t left = f->len;
    int status = -1;
    for (;;) {
        nghttp2_nv nv;
        int fl = 0;
        ssize_t k = nghttp2_hd_inflate_hd2(inf, &nv, &fl, in, left, 1);
        ASSERT_GE(k, 0);
        in += k;
        left -= (size_t)k;
        if ((fl & NGHTTP2_HD_INFLATE_EMIT) && nv.namelen == 7 && !memcmp(nv.name, ":status", 7))
            status = atoi((const char *)nv.value);
        if (fl & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(inf);
            break;
        }
        if (!(fl & NGHTTP2_HD_INFLATE_EMIT) && !left) break;
    }
    return status;
}

/* HPACK abuse (RFC 7541), each on a connection of its own. A table size
 * update past the 4096 bytes of bench_app's SETTINGS_HEADER_TABLE_SIZE,
 * one after a field, an index past both tables: nghttp2 ends the
 * connection with GOAWAY COMPRESSION_ERROR. Legal HPACK whose header list
 * is far larger than its frames (4000-byte entries inserted one after
 * another, each evicting the last, each referenced four times; one entry
 * referenced 16,000 times in a 16 KiB HEADERS: 64 MB): 431, and the
 * connection serves on, its table in step with ours (the next request
 * references the last entry: 200). */
static void hpack_abuse(hm_backend_kind backend)
{
    int port;
    long base;
    /* The bomb's header block spans reads (it is larger than the read
     * buffer) and is due a header timeout after its HEADERS, measured
     * by the server, which spends that time checking the 64 MB of
     * fields: 17 ms alone, past 150 ms on a loaded machine. Nothing here
     * is about the timeout, so it is 100 times the usual, as for the
     * CONTINUATION flood. */
    pid_t pid = start_h2(backend, 100 * HEADER_MS, IDLE_MS, &port, &base);
    static uint8_t blk[1 << 17], out[(1 << 17) + 1024];
    static const char *const bad[] = {"a size update past SETTINGS_HEADER_TABLE_SIZE",
                                      "a size update after a field", "an index past the tables"};
    for (int i = 0; i < 3; i++) {
        size_t k = 0;
        if (i == 0) k += hpack_int(blk, 5, 0x20, 4097);
        k += get_block(blk + k, "/_health");
        if (i == 1) k += hpack_int(blk + k, 5, 0x20, 0);
        if (i == 2) k += hpack_int(blk + k, 7, 0x80, 10000);
        int fd = raw_open(port, 0, true);
        size_t n = frame(out, NGHTTP2_HEADERS, NGHTTP2_FLAG_END_STREAM | NGHTTP2_FLAG_END_HEADERS,
                         1, blk, k);
        ASSERT(wire_send_all(fd, out, n));
        rd *r = calloc(1, sizeof(*r));
        ASSERT(r);
        r->fd = fd;
        ASSERT_EQ(goaway_then_close(r, now_ms() + IO_TIMEOUT_MS), NGHTTP2_COMPRESSION_ERROR);
        free(r);
        fd_close(fd);
        served_meanwhile(port);
        printf("hpack: %s: GOAWAY COMPRESSION_ERROR, others served: ok\n", bad[i]);
    }
    for (int bomb = 0; bomb <= 1; bomb++) {
        size_t k = get_block(blk, "/_health");
        if (bomb) {
            k += hpack_insert(blk + k, "x-bomb", 4000);
            while (k < 16384)
                blk[k++] = 0xbe; /* index 62: the entry */
        } else {
            for (int i = 0; k + 4020 <= 4 * 16384; i++) {
                char name[16];
                snprintf(name, sizeof(name), "x-churn-%02d", i % 100);
                k += hpack_insert(blk + k, name, 4000);
                for (int ref = 0; ref < 4; ref++)
                    blk[k++] = 0xbe;
            }
        }
        /* HEADERS and CONTINUATIONs of 16 KiB, then stream 3: a GET whose
         * last field is the table's newest entry (4000 bytes, under the
         * limit). */
        size_t n = 0;
        for (size_t off = 0; off < k; off += 16384) {
            size_t m = k - off < 16384 ? k - off : 16384;
            uint8_t flags =
                (off ? 0 : NGHTTP2_FLAG_END_STREAM) | (off + m == k ? NGHTTP2_FLAG_END_HEADERS : 0);
            n += frame(out + n, off ? NGHTTP2_CONTINUATION : NGHTTP2_HEADERS, flags, 1, blk + off,
                       m);
        }
        uint8_t next[256];
        size_t nk = get_block(next, "/_health");
        next[nk++] = 0xbe;
        n += frame(out + n, NGHTTP2_HEADERS, NGHTTP2_FLAG_END_STREAM | NGHTTP2_FLAG_END_HEADERS, 3,
                   next, nk);
        int fd = raw_open(port, 0, true);
        ASSERT(wire_send_all(fd, out, n));
        rd *r = calloc(1, sizeof(*r));
        h2frame *f = malloc(sizeof(*f));
        nghttp2_hd_inflater *inf;
        ASSERT(r && f && nghttp2_hd_inflate_new(&inf) == 0);
        r->fd = fd;
        int st1 = 0, st3 = 0;
        while (!st1 || !st3) {
            int got = next_frame(r, f, now_ms() + IO_TIMEOUT_MS);
            if (got != 1)
                HM_FAIL_("%s: no answer to streams 1 and 3 (%d, %d)", bomb ? "bomb" : "churn", st1,
                         st3);
            ASSERT_NE(f->type, NGHTTP2_GOAWAY);
            if (f->type != NGHTTP2_HEADERS) continue;
            int st = frame_status(inf, f);
            if (f->sid == 1) st1 = st;
            if (f->sid == 3) st3 = st;
        }
        ASSERT_EQ(st1, 431);
        ASSERT_EQ(st3, 200);
        nghttp2_hd_inflate_del(inf);
        free(f);
        free(r);
        fd_close(fd);
        printf("hpack: %s: 431, then the next stream on the connection 200: ok\n",
               bomb ? "one 4000-byte entry referenced 16,000 times"
                    : "4000-byte entries inserted one after another, referenced again");
    }
    check_peak(pid, base, "hpack");
    served_meanwhile(port);
    stop_server(pid);
}

int main(int argc, char **argv)
{
    hm_backend_kind backend = ba_test_begin(argc, argv, true);
    const char *only = argc > 2 ? argv[2] : NULL;
    make_pki();
    tls_h1 = client_ctx(0, NULL, 0, false);
    tls_h2 = client_ctx(0, "\x02h2", 3, false);
    /* tls: the case runs over h2 through ALPN too (as "tls_NAME"), where
     * TLS changes the path: the writes that stall, the preface's start. */
    static const struct {
        const char *name;
        void (*run)(hm_backend_kind);
        bool tls;
    } cases[] = {
        {"flood", flood, true},          {"rapid_reset", rapid_reset, true},
        {"preface", slow_preface, true}, {"continuation", no_continuation, false},
        {"body", no_body, false},        {"sse", sse_non_readers, false},
        {"hpack", hpack_abuse, false},
    };
    int ran = 0;
    for (int tls = 0; tls <= 1; tls++) {
        for (size_t i = 0; i < HM_ARRAY_LEN(cases); i++) {
            char name[64];
            snprintf(name, sizeof(name), "%s%s", tls ? "tls_" : "", cases[i].name);
            if ((tls && !cases[i].tls) || (only && strcmp(only, name) != 0)) continue;
            over_tls = tls;
            g_tls = tls ? tls_h1 : NULL;
            cases[i].run(backend);
            ran++;
        }
    }
    if (!ran) HM_FAIL_("no case named %s", only);
    return 0;
}
