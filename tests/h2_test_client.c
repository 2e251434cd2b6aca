/* A small blocking HTTP/2 client for the bench_app tests (h2_test_client.h). */
#include "h2_test_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static h2t_stream *find(h2t *c, int32_t id)
{
    for (size_t i = 0; i < c->n_streams; i++)
        if (c->streams[i]->id == id) return c->streams[i];
    return NULL;
}

static ssize_t on_send(nghttp2_session *ng, const uint8_t *data, size_t len, int flags, void *user)
{
    (void)ng, (void)flags;
    h2t *c = user;
    send_all(c->fd, (const char *)data, len);
    return (ssize_t)len;
}

static int on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
                     const uint8_t *val, size_t vlen, uint8_t flags, void *user)
{
    (void)ng, (void)flags;
    h2t_stream *s = find(user, f->hd.stream_id);
    if (!s) return 0;
    if (nlen == 7 && !memcmp(name, ":status", 7)) {
        char num[8];
        copy_str(num, sizeof(num), (const char *)val, vlen);
        s->status = atoi(num);
        return 0;
    }
    size_t k = strlen(s->head);
    snprintf(s->head + k, sizeof(s->head) - k, "%.*s: %.*s\n", (int)nlen, name, (int)vlen, val);
    return 0;
}

static int on_data(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
                   void *user)
{
    (void)ng, (void)flags;
    h2t_stream *s = find(user, id);
    if (!s) return 0;
    if (s->len + len + 1 > s->cap) {
        s->cap = (s->len + len + 1) * 2;
        s->body = realloc(s->body, s->cap);
        ASSERT(s->body);
    }
    memcpy(s->body + s->len, data, len);
    s->len += len;
    s->body[s->len] = '\0';
    s->unconsumed += len;
    return 0;
}

static int on_close(nghttp2_session *ng, int32_t id, uint32_t code, void *user)
{
    (void)ng;
    h2t_stream *s = find(user, id);
    if (s) {
        s->closed = true;
        s->code = code;
    }
    return 0;
}

static int on_frame(nghttp2_session *ng, const nghttp2_frame *f, void *user)
{
    (void)ng;
    if (f->hd.type == NGHTTP2_GOAWAY) ((h2t *)user)->goaway = true;
    return 0;
}

h2t *h2t_open(int port, bool tls, const nghttp2_settings_entry *iv, size_t niv, bool manual_window)
{
    h2t *c = calloc(1, sizeof(*c));
    ASSERT(c);
    c->fd = tcp_connect_raw(port);
    if (tls) {
        ASSERT(g_tls);
        if (!tls_handshake(c->fd, true)) HM_FAIL_("TLS handshake with port %d failed", port);
        ASSERT_STREQ(g_alpn, "h2");
    }
    snprintf(c->authority, sizeof(c->authority), "127.0.0.1:%d", port);
    snprintf(c->scheme, sizeof(c->scheme), "%s", tls ? "https" : "http");
    c->manual_window = manual_window;
    nghttp2_session_callbacks *cb;
    ASSERT_EQ(nghttp2_session_callbacks_new(&cb), 0);
    nghttp2_session_callbacks_set_send_callback(cb, on_send);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
    nghttp2_option *opt;
    ASSERT_EQ(nghttp2_option_new(&opt), 0);
    if (manual_window) nghttp2_option_set_no_auto_window_update(opt, 1);
    ASSERT_EQ(nghttp2_session_client_new2(&c->ng, cb, c, opt), 0);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cb);
    ASSERT_EQ(nghttp2_submit_settings(c->ng, NGHTTP2_FLAG_NONE, iv, iv ? niv : 0), 0);
    ASSERT_EQ(nghttp2_session_send(c->ng), 0);
    return c;
}

/* A request body: sent from here, in as many DATA frames as it takes. The
 * tests send one body at a time (each request is sent before the next). */
typedef struct body_src {
    const char *p;
    size_t left;
} body_src;
static body_src g_body;

static ssize_t read_body(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *user)
{
    (void)ng, (void)id, (void)user;
    body_src *b = src->ptr;
    size_t k = b->left < length ? b->left : length;
    if (k) memcpy(buf, b->p, k);
    b->p += k;
    b->left -= k;
    if (!b->left) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)k;
}

