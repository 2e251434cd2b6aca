/* bench_app --http2: h2c with prior knowledge on a cleartext port (which
 * still serves HTTP/1.1 to everyone else) and h2 through ALPN over TLS
 * (which still serves http/1.1 to clients that offer only that). On both:
 * the routes and their answers (lower-case fields, no Connection), one
 * connection per tab carrying the page, its SSE stream (a DATA frame per
 * event, the stream left open) and its actions, cookie crumbs joined as
 * one Cookie, the header and body limits, a stream the client resets
 * noticed at the next patch, flow control (a stream's window caps what is
 * sent, actions still answer, the rest follows the WINDOW_UPDATE), a
 * client's protocol error (GOAWAY, then the close), and the stop with a
 * stream open. On h2c an action's patch leaves in a write of its own,
 * before the action's answer, as OpenSwoole writes it (TCP_INFO counts
 * the segments). --workers 2 with HTTP/2 is refused.
 * argv[1]: the engine backend. */
#include "h2_test_client.h"

#include <linux/tcp.h> /* struct tcp_info with tcpi_data_segs_in */
#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>

static SSL_CTX *tls_h1, *tls_h2;

typedef struct h2page {
    char ctx[128], hex[17], cookie[160]; /* cookie: "via_session_id=..." */
} h2page;

static void fields_of_action(const h2page *pg, const char *origin, const char *f[8])
{
    int n = 0;
    f[n++] = "content-type";
    f[n++] = "application/json";
    f[n++] = "cookie";
    f[n++] = pg->cookie;
    f[n++] = "origin";
    f[n++] = origin;
    f[n] = NULL;
}

static void load_page(h2t *c, h2page *pg)
{
    h2t_stream *s = h2t_req(c, "GET", "/bench/counter", NULL, NULL);
    h2t_wait(c, s);
    ASSERT_EQ(s->code, 0);
    ASSERT_EQ(s->status, 200);
    char v[512];
    ASSERT(h2t_field(s, "content-type", v, sizeof(v)));
    ASSERT_STREQ(v, "text/html; charset=utf-8");
    ASSERT(!h2t_field(s, "connection", v, sizeof(v))); /* HTTP/2 carries none */
    ASSERT(h2t_field(s, "x-via-worker", v, sizeof(v)));
    ASSERT_STREQ(v, "0");
    ASSERT(h2t_field(s, "content-length", v, sizeof(v)));
    ASSERT_EQ((size_t)atoi(v), s->len);
    ASSERT(h2t_field(s, "set-cookie", v, sizeof(v)));
    ASSERT_EQ(strncmp(v, "via_session_id=", 15), 0);
    copy_str(pg->cookie, sizeof(pg->cookie), v, strcspn(v, ";"));
    const char *m = strstr(s->body, "{\"via_ctx\":\"\\/bench\\/counter_\\/");
    ASSERT(m);
    const char *hex = m + strlen("{\"via_ctx\":\"\\/bench\\/counter_\\/");
    ASSERT(is_hex(hex, 16));
    copy_str(pg->hex, sizeof(pg->hex), hex, 16);
    snprintf(pg->ctx, sizeof(pg->ctx), "/bench/counter_/%s", pg->hex);
}

static h2t_stream *open_sse(h2t *c, const h2page *pg, const char *cookie)
{
    char json[256], enc[512], path[640];
    snprintf(json, sizeof(json), "{\"via_ctx\":\"%s\"}", pg->ctx);
    url_encode(json, enc, sizeof(enc));
    snprintf(path, sizeof(path), "/_sse?datastar=%s", enc);
    const char *f[] = {"accept", "text/event-stream", "cookie", cookie, NULL};
    return h2t_req(c, "GET", path, f, NULL);
}

static int fire(h2t *c, const h2page *pg, const char *origin)
{
    char body[256];
    snprintf(body, sizeof(body), "{\"via_ctx\":\"%s\"}", pg->ctx);
    const char *f[8];
    fields_of_action(pg, origin, f);
    h2t_stream *s = h2t_req(c, "POST", "/_action/increment", f, body);
    h2t_wait(c, s);
    ASSERT_EQ(s->code, 0);
    ASSERT_EQ(s->len, 0);
    return s->status;
}

