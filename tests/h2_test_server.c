/* A misbehaving h2c server for the HTTP/2 client tests (h2_test_server.h). */
#include "h2_test_server.h"

#include "hm_test.h"
#include "hpack_raw.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 64
#define BIG_BODY (7u << 20)

typedef struct stream {
    int32_t id;
    char path[256];
    char method[16];
    char cookie[512];
    char body[4096];
    size_t body_len;
    const char *out; /* response body source */
    size_t out_len, out_off;
    bool sse, ping_wait, ended;
    bool drip_continuation; /* /continuation-slow: an empty CONTINUATION each tick */
    int sse_n;
    struct stream *next;
} stream;

typedef struct sconn {
    int fd;
    nghttp2_session *ng;
    stream *streams;
    bool close_after_flush, garbage;
    bool raw_only;   /* a connection mode (h2ts.mode): nghttp2 neither reads nor writes */
    bool block_open; /* /continuation-slow's header block is being dripped */
    /* Frames written by hand after nghttp2's output: what nghttp2 refuses to send. */
    unsigned char *raw;
    size_t raw_len, raw_off, raw_cap;
} sconn;

static sconn conns[MAX_CONNS];
static int n_accepted, n_client_resets, n_ping_acks;
static bool refused_once, goaway_once;
static char *big;
static char stats_buf[256];
static const char *conn_mode; /* h2ts.mode, for every connection */

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static stream *find(sconn *c, int32_t id)
{
    for (stream *s = c->streams; s; s = s->next)
        if (s->id == id) return s;
    return NULL;
}

/* Queues one frame as bytes: the 9-byte header, then the payload. */
static void raw_frame(sconn *c, uint8_t type, uint8_t flags, uint32_t sid, const void *payload,
                      size_t len)
{
    if (c->raw_len + 9 + len > c->raw_cap) {
        c->raw_cap = (c->raw_len + 9 + len) * 2;
        c->raw = realloc(c->raw, c->raw_cap);
        ASSERT(c->raw);
    }
    unsigned char *h = c->raw + c->raw_len;
    h[0] = (unsigned char)(len >> 16), h[1] = (unsigned char)(len >> 8), h[2] = (unsigned char)len;
    h[3] = type, h[4] = flags;
    h[5] = (unsigned char)(sid >> 24 & 0x7f), h[6] = (unsigned char)(sid >> 16);
    h[7] = (unsigned char)(sid >> 8), h[8] = (unsigned char)sid;
    if (len) memcpy(h + 9, payload, len);
    c->raw_len += 9 + len;
}

static void be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* Writes what raw_frame queued, as far as the socket takes it. */
static int raw_flush(sconn *c)
{
    while (c->raw_off < c->raw_len) {
        ssize_t w =
            send(c->fd, c->raw + c->raw_off, c->raw_len - c->raw_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) return errno == EAGAIN ? 0 : -1;
        c->raw_off += (size_t)w;
    }
    c->raw_off = c->raw_len = 0;
    return 0;
}

static ssize_t on_send(nghttp2_session *ng, const uint8_t *data, size_t len, int flags, void *user)
{
    (void)ng, (void)flags;
    sconn *c = user;
    ssize_t w = send(c->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) return errno == EAGAIN ? NGHTTP2_ERR_WOULDBLOCK : NGHTTP2_ERR_CALLBACK_FAILURE;
    return w;
}

static ssize_t read_out(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
                        uint32_t *flags, nghttp2_data_source *src, void *user)
{
    (void)ng, (void)id, (void)user;
    stream *s = src->ptr;
    if (s->sse) {
        if (s->out_off == s->out_len) return NGHTTP2_ERR_DEFERRED;
    }
    size_t k = s->out_len - s->out_off < length ? s->out_len - s->out_off : length;
    memcpy(buf, s->out + s->out_off, k);
    s->out_off += k;
    if (!s->sse && s->out_off == s->out_len) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)k;
}

static void respond(sconn *c, stream *s, const char *status, const nghttp2_nv *extra, size_t nextra,
                    const char *body, size_t len)
{
    nghttp2_nv nv[96];
    size_t n = 0;
    nv[n++] = (nghttp2_nv){(uint8_t *)":status", (uint8_t *)status, 7, strlen(status), 0};
    for (size_t i = 0; i < nextra; i++)
        nv[n++] = extra[i];
    s->out = body;
    s->out_len = len;
    s->out_off = 0;
    nghttp2_data_provider dp = {.source.ptr = s, .read_callback = read_out};
    ASSERT_EQ(nghttp2_submit_response(c->ng, s->id, nv, n, body || s->sse ? &dp : NULL), 0);
}