h2t_stream *h2t_req(h2t *c, const char *method, const char *path, const char *const *fields,
                    const char *body)
{
    nghttp2_nv nv[32];
    size_t n = 0;
#define NV(k, v)                                                                                   \
    nv[n++] =                                                                                      \
        (nghttp2_nv){(uint8_t *)(k), (uint8_t *)(v), strlen(k), strlen(v), NGHTTP2_NV_FLAG_NONE}
    NV(":method", method);
    NV(":scheme", c->scheme);
    NV(":authority", c->authority);
    NV(":path", path);
    for (size_t i = 0; fields && fields[i] && n + 1 < HM_ARRAY_LEN(nv); i += 2)
        NV(fields[i], fields[i + 1]);
#undef NV
    ASSERT_LT(c->n_streams, HM_ARRAY_LEN(c->streams));
    h2t_stream *s = calloc(1, sizeof(*s));
    ASSERT(s);
    s->body = calloc(1, 1);
    ASSERT(s->body);
    s->cap = 1;
    g_body = (body_src){body, body ? strlen(body) : 0};
    nghttp2_data_provider dp = {.source.ptr = &g_body, .read_callback = read_body};
    int32_t id = nghttp2_submit_request(c->ng, NULL, nv, n, body ? &dp : NULL, NULL);
    ASSERT_GT(id, 0);
    s->id = id;
    c->streams[c->n_streams++] = s;
    /* The whole body goes now, while g_body holds it (a closed window
     * would fail the test here: the tests send small bodies). */
    ASSERT_EQ(nghttp2_session_send(c->ng), 0);
    ASSERT(!body || g_body.left == 0);
    return s;
}

bool h2t_pump(h2t *c, int64_t until_ms)
{
    ASSERT_EQ(nghttp2_session_send(c->ng), 0);
    if (c->eof) return false;
    char buf[16384];
    bool got = false;
    for (;;) {
        ssize_t n = read_until(c->fd, buf, sizeof(buf), got ? now_ms() : until_ms);
        if (n == -1) break;
        if (n <= 0) {
            c->eof = true;
            break;
        }
        got = true;
        ASSERT_EQ(nghttp2_session_mem_recv(c->ng, (const uint8_t *)buf, (size_t)n), n);
        ASSERT_EQ(nghttp2_session_send(c->ng), 0);
    }
    return got;
}

void h2t_wait(h2t *c, h2t_stream *s)
{
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    while (!s->closed) {
        if (c->eof) HM_FAIL_("the server closed the connection before stream %d ended", s->id);
        if (now_ms() > until) HM_FAIL_("stream %d did not end in %d ms", s->id, IO_TIMEOUT_MS);
        h2t_pump(c, until);
    }
}

size_t h2t_events(const h2t_stream *s)
{
    size_t n = 0;
    for (const char *p = s->body; p && (p = strstr(p, "\n\n")); p += 2)
        n++;
    return n;
}

size_t h2t_wait_events(h2t *c, h2t_stream *s, size_t n, int timeout_ms)
{
    int64_t until = now_ms() + timeout_ms;
    while (h2t_events(s) < n && !s->closed && !c->eof && now_ms() < until)
        h2t_pump(c, until);
    return h2t_events(s);
}

void h2t_consume(h2t *c, h2t_stream *s, size_t n)
{
    ASSERT(n <= s->unconsumed);
    s->unconsumed -= n;
    ASSERT_EQ(nghttp2_session_consume(c->ng, s->id, n), 0);
    ASSERT_EQ(nghttp2_session_send(c->ng), 0);
}

void h2t_rst(h2t *c, h2t_stream *s)
{
    ASSERT_EQ(nghttp2_submit_rst_stream(c->ng, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_CANCEL), 0);
    ASSERT_EQ(nghttp2_session_send(c->ng), 0);
}

bool h2t_field(const h2t_stream *s, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    for (const char *p = s->head; *p;) {
        const char *eol = strchr(p, '\n');
        if (!eol) break;
        if (!strncmp(p, name, nl) && p[nl] == ':' && p[nl + 1] == ' ') {
            copy_str(out, cap, p + nl + 2, (size_t)(eol - p - nl - 2));
            return true;
        }
        p = eol + 1;
    }
    return false;
}

void h2t_close(h2t *c)
{
    nghttp2_session_del(c->ng);
    fd_close(c->fd);
    for (size_t i = 0; i < c->n_streams; i++) {
        free(c->streams[i]->body);
        free(c->streams[i]);
    }
    free(c);
}
