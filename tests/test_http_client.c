/* hm_http_conn against scripted servers on the same loop: what an exchange
 * reports for each misbehaviour (kind, words, evidence), that a discarded
 * body is counted and never kept, and that a server which never stops
 * sending (endless 1xx, an endless body) cannot hold a request past its
 * deadline. argv[2] "async": the same exchanges driven without a coroutine
 * (hm_http_conn_start), which must report exactly the same. */
#include "engine_test_util.h"
#include "proto/http_client.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define MS 1000000LL

typedef struct script {
    const char *reply; /* written once after the request arrives (NULL: nothing) */
    size_t reply_len;
    const char *repeat; /* then written forever, until the client goes */
    size_t repeat_len;
} script;

static hm_sock *listener;
static const script *current;

static void serve_one(void *arg)
{
    hm_sock *s;
    if (hm_sock_accept(listener, &s, 0) < 0) return;
    char buf[4096];
    if (hm_sock_read(s, buf, sizeof(buf), 0) > 0) {
        const script *sc = current;
        if (sc->reply && hm_sock_write(s, sc->reply, sc->reply_len, 0, NULL) < 0) sc = NULL;
        while (sc && sc->repeat && hm_sock_write(s, sc->repeat, sc->repeat_len, 0, NULL) > 0) {
        }
    }
    hm_sock_close(s);
}

static hm_http_target target;
static bool use_async;

typedef struct waiting {
    hm_event ev;
    bool done;
    int rc;
} waiting;

static void async_done(hm_http_conn *c, int rc, void *user)
{
    waiting *w = user;
    w->done = true;
    w->rc = rc;
    hm_event_notify(&w->ev);
}

/* An exchange by either driver: the coroutine's, or the callbacks' (this
 * coroutine then only waits for the done callback). */
static int run_exchange(hm_http_conn *c, const char *req, size_t len, bool discard,
                        int64_t timeout_ns)
{
    if (!use_async) {
        hm_http_xopts xo = {.discard_body = discard, .deadline = hm_now_ns() + timeout_ns};
        return hm_http_conn_exchange(c, req, len, &xo);
    }
    hm_timeq q;
    hm_timeq_init(hm_loop_current(), &q, timeout_ns);
    waiting w = {.rc = 1};
    hm_event_init(&w.ev);
    hm_http_xopts ao = {.discard_body = discard, .timeq = &q};
    ASSERT_EQ(hm_http_conn_start(c, hm_loop_current(), req, len, &ao, async_done, &w), 0);
    ASSERT(!w.done); /* never inside the start */
    while (!w.done)
        hm_event_wait(&w.ev, 0);
    hm_timeq_fini(&q);
    return w.rc;
}

/* One GET against a server following sc; returns the exchange's result. */
static int exchange(hm_http_conn *c, const script *sc, bool discard, int64_t timeout_ns)
{
    current = sc;
    ASSERT_EQ(hm_coro_spawn(NULL, serve_one, NULL, NULL), 0);
    static const char req[] = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";
    int rc = run_exchange(c, req, sizeof(req) - 1, discard, timeout_ns);
    hm_http_conn_close(c);
    printf("  rc %d, fail %s, why \"%s\"\n", rc, hm_fail_kind_name(c->fail),
           hm_reason(c->fail_why));
    return rc;
}

#define LIT(s) s, sizeof(s) - 1
/* A literal as .reply and .reply_len. */
#define LIT2(s) s, .reply_len = sizeof(s) - 1