/* The last event's count value. */
static long long last_count(const h2t_stream *s, const h2page *pg)
{
    char wire[96];
    snprintf(wire, sizeof(wire), "\"count__bench_counter__%s\":", pg->hex);
    const char *p = NULL;
    for (const char *q = s->body; (q = strstr(q, wire)); q++)
        p = q;
    ASSERT(p);
    return atoll(p + strlen(wire));
}

/* Segments carrying data the connection has received so far. */
static unsigned data_segs_in(int fd)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    memset(&ti, 0, sizeof(ti));
    ASSERT_EQ(getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len), 0);
    ASSERT_GE((size_t)len,
              offsetof(struct tcp_info, tcpi_data_segs_in) + sizeof(ti.tcpi_data_segs_in));
    return ti.tcpi_data_segs_in;
}

static long long h2_health(h2t *c, const char *what)
{
    h2t_stream *s = h2t_req(c, "GET", "/_health", NULL, NULL);
    h2t_wait(c, s);
    ASSERT_EQ(s->status, 200);
    json_error_t e;
    json_t *j = json_loadb(s->body, s->len, 0, &e);
    ASSERT(j);
    json_t *v = json_object_get(json_object_get(j, "connections"), what);
    ASSERT(json_is_integer(v));
    long long n = json_integer_value(v);
    json_decref(j);
    return n;
}

static void routes(int port, bool tls)
{
    h2t *c = h2t_open(port, tls, NULL, 0, false);
    h2t_stream *s = h2t_req(c, "GET", "/_health", NULL, NULL);
    h2t_wait(c, s);
    ASSERT_EQ(s->status, 200);
    char v[256];
    ASSERT(h2t_field(s, "content-type", v, sizeof(v)));
    ASSERT_STREQ(v, "application/json");
    ASSERT(h2t_field(s, "cache-control", v, sizeof(v)));
    ASSERT_STREQ(v, "no-store");
    ASSERT(strstr(s->body, "\"status\":\"ok\""));
    s = h2t_req(c, "HEAD", "/bench/counter", NULL, NULL);
    h2t_wait(c, s);
    ASSERT_EQ(s->status, 200);
    ASSERT_EQ(s->len, 0);
    s = h2t_req(c, "GET", "/no/such/page", NULL, NULL);
    h2t_wait(c, s);
    ASSERT_EQ(s->status, 404);
    s = h2t_req(c, "GET", "/_action/increment", NULL, NULL);
    h2t_wait(c, s);
    ASSERT_EQ(s->status, 405);
    ASSERT(h2t_field(s, "allow", v, sizeof(v)));
    ASSERT_STREQ(v, "POST");
    /* Limits: a header section over 16 KiB (431), a body over 4 KiB (413). */
    static char big[20000];
    memset(big, 'x', sizeof(big) - 1);
    const char *bigf[] = {"x-big", big, NULL};
    s = h2t_req(c, "GET", "/_health", bigf, NULL);
    h2t_wait(c, s);
    ASSERT_EQ(s->status, 431);
    static char body[5000];
    memset(body, 'y', sizeof(body) - 1);
    s = h2t_req(c, "POST", "/_action/increment", NULL, body);
    h2t_wait(c, s);
    ASSERT_EQ(s->status, 413);
    /* The connection serves on after both. */
    s = h2t_req(c, "GET", "/_health", NULL, NULL);
    h2t_wait(c, s);
    ASSERT_EQ(s->status, 200);
    ASSERT(!c->goaway);
    h2t_close(c);
    printf("%s: /_health, HEAD, 404, 405, 431, 413, on one connection: ok\n", tls ? "h2" : "h2c");
}

/* A tab over HTTP/2: page, SSE stream and actions as streams of one
 * connection; patches arrive as DATA of the open stream. */