#define NV(k, v)                                                                                   \
    {                                                                                              \
        (uint8_t *)(k), (uint8_t *)(v), sizeof(k) - 1, strlen(v), 0                                \
    }

static void answer_ok(sconn *c, stream *s)
{
    static const char body[] = "hello";
    nghttp2_nv extra[] = {NV("x-via-worker", "7"), NV("set-cookie", "a=1; path=/"),
                          NV("set-cookie", "b=2; path=/"), NV("content-type", "text/plain")};
    respond(c, s, "200", extra, 4, body, 5);
}

enum {
    F_DATA,
    F_HEADERS,
    F_PRIORITY,
    F_RST,
    F_SETTINGS,
    F_PUSH,
    F_PING,
    F_GOAWAY,
    F_WINDOW,
    F_CONT
};
enum { END_STREAM = 1, END_HEADERS = 4, ACK = 1 };

/* A header block of len bytes as a HEADERS frame and as many
 * CONTINUATIONs as frames of the default 16 KiB maximum take. */
static void raw_block(sconn *c, uint32_t id, const unsigned char *b, size_t len)
{
    enum { MAX_FRAME = 16384 };
    for (size_t off = 0; off == 0 || off < len; off += MAX_FRAME) {
        size_t n = len - off < MAX_FRAME ? len - off : MAX_FRAME;
        bool last = off + n == len;
        raw_frame(c, off ? F_CONT : F_HEADERS, (off ? 0 : END_STREAM) | (last ? END_HEADERS : 0),
                  id, b + off, n);
    }
}

/* The HPACK abuses (h2_test_server.h): hammer announced a 64 KiB header
 * table (SETTINGS_HEADER_TABLE_SIZE 65536). Returns false for another path. */
static bool answer_hpack(sconn *c, stream *s, const char *p)
{
    static unsigned char b[1 << 18];
    size_t k = 0;
    if (!strcmp(p, "/hpack-size-over")) {
        k += hpack_int(b + k, 5, 0x20, 65536 + 1); /* a size update past the SETTINGS */
        b[k++] = 0x88;
    } else if (!strcmp(p, "/hpack-size-max")) {
        k += hpack_int(b + k, 5, 0x20, 65536); /* the SETTINGS' own: allowed */
        b[k++] = 0x88;
    } else if (!strcmp(p, "/hpack-size-late")) {
        b[k++] = 0x88;
        k += hpack_int(b + k, 5, 0x20, 0); /* after a field: not allowed there */
    } else if (!strcmp(p, "/hpack-bad-index")) {
        b[k++] = 0x88;
        k += hpack_int(b + k, 7, 0x80, 10000); /* far past the static and dynamic tables */
    } else if (!strcmp(p, "/hpack-churn")) {
        /* 4000-byte fields inserted one after another into the 4 KiB
         * table the server's encoder keeps (each evicts the one before),
         * each referenced four times: 64 KiB of frames (under the limit
         * as frames, three CONTINUATIONs) that decode to 320 KB. */
        b[k++] = 0x88;
        for (int i = 0; k + 4020 <= 4 * 16384; i++) {
            char name[16];
            snprintf(name, sizeof(name), "x-churn-%02d", i % 100);
            k += hpack_insert(b + k, name, 4000);
            for (int r = 0; r < 4; r++)
                b[k++] = 0xbe; /* index 62: the newest entry */
        }
    } else if (!strcmp(p, "/hpack-bomb")) {
        /* One 4000-byte entry, then 16,000 one-byte references to it: a
         * 16 KiB frame that decodes to 64 MB of header list. */
        b[k++] = 0x88;
        k += hpack_insert(b + k, "x-bomb", 4000);
        while (k < 16384)
            b[k++] = 0xbe;
    } else {
        return false;
    }
    raw_block(c, (uint32_t)s->id, b, k);
    return true;
}

/* The hostile answers, written by hand (h2_test_server.h). Returns false
 * for a path that is none of them. */
