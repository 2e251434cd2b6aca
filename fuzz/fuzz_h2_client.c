/* fuzz_h2_client.c — hammer's HTTP/2 client (src/proto/h2_client.c,
 * h2_streams.c, h2_errors.c): what a server sends after the client's
 * preface, and what hammer makes of it.
 *
 * The payload is the server's bytes of one h2c connection (its SETTINGS,
 * HEADERS, DATA, RST_STREAM, GOAWAY ... as frames). A server thread of
 * this harness listens on 127.0.0.1: for each connection it reads the
 * client preface and the HEADERS of the streams in flight, writes the
 * payload in the pieces the split bytes choose, then closes its side and
 * reads until the client has closed (so no reset races the bytes). On the
 * loop, streams go on one shared hm_h2_conn as hm_http_conns do (a
 * browser tab's, or get's --streams), through the engine as in hammer:
 * the reader feeds nghttp2 with the client session and callbacks of
 * h2_client.c. A stream ends in an answer with a status, or in a failure
 * with a kind and a reason in words; nothing crashes or leaks, and a
 * refused or GOAWAY'd stream is sent again only once (a new connection
 * gets the same payload).
 *
 * Flags (byte 0):
 *   bits 0-1  streams in flight at once: 1 to 4
 *   bit 2     requests are POSTs with a body (not idempotent: never re-sent
 *             after the server saw them)
 *   bit 3     the last stream streams its body (on_body), as an SSE one */
#include "fuzz_common.h"

#include "base/hm_base.h"
#include "engine/engine.h"
#include "proto/h2_client.h"
#include "proto/http_client.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { F_STREAMS = 3, F_POST = 4, F_STREAMING = 8 };

/* A round trip on loopback takes well under this; the deadline only bounds
 * a payload that leaves a stream open (the server closes after it anyway). */
#define DEADLINE_NS (2000LL * 1000 * 1000)
#define READ_WAIT_MS 300

/* ---- the server thread ------------------------------------------------------ */

static int listen_fd = -1, port;
/* The payload of the input being run, copied: a connection the client gave
 * up may still be served after the input's own memory is gone. */
static pthread_mutex_t payload_lock = PTHREAD_MUTEX_INITIALIZER;
static hm_fuzz_input payload;
static _Atomic int first_conn; /* the input's first connection waits for every stream */
static int streams;

/* Reads the preface and frames until want HEADERS frames arrived (or the
 * client is quiet for READ_WAIT_MS, or closes). */
static void read_requests(int fd, int want)
{
    uint8_t buf[16384];
    size_t have = 0, pos = 24; /* frames start after the 24-byte preface */
    int seen = 0;
    while (seen < want) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, READ_WAIT_MS) <= 0) return;
        ssize_t n = read(fd, buf + have, sizeof(buf) - have);
        if (n <= 0) return;
        have += (size_t)n;
        while (pos + 9 <= have) {
            size_t len = (size_t)buf[pos] << 16 | (size_t)buf[pos + 1] << 8 | buf[pos + 2];
            if (buf[pos + 3] == 1) seen++; /* HEADERS */
            pos += 9 + len;
        }
        if (have == sizeof(buf)) { /* keep only what the next frame header needs */
            if (pos >= have) {
                pos -= have;
                have = 0;
            } else {
                memmove(buf, buf + pos, have - pos);
                have -= pos;
                pos = 0;
            }
        }
    }
}

static void serve(int fd)
{
    hm_fuzz_input in = {0};
    pthread_mutex_lock(&payload_lock);
    in = payload;
    in.data = malloc(payload.len + 1);
    if (in.data) memcpy(in.data, payload.data, payload.len);
    pthread_mutex_unlock(&payload_lock);
    if (!in.data) hm_fuzz_fail("out of memory");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    read_requests(fd, atomic_exchange(&first_conn, 0) ? streams : 1);
    size_t off = 0;
    for (size_t i = 0; off < in.len; i++) {
        size_t k = hm_fuzz_piece(&in, i, in.len - off);
        ssize_t w = send(fd, in.data + off, k, MSG_NOSIGNAL);
        if (w <= 0) break;
        off += (size_t)w;
    }
    free(in.data);
    shutdown(fd, SHUT_WR);
    char sink[4096];
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (poll(&p, 1, 2 * READ_WAIT_MS) > 0 && read(fd, sink, sizeof(sink)) > 0) {
    }
    close(fd);
}

static void *server_main(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd >= 0) serve(fd);
    }
    return NULL;
}