static void one_tab(int port, bool tls)
{
    char origin[64];
    snprintf(origin, sizeof(origin), "%s://127.0.0.1:%d", tls ? "https" : "http", port);
    h2t *c = h2t_open(port, tls, NULL, 0, false);
    h2page pg;
    load_page(c, &pg);
    h2t_stream *es = open_sse(c, &pg, pg.cookie);
    ASSERT_EQ(h2t_wait_events(c, es, 2, IO_TIMEOUT_MS), 2);
    ASSERT_EQ(es->status, 200);
    char v[128];
    ASSERT(h2t_field(es, "content-type", v, sizeof(v)));
    ASSERT_STREQ(v, "text/event-stream");
    ASSERT(h2t_field(es, "cache-control", v, sizeof(v)));
    ASSERT_STREQ(v, "no-cache");
    ASSERT(!h2t_field(es, "content-length", v, sizeof(v)));
    ASSERT_EQ(strncmp(es->body, ELEMENTS_EVENT, strlen(ELEMENTS_EVENT)), 0);
    ASSERT_EQ(last_count(es, &pg), 0);
    for (int i = 1; i <= 3; i++) {
        unsigned segs = tls ? 0 : data_segs_in(c->fd);
        ASSERT_EQ(fire(c, &pg, origin), 200);
        /* The patch went out while the action ran, not with its answer:
         * two writes, two segments (over TLS the writer does every write). */
        if (!tls) ASSERT_GE(data_segs_in(c->fd) - segs, 2u);
        ASSERT_EQ(h2t_wait_events(c, es, 2 + (size_t)i, IO_TIMEOUT_MS), 2 + (size_t)i);
        ASSERT_EQ(last_count(es, &pg), i);
    }
    ASSERT(!es->closed); /* the stream stays open between events */
    ASSERT_EQ(h2_health(c, "sse"), 1);

    /* Cookie crumbs (RFC 9113 8.2.3) are one Cookie for php-via. */
    char body[256];
    snprintf(body, sizeof(body), "{\"via_ctx\":\"%s\"}", pg.ctx);
    const char *crumbs[] = {"content-type", "application/json", "cookie", "theme=dark", "cookie",
                            pg.cookie,      "origin",           origin,   NULL};
    h2t_stream *a = h2t_req(c, "POST", "/_action/increment", crumbs, body);
    h2t_wait(c, a);
    ASSERT_EQ(a->status, 200);
    ASSERT_EQ(h2t_wait_events(c, es, 6, IO_TIMEOUT_MS), 6);
    ASSERT_EQ(last_count(es, &pg), 4);
    /* Without the session cookie: php-via's 403. */
    const char *nocookie[] = {"content-type", "application/json", "origin", origin, NULL};
    a = h2t_req(c, "POST", "/_action/increment", nocookie, body);
    h2t_wait(c, a);
    ASSERT_EQ(a->status, 403);

    /* The client resets its stream: noticed at the next patch, as php-via
     * notices a vanished client. */
    h2t_rst(c, es);
    h2t_pump(c, now_ms() + 100);
    ASSERT_EQ(h2_health(c, "sse"), 1);
    ASSERT_EQ(fire(c, &pg, origin), 200);
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    while (h2_health(c, "sse") != 0)
        ASSERT_LT(now_ms(), until);
    h2t_close(c);
    printf("%s: page, SSE and actions as streams of one connection; patches ahead of the "
           "action's answer; cookie crumbs; a reset stream noticed at the next patch: ok\n",
           tls ? "h2" : "h2c");
}

/* The client's windows: a stream gets no more DATA than its window holds;
 * actions (HEADERS only) still answer; the rest follows the WINDOW_UPDATE. */
static void flow_control(int port, bool tls)
{
    char origin[64];
    snprintf(origin, sizeof(origin), "%s://127.0.0.1:%d", tls ? "https" : "http", port);
    h2t *pc = h2t_open(port, tls, NULL, 0, false);
    h2page pg;
    load_page(pc, &pg);
    const nghttp2_settings_entry small[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 200}};
    h2t *c = h2t_open(port, tls, small, 1, true);
    h2t_stream *es = open_sse(c, &pg, pg.cookie);
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(fire(c, &pg, origin), 200);
    h2t_pump(c, now_ms() + 200);
    ASSERT_EQ(es->status, 200);
    ASSERT_EQ(es->len, 200); /* the window's worth, not a byte more */
    /* Give the window back in pieces until every event is there. */
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    while (h2t_events(es) < 7) {
        ASSERT_LT(now_ms(), until);
        if (es->unconsumed) h2t_consume(c, es, es->unconsumed);
        h2t_pump(c, now_ms() + 50);
    }
    ASSERT_EQ(last_count(es, &pg), 5);
    h2t_close(c);
    h2t_close(pc);
    printf("%s: a 200-byte stream window holds the stream to 200 bytes, actions answer, "
           "WINDOW_UPDATEs bring the rest: ok\n",
           tls ? "h2" : "h2c");
}