static bool answer_hostile(sconn *c, stream *s, const char *p)
{
    uint32_t id = (uint32_t)s->id;
    /* HPACK: 0x88 is the indexed :status 200; 0x08 + length + value a
     * literal :status (name index 8) without indexing; 0x00 + name + value
     * a literal field with a new name. */
    static const unsigned char status_200[] = {0x88};
    if (!strcmp(p, "/no-status")) {
        static const unsigned char f[] = {0x00, 3, 'x', '-', 'a', 1, 'b'};
        raw_frame(c, F_HEADERS, END_STREAM | END_HEADERS, id, f, sizeof(f));
    } else if (!strcmp(p, "/endless-100")) {
        static const unsigned char f[] = {0x08, 3, '1', '0', '0'};
        for (int i = 0; i < 40; i++)
            raw_frame(c, F_HEADERS, END_HEADERS, id, f, sizeof(f));
    } else if (!strcmp(p, "/huge-head")) {
        /* :status 200, then 1 MiB of fields in CONTINUATION frames of 16 x 1010 bytes. */
        static unsigned char f[16 * 1010];
        for (int i = 0; i < 16; i++) {
            unsigned char *q = f + i * 1010;
            q[0] = 0x00, q[1] = 5, memcpy(q + 2, "x-fat", 5);
            q[7] = 0x7f, q[8] = 0xe9, q[9] = 0x06; /* 1000 = 127 + 873 (0x69 | 0x80, 6) */
            memset(q + 10, 'v', 1000);
        }
        raw_frame(c, F_HEADERS, END_STREAM, id, status_200, 1);
        for (int i = 0; i < 65; i++)
            raw_frame(c, F_CONT, i == 64 ? END_HEADERS : 0, id, f, sizeof(f));
    } else if (!strcmp(p, "/continuation-flood")) {
        raw_frame(c, F_HEADERS, END_STREAM, id, status_200, 1);
        for (int i = 0; i < 10000; i++)
            raw_frame(c, F_CONT, 0, id, NULL, 0);
    } else if (!strcmp(p, "/continuation-slow")) {
        /* One open header block per connection: no frame may come between
         * its CONTINUATIONs, so the connection's other streams wait. */
        if (c->block_open) return true;
        c->block_open = true;
        raw_frame(c, F_HEADERS, END_STREAM, id, status_200, 1);
        s->drip_continuation = true;
    } else if (!strcmp(p, "/window-overflow")) {
        unsigned char inc[4];
        be32(inc, 0x7fffffff); /* on the connection's 15 MiB window: past 2^31-1 */
        raw_frame(c, F_WINDOW, 0, 0, inc, 4);
    } else if (!strcmp(p, "/push")) {
        /* promised stream 2: GET / over http, :authority 127.0.0.1 */
        static const unsigned char f[] = {0,   0,   0,   2,   0x82, 0x84, 0x86, 0x41, 9,
                                          '1', '2', '7', '.', '0',  '.',  '0',  '.',  '1'};
        raw_frame(c, F_PUSH, END_HEADERS, id, f, sizeof(f));
    } else if (!strcmp(p, "/goaway-even")) {
        unsigned char f[8] = {0};
        be32(f, 2); /* an even id: no stream the client could open */
        raw_frame(c, F_GOAWAY, 0, 0, f, 8);
    } else if (!strcmp(p, "/goaway-high")) {
        /* A last-stream-id above every stream opened (a graceful shutdown's
         * 2^31-1), then the answer: the stream is within it. */
        unsigned char f[8] = {0};
        be32(f, 0x7fffffff);
        raw_frame(c, F_GOAWAY, 0, 0, f, 8);
        answer_ok(c, s);
    } else if (!strcmp(p, "/settings-flood") || !strcmp(p, "/ping-flood")) {
        bool ping = p[1] == 'p';
        static const unsigned char opaque[8] = "hammer!";
        for (int i = 0; i < 100000; i++)
            raw_frame(c, ping ? F_PING : F_SETTINGS, 0, 0, ping ? opaque : NULL, ping ? 8 : 0);
        answer_ok(c, s);
    } else {
        return answer_hpack(c, s, p);
    }
    return true;
}

/* Whether path was asked for before (a few distinct paths are tracked). */
static bool seen_before(const char *path)
{
    static char seen[16][256];
    for (size_t i = 0; i < 16; i++) {
        if (!strcmp(seen[i], path)) return true;
        if (!seen[i][0]) {
            snprintf(seen[i], sizeof(seen[i]), "%s", path);
            return false;
        }
    }
    return true;
}