static void server_start(void)
{
    listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        listen(listen_fd, 16) < 0 || getsockname(listen_fd, (struct sockaddr *)&a, &al) < 0)
        hm_fuzz_fail("cannot listen on 127.0.0.1");
    port = ntohs(a.sin_port);
    pthread_t t;
    if (pthread_create(&t, NULL, server_main, NULL) != 0) hm_fuzz_fail("pthread_create");
    pthread_detach(t);
}

/* ---- the client streams ---------------------------------------------------- */

static hm_http_target target;

typedef struct one {
    const hm_fuzz_input *in;
    hm_h2_conn *h2;
    hm_waitgroup *wg;
    bool streaming;
    size_t streamed;
    int idx;
} one;

static int on_headers(void *user, hm_http_resp_parser *p)
{
    (void)user;
    HM_FUZZ_CHECK(p->status >= 100 && p->status <= 999);
    return 0;
}

static int on_body(void *user, const char *at, size_t len)
{
    one *o = user;
    HM_FUZZ_CHECK(at || !len);
    o->streamed += len;
    return 0;
}

static void stream_main(void *arg)
{
    one *o = arg;
    hm_http_conn c;
    hm_http_conn_init_shared(&c, &target, NULL, o->h2);
    bool post = o->in->flags & F_POST;
    char path[32], req[512];
    snprintf(path, sizeof(path), "/s%d", o->idx);
    ssize_t n =
        hm_http_write_request(req, sizeof(req), post ? "POST" : "GET", path, target.host_header,
                              NULL, 0, post ? "x=1" : NULL, post ? 3 : 0);
    HM_FUZZ_CHECK(n > 0);
    int64_t deadline = hm_now_ns() + DEADLINE_NS;
    int rc;
    if (o->streaming) {
        rc = hm_http_conn_stream(&c, req, (size_t)n, deadline, on_headers, on_body, o);
    } else {
        hm_http_xopts xo = {.idempotent = !post, .deadline = deadline};
        rc = hm_http_conn_exchange(&c, req, (size_t)n, &xo);
    }
    if (rc == 0) {
        HM_FUZZ_CHECK(c.fail == HM_FAIL_NONE);
        HM_FUZZ_CHECK(c.resp.status >= 200 && c.resp.status <= 999);
    } else {
        /* A failure has a kind, and a reason in words. */
        HM_FUZZ_CHECK(rc < 0);
        HM_FUZZ_CHECK(c.fail > HM_FAIL_NONE && c.fail < HM_FAIL__COUNT);
        const char *why = hm_http_conn_fail_reason(&c, rc);
        if (!why || !why[0] || strstr(why, "Unknown error"))
            hm_fuzz_fail("stream failed (%d, %s) without a reason: '%s'", rc,
                         hm_fail_kind_name(c.fail), why ? why : "(null)");
    }
    /* Sent again at most once: a refused stream or one a GOAWAY excluded. */
    HM_FUZZ_CHECK(c.retries <= 1);
    hm_http_conn_free(&c);
    if (o->wg) hm_wg_done(o->wg);
}

static void body(void *arg)
{
    const hm_fuzz_input *in = arg;
    if (listen_fd < 0) {
        server_start();
        char url[64];
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
        if (hm_http_target_from_url(url, &target, NULL) < 0) hm_fuzz_fail("target %s", url);
        target.http2 = true;
    }
    streams = 1 + (in->flags & F_STREAMS);
    pthread_mutex_lock(&payload_lock);
    free(payload.data);
    payload = *in;
    payload.data = malloc(in->len + 1);
    if (payload.data) memcpy(payload.data, in->data, in->len);
    pthread_mutex_unlock(&payload_lock);
    if (!payload.data) hm_fuzz_fail("out of memory");
    atomic_store(&first_conn, 1);
    hm_h2_conn *h2;
    HM_FUZZ_CHECK(hm_h2_conn_create(&h2, &target) == 0);
    hm_waitgroup wg;
    hm_wg_init(&wg);
    one os[4];
    for (int i = 0; i < streams; i++)
        os[i] = (one){.in = in,
                      .h2 = h2,
                      .wg = i ? &wg : NULL,
                      .idx = i,
                      .streaming = (in->flags & F_STREAMING) && i == streams - 1};
    hm_wg_add(&wg, streams - 1);
    for (int i = 1; i < streams; i++)
        HM_FUZZ_CHECK(hm_coro_spawn(NULL, stream_main, &os[i], NULL) == 0);
    stream_main(&os[0]); /* on the measured stack */
    HM_FUZZ_CHECK(hm_wg_wait(&wg, 0) == 0);
    hm_h2_conn_free(h2);
}

HM_FUZZ_ENTRY(body)