static void tests(void *arg)
{
    struct sockaddr_in a = loopback_addr(0);
    ASSERT_EQ(hm_sock_listen(&listener, (struct sockaddr *)&a, sizeof(a), 64), 0);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/", hm_sock_local_port(listener));
    ASSERT_EQ(hm_http_target_from_url(url, &target, NULL), 0);
    hm_http_conn c;
    hm_http_conn_init(&c, &target, NULL);

    printf("a good answer\n");
    script good = {.reply = LIT2("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")};
    ASSERT_EQ(exchange(&c, &good, false, 5000 * MS), 0);
    ASSERT_EQ(c.resp.status, 200);
    ASSERT_STREQ(hm_reason(c.fail_why), "");
    ASSERT_EQ(c.bytes_read, good.reply_len);

    printf("a second, unsolicited response in the same write\n");
    script two = {.reply = LIT2("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
                                "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n")};
    ASSERT_EQ(exchange(&c, &two, false, 5000 * MS), -HM_EPROTO_HTTP);
    ASSERT_EQ(c.fail, HM_FAIL_PROTOCOL);
    ASSERT(strstr(hm_reason(c.fail_why), "unsolicited"));
    ASSERT(c.head_len > 12 && !memcmp(c.head, "HTTP/1.1 500", 12)); /* the evidence */

    printf("bytes of an event stream where the status line belongs\n");
    script sse = {
        .reply =
            LIT2("6f\r\nevent: datastar-patch-elements\ndata: elements <div id=\"x\"></div>\n\n")};
    ASSERT_EQ(exchange(&c, &sse, false, 5000 * MS), -HM_EPROTO_HTTP);
    ASSERT_EQ(c.fail, HM_FAIL_PROTOCOL);
    ASSERT_STREQ(hm_reason(c.fail_why), "response starts with SSE data: bytes of another stream");
    ASSERT(c.head_len > 4 && !memcmp(c.head, "6f\r\n", 4));
    char shown[400];
    hm_escape_bytes(c.head, c.head_len, shown, sizeof(shown));
    ASSERT(!strncmp(shown, "6f\\r\\nevent: datastar-patch-elements\\n", 36));

    printf("closed before any byte\n");
    script none = {.reply = NULL};
    ASSERT_EQ(exchange(&c, &none, false, 5000 * MS), -HM_ECLOSED);
    ASSERT_EQ(c.fail, HM_FAIL_CLOSED);
    ASSERT_STREQ(hm_reason(c.fail_why), "connection closed before any response byte");

    printf("garbage\n");
    script garbage = {.reply = LIT2("\x00\xff GARBAGE\r\n\r\n")};
    ASSERT_EQ(exchange(&c, &garbage, false, 5000 * MS), -HM_EPROTO_HTTP);
    ASSERT_EQ(c.fail, HM_FAIL_PROTOCOL);
    ASSERT(hm_reason(c.fail_why)[0]);

    printf("a 1 MiB chunked body, discarded: counted, not kept\n");
    static char big[(1 << 20) + 64];
    int n = snprintf(big, sizeof(big), "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", 1 << 20);
    memset(big + n, 'b', 1 << 20);
    script body = {.reply = big, .reply_len = (size_t)n + (1 << 20)};
    ASSERT_EQ(exchange(&c, &body, true, 5000 * MS), 0);
    ASSERT_EQ(c.body_bytes, 1 << 20);
    ASSERT_EQ(c.resp.body_len, 0);

    printf("a body over the buffered limit: refused when kept, fine when discarded\n");
    hm_http_limits small = {.max_body_bytes = 1000};
    hm_http_conn lim;
    hm_http_conn_init(&lim, &target, &small);
    ASSERT_EQ(exchange(&lim, &body, false, 5000 * MS), -HM_ETOOBIG);
    ASSERT_EQ(exchange(&lim, &body, true, 5000 * MS), 0);
    ASSERT_EQ(lim.body_bytes, 1 << 20);
    hm_http_conn_free(&lim);

    printf("endless 100 Continue: a protocol error, not a hang\n");
    script cont = {.repeat = "HTTP/1.1 100 Continue\r\n\r\n", .repeat_len = 25};
    ASSERT_EQ(exchange(&c, &cont, false, 5000 * MS), -HM_EPROTO_HTTP);
    ASSERT(strstr(hm_reason(c.fail_why), "informational (1xx)"));

    printf("an endless body, discarded: ends at the deadline\n");
    enum { DATA = 16000 };
    static char piece[DATA + 16];
    int hl = snprintf(piece, sizeof(piece), "%x\r\n", (unsigned)DATA);
    memset(piece + hl, 'e', DATA);
    memcpy(piece + hl + DATA, "\r\n", 2);
    script endless = {.reply = LIT2("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
                      .repeat = piece,
                      .repeat_len = (size_t)hl + DATA + 2};
    int64_t t0 = hm_now_ns();
    ASSERT_EQ(exchange(&c, &endless, true, 200 * MS), -ETIMEDOUT);
    ASSERT_GE(hm_now_ns() - t0, 200 * MS);
    ASSERT_EQ(c.fail, HM_FAIL_TIMEOUT);
    ASSERT(strstr(hm_reason(c.fail_why), "no complete response within 0.2 s"));
    ASSERT_GT(c.body_bytes, 0);

    printf("connection refused\n");
    hm_http_target closed = target;
    ((struct sockaddr_in *)&closed.addr)->sin_port = htons(1);
    hm_http_conn cc;
    hm_http_conn_init(&cc, &closed, NULL);
    ASSERT_EQ(run_exchange(&cc, LIT("GET / HTTP/1.1\r\n\r\n"), false, 5000 * MS), -ECONNREFUSED);
    ASSERT_EQ(cc.fail, HM_FAIL_CONNECT);
    ASSERT_STREQ(hm_reason(cc.fail_why), "connect failed: Connection refused");
    hm_http_conn_free(&cc);

    hm_http_conn_free(&c);
    hm_sock_close(listener);
}

/* ---- one arrival in pieces ------------------------------------------------
 * A response and an unsolicited one after it, in one write, where the first
 * ends exactly at the end of one of the engine's read pieces: the reader
 * gets the first piece alone, a whole response, and must still see the
 * second before it trusts the connection again. The server is a plain
 * thread, so a fresh loop's buffers hold the client's bytes only and the
 * test knows where its pieces end:
 *   - io_uring, 2 KiB provided buffers (no incremental consumption): every
 *     receive starts a buffer, so a 2 KiB response ends one;
 *   - io_uring, 32 KiB buffers consumed incrementally: a first response of
 *     31,768 bytes leaves 1,000 in the buffer, and a second of 1,000 ends it;
 *   - epoll: a read of the loop's 64 KiB buffer that a 64 KiB response fills
 *     (held back until all of it is in the socket: the kernel pushes a large
 *     write in parts, and a read between them would see a short arrival).
 * Each case passes on every backend; each fails without the check on the
 * one it names. Every write but the last is a single small segment. */

typedef struct split_case {
    const char *what;
    size_t sizes[2]; /* responses in order on one connection; the stray follows the last */
    int n;
    bool gate; /* epoll: hold the loop until the whole last arrival is in the socket */
} split_case;

typedef struct split_server {
    int fd;
    const split_case *sc;
} split_server;

static const char stray[] = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n";

/* A response of exactly size bytes (header and body). */
static size_t sized_response(char *out, size_t size)
{
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n";
    size_t body = size;
    int h = 0;
    for (int k = 0; k < 3; k++) { /* the header's length depends on the body's digits */
        h = snprintf(out, 128, head, body);
        body = size - (size_t)h;
    }
    h = snprintf(out, 128, head, body);
    if ((size_t)h + body != size) abort();
    memset(out + h, 'x', body);
    return size;
}

static bool read_request(int s)
{
    char req[4096];
    size_t got = 0;
    while (got < sizeof(req) - 1) {
        ssize_t n = recv(s, req + got, sizeof(req) - 1 - got, 0);
        if (n <= 0) return false;
        got += (size_t)n;
        req[got] = '\0';
        if (strstr(req, "\r\n\r\n")) return true;
    }
    return false;
}

static void *split_serve(void *arg)
{
    split_server *sv = arg;
    int s = accept(sv->fd, NULL, NULL);
    if (s < 0) return NULL;
    int big = 1 << 20;
    setsockopt(s, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
    for (int i = 0; i < sv->sc->n && read_request(s); i++) {
        bool last = i == sv->sc->n - 1;
        size_t size = sv->sc->sizes[i];
        char *out = malloc(size + sizeof(stray));
        size_t len = sized_response(out, size);
        if (last) {
            memcpy(out + len, stray, sizeof(stray) - 1);
            len += sizeof(stray) - 1;
        }
        for (size_t off = 0; off < len;) {
            ssize_t n = send(s, out + off, len - off, MSG_NOSIGNAL);
            if (n <= 0) break;
            off += (size_t)n;
        }
        free(out);
    }
    char sink[256];
    while (recv(s, sink, sizeof(sink), 0) > 0) { /* until the client goes */
    }
    close(s);
    return NULL;
}

typedef struct gate {
    int fd;
    int want;
} gate;

/* Runs while the exchange waits for its answer (its request already sent:
 * epoll sends at once) and keeps the loop from reading until the socket
 * holds the whole arrival. A wait for a condition, not for a time. */
static void gate_coro(void *arg)
{
    gate *g = arg;
    int avail = 0;
    while (ioctl(g->fd, FIONREAD, &avail) == 0 && avail < g->want)
        usleep(1000);
}

static void split_client(void *arg)
{
    split_server *sv = arg;
    const split_case *sc = sv->sc;
    struct sockaddr_in a;
    socklen_t al = sizeof(a);
    ASSERT_EQ(getsockname(sv->fd, (struct sockaddr *)&a, &al), 0);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/", ntohs(a.sin_port));
    hm_http_target t;
    ASSERT_EQ(hm_http_target_from_url(url, &t, NULL), 0);
    hm_http_conn c;
    hm_http_conn_init(&c, &t, NULL);
    static const char req[] = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";
    for (int i = 0; i < sc->n; i++) {
        bool last = i == sc->n - 1;
        gate g = {.want = (int)(sc->sizes[i] + sizeof(stray) - 1)};
        if (last && sc->gate) {
            ASSERT(c.sock); /* kept alive from the first exchange */
            g.fd = hm_sock_fd(c.sock);
            ASSERT_EQ(hm_coro_spawn(NULL, gate_coro, &g, NULL), 0);
        }
        int rc = run_exchange(&c, req, sizeof(req) - 1, true, 30000 * MS);
        printf("  %s, response %d (%zu bytes): rc %d, status %d, why \"%s\"\n", sc->what, i + 1,
               sc->sizes[i], rc, c.resp.status, hm_reason(c.fail_why));
        if (!last) {
            ASSERT_EQ(rc, 0);
            continue;
        }
        ASSERT_EQ(rc, -HM_EPROTO_HTTP);
        ASSERT_EQ(c.fail, HM_FAIL_PROTOCOL);
        char want[96];
        snprintf(want, sizeof(want), "%zu unsolicited bytes after a complete HTTP 200 response",
                 sizeof(stray) - 1);
        ASSERT_STREQ(hm_reason(c.fail_why), want);
        ASSERT(c.head_len > 12 && !memcmp(c.head, "HTTP/1.1 500", 12)); /* the evidence */
    }
    hm_http_conn_free(&c);
}

static void split_arrivals(const hm_loop_options *lo)
{
    printf("a second response in a later piece of the same arrival\n");
    bool epoll = lo->backend == HM_BACKEND_EPOLL;
    const split_case cases[] = {
        {"ends a 2 KiB buffer", {2048}, 1, false},
        {"ends a 32 KiB buffer consumed in slices", {32768 - 1000, 1000}, 2, false},
        {"fills epoll's 64 KiB read", {100, 65536}, 2, true},
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(cases); i++) {
        if (cases[i].gate && !epoll) {
            /* io_uring sends from the loop's next turn, after the gate
             * would have blocked it; a 64 KiB write reaches io_uring's
             * 2 and 32 KiB buffers in parts, which the cases above cover. */
            printf("  %s: epoll only (the gate needs a send that leaves at once)\n", cases[i].what);
            continue;
        }
        split_server sv = {.sc = &cases[i]};
        sv.fd = socket(AF_INET, SOCK_STREAM, 0);
        ASSERT(sv.fd >= 0);
        struct sockaddr_in a = loopback_addr(0);
        ASSERT_EQ(bind(sv.fd, (struct sockaddr *)&a, sizeof(a)), 0);
        ASSERT_EQ(listen(sv.fd, 4), 0);
        pthread_t th;
        ASSERT_EQ(pthread_create(&th, NULL, split_serve, &sv), 0);
        hm_loop *loop; /* a fresh loop: its buffers start empty */
        ASSERT_EQ(hm_loop_create(&loop, lo), 0);
        ASSERT_EQ(hm_coro_spawn(loop, split_client, &sv, NULL), 0);
        ASSERT_EQ(hm_loop_run(loop), 0);
        hm_loop_destroy(loop);
        pthread_join(th, NULL);
        close(sv.fd);
    }
}

int main(int argc, char **argv)
{
    hm_loop_options lo = test_loop_options(argc, argv);
    use_async = argc > 2 && !strcmp(argv[2], "async");
    printf("driver: %s\n", use_async ? "callbacks (hm_http_conn_start)" : "a coroutine");
    split_arrivals(&lo);
    run_on_loop(&lo, tests, NULL);
    printf("ok\n");
    return 0;
}