static void answer(sconn *c, stream *s)
{
    const char *p = s->path;
    /* /first-ok-TAG/PATH: the first request as /ok (a client's reachability
     * check passes), every later one as /PATH. */
    if (!strncmp(p, "/first-ok-", 10) && strchr(p + 10, '/')) {
        if (!seen_before(p)) {
            answer_ok(c, s);
            return;
        }
        p = strchr(p + 10, '/');
    }
    if (answer_hostile(c, s, p)) {
        /* written by hand */
    } else if (!strcmp(p, "/ok")) {
        answer_ok(c, s);
    } else if (!strcmp(p, "/echo")) {
        static char echo[8192];
        int k = snprintf(echo, sizeof(echo), "%s|%s|%.*s", s->method, s->cookie, (int)s->body_len,
                         s->body);
        respond(c, s, "200", NULL, 0, echo, (size_t)k);
    } else if (!strcmp(p, "/big")) {
        respond(c, s, "200", NULL, 0, big, BIG_BODY);
    } else if (!strcmp(p, "/silent")) {
        /* nothing */
    } else if (!strcmp(p, "/refuse-once")) {
        if (!refused_once) {
            refused_once = true;
            nghttp2_submit_rst_stream(c->ng, 0, s->id, NGHTTP2_REFUSED_STREAM);
        } else {
            answer_ok(c, s);
        }
    } else if (!strcmp(p, "/goaway-once")) {
        if (!goaway_once) {
            goaway_once = true;
            nghttp2_submit_goaway(c->ng, 0, s->id - 2, NGHTTP2_NO_ERROR, NULL, 0);
            c->close_after_flush = true;
        } else {
            answer_ok(c, s);
        }
    } else if (!strcmp(p, "/goaway-calm")) {
        /* The stream is within the GOAWAY, so not refused: it dies with the
         * connection. One GOAWAY per connection: a second one queued before
         * the first is sent would raise its last-stream-id, a protocol error
         * of ours (RFC 9113 §6.8) the client rightly reports as such. */
        if (!c->close_after_flush)
            nghttp2_submit_goaway(c->ng, 0, s->id, NGHTTP2_ENHANCE_YOUR_CALM, NULL, 0);
        c->close_after_flush = true;
    } else if (!strcmp(p, "/reset")) {
        nghttp2_submit_rst_stream(c->ng, 0, s->id, NGHTTP2_INTERNAL_ERROR);
    } else if (!strcmp(p, "/close")) {
        s->sse = true; /* a head, no body yet */
        respond(c, s, "200", NULL, 0, NULL, 0);
        c->close_after_flush = true;
    } else if (!strcmp(p, "/garbage")) {
        c->garbage = true;
    } else if (!strcmp(p, "/fat-head")) {
        static char val[1024];
        memset(val, 'v', sizeof(val) - 1);
        nghttp2_nv extra[80];
        for (int i = 0; i < 80; i++)
            extra[i] = (nghttp2_nv){(uint8_t *)"x-fat", (uint8_t *)val, 5, sizeof(val) - 1,
                                    NGHTTP2_NV_FLAG_NO_INDEX};
        respond(c, s, "200", extra, 80, "x", 1);
    } else if (!strcmp(p, "/ping")) {
        s->ping_wait = true;
        nghttp2_submit_ping(c->ng, 0, NULL);
    } else if (!strcmp(p, "/sse")) {
        s->sse = true;
        respond(c, s, "200", NULL, 0, NULL, 0);
    } else if (!strcmp(p, "/early-100")) {
        nghttp2_nv hints[] = {NV(":status", "103"), NV("link", "</x.css>; rel=preload")};
        nghttp2_submit_headers(c->ng, 0, s->id, NULL, hints, 2, NULL);
        answer_ok(c, s);
    } else if (!strcmp(p, "/stats")) {
        int k = snprintf(stats_buf, sizeof(stats_buf),
                         "{\"connections\":%d,\"client_resets\":%d,\"ping_acks\":%d}", n_accepted,
                         n_client_resets, n_ping_acks);
        respond(c, s, "200", NULL, 0, stats_buf, (size_t)k);
    } else {
        respond(c, s, "404", NULL, 0, "no", 2);
    }
}