/* A client that breaks the protocol gets a GOAWAY and the close; the
 * server serves on. */
static void protocol_error(int port, bool tls)
{
    h2t *c = h2t_open(port, tls, NULL, 0, false);
    h2t_pump(c, now_ms() + 100); /* the server's SETTINGS */
    static const char bad[] = {0, 0, 4,   1,   4,   0,  0,
                               0, 0, 'x', 'x', 'x', 'x'}; /* HEADERS, stream 0 */
    send_all(c->fd, bad, sizeof(bad));
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    while (!c->eof) {
        ASSERT_LT(now_ms(), until);
        h2t_pump(c, until);
    }
    ASSERT(c->goaway);
    h2t_close(c);
    c = h2t_open(port, tls, NULL, 0, false);
    h2t_stream *s = h2t_req(c, "GET", "/_health", NULL, NULL);
    h2t_wait(c, s);
    ASSERT_EQ(s->status, 200);
    h2t_close(c);
    printf("%s: a protocol error gets GOAWAY and the close; the server serves on: ok\n",
           tls ? "h2" : "h2c");
}

static void both(int port, bool tls)
{
    routes(port, tls);
    protocol_error(port, tls);
    one_tab(port, tls);
    flow_control(port, tls);
}

int main(int argc, char **argv)
{
    hm_backend_kind backend = ba_test_begin(argc, argv, true);
    make_pki();
    tls_h1 = client_ctx(0, NULL, 0, false);
    tls_h2 = client_ctx(0, "\x02h2", 3, false);
    hm_bench_app_options o = ba_test_options(backend);
    o.http2 = true;
    o.max_body_bytes = 4096;
    o.max_header_bytes = 16384;

    int port;
    pid_t pid = start_server(&o, &port);
    both(port, false);
    /* HTTP/1.1 on the same port, for clients without prior knowledge. */
    page pg;
    get_page(port, NULL, &pg);
    printf("h2c port: HTTP/1.1 clients are served as before: ok\n");
    /* The stop with a stream open: the server still ends in time. */
    h2t *c = h2t_open(port, false, NULL, 0, false);
    h2page hp;
    load_page(c, &hp);
    h2t_stream *es = open_sse(c, &hp, hp.cookie);
    ASSERT_EQ(h2t_wait_events(c, es, 2, IO_TIMEOUT_MS), 2);
    stop_server(pid);
    h2t_pump(c, now_ms() + IO_TIMEOUT_MS);
    ASSERT(c->eof);
    h2t_close(c);
    printf("h2c: SIGTERM with a stream open stops the server: ok\n");

    o.tls_cert = g_cert;
    o.tls_key = g_key;
    pid = start_server(&o, &port);
    g_tls = tls_h2;
    both(port, true);
    g_tls = tls_h1; /* a client offering http/1.1 only gets it */
    get_page(port, NULL, &pg);
    g_tls = NULL;
    stop_server(pid);
    printf("h2 over TLS: ALPN http/1.1 clients are served HTTP/1.1: ok\n");

    /* php-via's several workers run OpenSwoole's dispatch_mode 7, which
     * refuses HTTP/2: so does bench_app, before listening. */
    o = ba_test_options(backend);
    o.http2 = true;
    o.workers = 2;
    pid = start_child(&o, &port);
    ASSERT_EQ(port, -1);
    ASSERT_EQ(wait_child(pid, 5000), 3);
    printf("--http2 with --workers 2: refused at start: ok\n");
    return 0;
}