static int on_begin_headers(nghttp2_session *ng, const nghttp2_frame *f, void *user)
{
    sconn *c = user;
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    stream *s = calloc(1, sizeof(*s));
    ASSERT(s);
    s->id = f->hd.stream_id;
    s->next = c->streams;
    c->streams = s;
    (void)ng;
    return 0;
}

static int on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
                     const uint8_t *val, size_t vlen, uint8_t flags, void *user)
{
    (void)ng, (void)flags;
    stream *s = find(user, f->hd.stream_id);
    if (!s) return 0;
    char *dst = NULL;
    size_t cap = 0;
    if (nlen == 5 && !memcmp(name, ":path", 5)) dst = s->path, cap = sizeof(s->path);
    if (nlen == 7 && !memcmp(name, ":method", 7)) dst = s->method, cap = sizeof(s->method);
    if (nlen == 6 && !memcmp(name, "cookie", 6)) dst = s->cookie, cap = sizeof(s->cookie);
    if (dst) snprintf(dst, cap, "%.*s", (int)vlen, val);
    return 0;
}

static int on_data(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
                   void *user)
{
    (void)ng, (void)flags;
    stream *s = find(user, id);
    if (!s) return 0;
    size_t k = len < sizeof(s->body) - s->body_len ? len : sizeof(s->body) - s->body_len;
    memcpy(s->body + s->body_len, data, k);
    s->body_len += k;
    return 0;
}

static int on_frame_recv(nghttp2_session *ng, const nghttp2_frame *f, void *user)
{
    (void)ng;
    sconn *c = user;
    if (f->hd.type == NGHTTP2_PING && (f->hd.flags & NGHTTP2_FLAG_ACK)) {
        n_ping_acks++;
        for (stream *s = c->streams; s; s = s->next) {
            if (!s->ping_wait) continue;
            s->ping_wait = false;
            respond(c, s, "200", NULL, 0, "acked", 5);
        }
        return 0;
    }
    if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) &&
        (f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
        stream *s = find(c, f->hd.stream_id);
        if (s && !s->ended) {
            s->ended = true;
            answer(c, s);
        }
    }
    if (f->hd.type == NGHTTP2_RST_STREAM) n_client_resets++;
    return 0;
}

static int on_stream_close(nghttp2_session *ng, int32_t id, uint32_t code, void *user)
{
    (void)ng, (void)code;
    sconn *c = user;
    for (stream **pp = &c->streams; *pp; pp = &(*pp)->next) {
        if ((*pp)->id == id) {
            stream *s = *pp;
            *pp = s->next;
            free(s);
            break;
        }
    }
    return 0;
}

static void conn_close(sconn *c)
{
    nghttp2_session_del(c->ng);
    close(c->fd);
    free(c->raw);
    while (c->streams) {
        stream *s = c->streams;
        c->streams = s->next;
        free(s);
    }
    memset(c, 0, sizeof(*c));
    c->fd = -1;
}

static void conn_open(int fd)
{
    for (int i = 0; i < MAX_CONNS; i++) {
        sconn *c = &conns[i];
        if (c->fd >= 0) continue;
        c->fd = fd;
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        n_accepted++;
        if (conn_mode) { /* h2ts.mode: the whole connection misbehaves */
            c->raw_only = true;
            if (!strcmp(conn_mode, "settings-window")) {
                /* The first SETTINGS: INITIAL_WINDOW_SIZE 2^31, one past the maximum. */
                unsigned char e[6] = {0, 4};
                be32(e + 2, 0x80000000u);
                raw_frame(c, F_SETTINGS, 0, 0, e, 6);
            } /* "no-settings": nothing, ever */
            return;
        }
        nghttp2_session_callbacks *cb;
        nghttp2_session_callbacks_new(&cb);
        nghttp2_session_callbacks_set_send_callback(cb, on_send);
        nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
        nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
        nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
        nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
        nghttp2_option *opt;
        nghttp2_option_new(&opt);
        nghttp2_option_set_max_send_header_block_length(opt, 1 << 20);
        nghttp2_session_server_new2(&c->ng, cb, c, opt);
        nghttp2_option_del(opt);
        nghttp2_session_callbacks_del(cb);
        nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100}};
        nghttp2_submit_settings(c->ng, 0, iv, 1);
        return;
    }
    close(fd);
}

static void serve(int lfd)
{
    for (int i = 0; i < MAX_CONNS; i++)
        conns[i].fd = -1;
    big = malloc(BIG_BODY);
    ASSERT(big);
    memset(big, 'b', BIG_BODY);
    int64_t next_tick = mono_ms() + 20;
    for (;;) {
        struct pollfd pf[MAX_CONNS + 1];
        int map[MAX_CONNS + 1], n = 0;
        pf[n] = (struct pollfd){.fd = lfd, .events = POLLIN};
        map[n++] = -1;
        for (int i = 0; i < MAX_CONNS; i++) {
            sconn *c = &conns[i];
            if (c->fd < 0) continue;
            short ev = POLLIN;
            if ((!c->raw_only && nghttp2_session_want_write(c->ng)) || c->raw_len) ev |= POLLOUT;
            pf[n] = (struct pollfd){.fd = c->fd, .events = ev};
            map[n++] = i;
        }
        poll(pf, (nfds_t)n, 10);
        if (pf[0].revents & POLLIN) {
            int fd = accept(lfd, NULL, NULL);
            if (fd >= 0) conn_open(fd);
        }
        bool tick = mono_ms() >= next_tick;
        if (tick) next_tick = mono_ms() + 20;
        for (int k = 1; k < n; k++) {
            sconn *c = &conns[map[k]];
            if (c->fd < 0) continue;
            if (pf[k].revents & (POLLIN | POLLHUP | POLLERR)) {
                char buf[65536];
                ssize_t r = recv(c->fd, buf, sizeof(buf), 0);
                if (r <= 0 && !(r < 0 && errno == EAGAIN)) {
                    conn_close(c);
                    continue;
                }
                if (r > 0 && !c->raw_only &&
                    nghttp2_session_mem_recv(c->ng, (uint8_t *)buf, (size_t)r) < 0) {
                    conn_close(c);
                    continue;
                }
            }
            if (c->raw_only) {
                if (raw_flush(c) < 0) conn_close(c);
                continue;
            }
            if (tick) {
                for (stream *s = c->streams; s; s = s->next) {
                    if (s->drip_continuation) raw_frame(c, F_CONT, 0, (uint32_t)s->id, NULL, 0);
                    if (!s->sse || strcmp(s->path, "/sse")) continue;
                    static char ev[64][32];
                    int len = snprintf(ev[s->sse_n % 64], 32, "data: %d\n\n", s->sse_n);
                    s->out = ev[s->sse_n % 64];
                    s->out_len = (size_t)len;
                    s->out_off = 0;
                    s->sse_n++;
                    nghttp2_session_resume_data(c->ng, s->id);
                }
            }
            /* nghttp2's frames go before ours written by hand, never into
             * them once begun (a header block and its CONTINUATIONs admit
             * none in between). */
            if (!c->raw_off && nghttp2_session_send(c->ng) != 0) {
                conn_close(c);
                continue;
            }
            if (c->garbage) { /* after our SETTINGS: the client knows it is HTTP/2 */
                /* HEADERS on stream 0: a connection error (PROTOCOL_ERROR). */
                static const unsigned char junk[] = {0, 0, 4, 1, 4, 0, 0, 0, 0, 'x', 'x', 'x', 'x'};
                send(c->fd, junk, sizeof(junk), MSG_NOSIGNAL);
                c->garbage = false;
            }
            if (raw_flush(c) < 0) {
                conn_close(c);
                continue;
            }
            if (c->close_after_flush && !nghttp2_session_want_write(c->ng) && !c->raw_len)
                conn_close(c);
        }
    }
}

void h2ts_start(h2ts *s)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT(lfd >= 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    ASSERT_EQ(listen(lfd, 128), 0);
    socklen_t len = sizeof(a);
    getsockname(lfd, (struct sockaddr *)&a, &len);
    s->port = ntohs(a.sin_port);
    fflush(NULL);
    pid_t parent = getpid();
    s->pid = fork();
    ASSERT(s->pid >= 0);
    if (s->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        signal(SIGPIPE, SIG_IGN);
        conn_mode = s->mode;
        serve(lfd);
        _exit(0);
    }
    close(lfd);
}

void h2ts_stop(h2ts *s)
{
    if (s->pid <= 0) return;
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
}
