/* hammer's HTTP/2 client (proto/h2_client.h) through hm_http_conn, against
 * a misbehaving h2c server (h2_test_server.h) and bench_app over TLS:
 * responses into hm_http_resp_parser (status, fields, cookies, body), one
 * connection shared by several conns with their streams in flight at once,
 * a body larger than the stream window (the client's WINDOW_UPDATEs),
 * PING answered, a 1xx head skipped, each failure counted as its kind
 * (a silent stream times out alone, a reset is "reset", a closed
 * connection "closed", garbage and an oversized head "protocol"), a
 * refused stream and a GOAWAY re-sent once on a new connection, a
 * cancelled SSE stream reset, h2 through ALPN over TLS, and the reasons
 * given when a server speaks no HTTP/2. argv[1]: the engine backend. */
#include "bench_app_client.h"
#include "engine_test_util.h"
#include "h2_test_server.h"
#include "proto/h2_client.h"

#include <jansson.h>
#include <signal.h>

static hm_loop_options lo;
static hm_http_target target;
static int64_t timeout_ns = 2000000000LL;

static void set_target(int port, bool tls)
{
    char url[64];
    snprintf(url, sizeof(url), "%s://127.0.0.1:%d/", tls ? "https" : "http", port);
    ASSERT_EQ(hm_http_target_from_url(url, &target, NULL), 0);
    target.http2 = true;
}

/* GET path as bytes in req[0, cap): their length. */
static size_t write_get(char *req, size_t cap, const char *path)
{
    ssize_t n = hm_http_write_request(req, cap, "GET", path, target.host_header, NULL, 0, NULL, 0);
    ASSERT_GT(n, 0);
    return (size_t)n;
}

/* GET path on c; the result (0 or the error). */
static int get(hm_http_conn *c, const char *path)
{
    char req[512];
    size_t n = write_get(req, sizeof(req), path);
    hm_http_xopts xo = {.idempotent = true, .deadline = hm_now_ns() + timeout_ns};
    return hm_http_conn_exchange(c, req, n, &xo);
}

static json_t *server_stats(void)
{
    hm_http_conn c;
    hm_http_conn_init(&c, &target, NULL);
    ASSERT_EQ(get(&c, "/stats"), 0);
    json_error_t e;
    json_t *j = json_loads(c.resp.body, 0, &e);
    ASSERT(j);
    hm_http_conn_free(&c);
    return j;
}

static long long stat_of(const char *key)
{
    json_t *j = server_stats();
    long long v = json_integer_value(json_object_get(j, key));
    json_decref(j);
    return v;
}

/* ---- answers into the response -------------------------------------------- */

static void answers(void *arg)
{
    (void)arg;
    hm_http_conn c;
    hm_http_conn_init(&c, &target, NULL);
    ASSERT_EQ(get(&c, "/ok"), 0);
    ASSERT_EQ(c.resp.status, 200);
    ASSERT_EQ(c.resp.http_major, 2);
    ASSERT_MEMEQ(c.resp.body, c.resp.body_len, "hello");
    ASSERT_MEMEQ(c.resp.hdr.x_via_worker.ptr, c.resp.hdr.x_via_worker.len, "7");
    ASSERT_MEMEQ(c.resp.hdr.content_type.ptr, c.resp.hdr.content_type.len, "text/plain");
    ASSERT_EQ(c.resp.n_set_cookie, 2);
    ASSERT_MEMEQ(c.resp.set_cookie[1].ptr, c.resp.set_cookie[1].len, "b=2; path=/");
    ASSERT_EQ(c.connects, 1);
    ASSERT_GT(c.connect_ns, 0);
    /* The same connection: no new connect. */
    ASSERT_EQ(get(&c, "/early-100"), 0); /* a 103 head first, then the answer */
    ASSERT_EQ(c.resp.status, 200);
    ASSERT_MEMEQ(c.resp.body, c.resp.body_len, "hello");
    ASSERT_EQ(get(&c, "/nope"), 0);
    ASSERT_EQ(c.resp.status, 404);
    ASSERT_EQ(c.connects, 1);
    ASSERT_EQ(c.connect_ns, 0);
    /* A POST's body, and the cookie, reach the server. */
    char req[512];
    hm_http_header h[] = {{"Cookie", "sid=42"}};
    ssize_t n = hm_http_write_request(req, sizeof(req), "POST", "/echo", target.host_header, h, 1,
                                      "{\"x\":1}", 7);
    hm_http_xopts xo = {.deadline = hm_now_ns() + timeout_ns};
    ASSERT_EQ(hm_http_conn_exchange(&c, req, (size_t)n, &xo), 0);
    ASSERT_MEMEQ(c.resp.body, c.resp.body_len, "POST|sid=42|{\"x\":1}");
    /* 7 MiB: more than the 6 MiB stream window we announce. */
    ASSERT_EQ(get(&c, "/big"), 0);
    ASSERT_EQ(c.resp.body_len, 7u << 20);
    ASSERT_EQ(c.resp.body[c.resp.body_len - 1], 'b');
    /* The server's PING is answered (it answers the request once the ACK is in). */
    ASSERT_EQ(get(&c, "/ping"), 0);
    ASSERT_MEMEQ(c.resp.body, c.resp.body_len, "acked");
    ASSERT_EQ(c.connects, 1);
    hm_http_conn_free(&c);
    printf("answers: fields, cookies, a 103 skipped, a POST body, 7 MiB past the window, PING: "
           "ok\n");
}

/* ---- several conns, one connection -------------------------------------------- */

typedef struct multi {
    hm_h2_conn *h2;
    int done, ok;
    hm_waitgroup wg;
} multi;

static void one_of_many(void *arg)
{
    multi *m = arg;
    hm_http_conn c;
    hm_http_conn_init_shared(&c, &target, NULL, m->h2);
    for (int i = 0; i < 20; i++)
        if (get(&c, "/ok") == 0 && c.resp.status == 200) m->ok++;
    hm_http_conn_free(&c);
    hm_wg_done(&m->wg);
}

static void shared(void *arg)
{
    (void)arg;
    multi m = {0};
    ASSERT_EQ(hm_h2_conn_create(&m.h2, &target), 0);
    hm_wg_init(&m.wg);
    hm_wg_add(&m.wg, 10);
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(hm_coro_spawn(NULL, one_of_many, &m, NULL), 0);
    /* A silent stream on the same connection times out alone. */
    hm_http_conn quiet;
    hm_http_conn_init_shared(&quiet, &target, NULL, m.h2);
    int64_t saved = timeout_ns;
    timeout_ns = 300000000LL;
    int64_t t0 = hm_now_ns();
    ASSERT_EQ(get(&quiet, "/silent"), -ETIMEDOUT);
    ASSERT_EQ(quiet.fail, HM_FAIL_TIMEOUT);
    ASSERT_GE(hm_now_ns() - t0, timeout_ns);
    timeout_ns = saved;
    ASSERT_EQ(hm_wg_wait(&m.wg, 0), 0);
    ASSERT_EQ(m.ok, 200);
    ASSERT_EQ(get(&quiet, "/ok"), 0); /* the connection serves on */
    ASSERT_EQ(hm_h2_conn_connects(m.h2), 1);
    hm_http_conn_free(&quiet);
    hm_h2_conn_free(m.h2);
    printf("shared: 10 conns x 20 requests on one connection, a silent stream timed out alone: "
           "ok\n");
}

/* ---- failures by kind ------------------------------------------------------------ */

static void failures(void *arg)
{
    (void)arg;
    hm_http_conn c;
    hm_http_conn_init(&c, &target, NULL);
    ASSERT_EQ(get(&c, "/reset"), -ECONNRESET);
    ASSERT_EQ(c.fail, HM_FAIL_RESET);
    ASSERT(strstr(hm_http_conn_fail_reason(&c, -ECONNRESET), "reset"));
    ASSERT_EQ(get(&c, "/fat-head"), -HM_ETOOBIG);
    ASSERT_EQ(c.fail, HM_FAIL_PROTOCOL);
    ASSERT_EQ(get(&c, "/ok"), 0); /* both were the stream's, not the connection's */
    ASSERT_EQ(c.connects, 1);
    /* An idempotent request whose connection closes mid-answer is sent
     * once more on a new connection (and closed again: closed). */
    uint64_t retries = c.retries;
    ASSERT_EQ(get(&c, "/close"), -HM_ECLOSED);
    ASSERT_EQ(c.fail, HM_FAIL_CLOSED);
    ASSERT_EQ(c.retries, retries); /* its head had arrived: not re-sent */
    ASSERT_EQ(get(&c, "/garbage"), -HM_EPROTO_HTTP);
    ASSERT_EQ(c.fail, HM_FAIL_PROTOCOL);
    /* Refused: never processed, so sent again (even a POST). */
    char req[256];
    ssize_t n = hm_http_write_request(req, sizeof(req), "POST", "/refuse-once", target.host_header,
                                      NULL, 0, "x", 1);
    hm_http_xopts xo = {.deadline = hm_now_ns() + timeout_ns};
    retries = c.retries;
    ASSERT_EQ(hm_http_conn_exchange(&c, req, (size_t)n, &xo), 0);
    ASSERT_EQ(c.resp.status, 200);
    ASSERT_EQ(c.retries, retries + 1);
    /* A GOAWAY before the stream: again on a new connection. */
    uint64_t connects = c.connects;
    ASSERT_EQ(get(&c, "/goaway-once"), 0);
    ASSERT_EQ(c.resp.status, 200);
    ASSERT_EQ(c.connects, connects + 1);
    hm_http_conn_free(&c);
    printf("failures: reset, oversized head, closed, garbage by kind; refused and GOAWAY sent "
           "again: ok\n");
}

/* A conn freed while its connection lives on, then a frame that names no
 * stream: the client's look-up of "the stream this frame is for" must
 * not hand back the freed conn's stream (a HEADERS on stream 0 matched
 * the cleared look-up, whose id is 0; ASan saw the use after free). */
static void freed_then_garbage(void *arg)
{
    (void)arg;
    hm_h2_conn *h2;
    ASSERT_EQ(hm_h2_conn_create(&h2, &target), 0);
    hm_http_conn a, b;
    hm_http_conn_init_shared(&a, &target, NULL, h2);
    ASSERT_EQ(get(&a, "/ok"), 0);
    ASSERT_EQ(a.resp.status, 200);
    hm_http_conn_free(&a);
    hm_http_conn_init_shared(&b, &target, NULL, h2);
    ASSERT_EQ(get(&b, "/garbage"), -HM_EPROTO_HTTP);
    ASSERT_EQ(b.fail, HM_FAIL_PROTOCOL);
    ASSERT_EQ(hm_h2_conn_connects(h2), 1); /* both streams on one connection */
    hm_http_conn_free(&b);
    hm_h2_conn_free(h2);
    printf("a frame for no stream after a conn was freed on the same connection: protocol, ok\n");
}

/* ---- a stream, cancelled ---------------------------------------------------------- */

typedef struct sse_run {
    hm_http_conn c;
    int events, status, rc;
    hm_coro *co;
    bool over;
} sse_run;

static int sse_head(void *user, hm_http_resp_parser *p)
{
    ((sse_run *)user)->status = p->status;
    return 0;
}

static int sse_body(void *user, const char *at, size_t len)
{
    sse_run *r = user;
    for (size_t i = 0; i + 1 < len; i++)
        if (at[i] == '\n' && at[i + 1] == '\n') r->events++;
    return 0;
}

static void sse_coro(void *arg)
{
    sse_run *r = arg;
    char req[256];
    size_t n = write_get(req, sizeof(req), "/sse");
    /* The header deadline is short; the stream lives on well past it. */
    r->rc = hm_http_conn_stream(&r->c, req, n, hm_now_ns() + 200000000LL, sse_head, sse_body, r);
    r->over = true;
    r->co = NULL;
}

static void stream_cancel(void *arg)
{
    (void)arg;
    hm_h2_conn *h2;
    ASSERT_EQ(hm_h2_conn_create(&h2, &target), 0);
    sse_run r = {0};
    hm_http_conn_init_shared(&r.c, &target, NULL, h2);
    ASSERT_EQ(hm_coro_spawn(NULL, sse_coro, &r, &r.co), 0);
    long long resets = stat_of("client_resets");
    hm_coro_sleep(500000000LL); /* past the header deadline */
    ASSERT_EQ(r.status, 200);
    ASSERT_GE(r.events, 5);
    ASSERT(!r.over);
    /* The tab's other requests go on beside the stream. */
    hm_http_conn c;
    hm_http_conn_init_shared(&c, &target, NULL, h2);
    ASSERT_EQ(get(&c, "/ok"), 0);
    while (r.co) {
        hm_coro_cancel(r.co);
        hm_coro_sleep(1000000);
    }
    ASSERT_EQ(r.rc, -ECANCELED);
    ASSERT_EQ(get(&c, "/ok"), 0);
    int64_t until = hm_now_ns() + timeout_ns;
    while (stat_of("client_resets") != resets + 1)
        ASSERT_LT(hm_now_ns(), until);
    ASSERT_EQ(hm_h2_conn_connects(h2), 1);
    hm_http_conn_free(&c);
    hm_http_conn_free(&r.c);
    hm_h2_conn_free(h2);
    printf("stream: SSE past its header deadline, requests beside it, cancel resets it: ok\n");
}

/* The same stream without a coroutine (hm_http_conn_stream_start): its
 * body comes to on_body as it comes, hm_http_conn_stop resets it without
 * a report, and a stream the server ends reports 0 through done. */
static void stream_done(hm_http_conn *c, int rc, void *user)
{
    (void)c;
    sse_run *r = user;
    r->rc = rc;
    r->over = true;
}

static void stream_callbacks(void *arg)
{
    (void)arg;
    hm_h2_conn *h2;
    ASSERT_EQ(hm_h2_conn_create(&h2, &target), 0);
    sse_run r = {0};
    hm_http_conn_init_shared(&r.c, &target, NULL, h2);
    char req[256];
    size_t n = write_get(req, sizeof(req), "/sse");
    ASSERT_EQ(hm_http_conn_stream_start(&r.c, hm_loop_current(), req, n, hm_now_ns() + 200000000LL,
                                        sse_head, sse_body, &r, stream_done, &r),
              0);
    memset(req, 0, sizeof(req)); /* the stream took a copy */
    hm_coro_sleep(500000000LL);  /* past the header deadline */
    ASSERT_EQ(r.status, 200);
    ASSERT_GE(r.events, 5);
    ASSERT(!r.over);
    ASSERT(hm_http_conn_busy(&r.c));
    hm_http_conn c;
    hm_http_conn_init_shared(&c, &target, NULL, h2);
    ASSERT_EQ(get(&c, "/ok"), 0);
    long long resets = stat_of("client_resets");
    hm_http_conn_stop(&r.c);
    ASSERT(!hm_http_conn_busy(&r.c));
    int64_t until = hm_now_ns() + timeout_ns;
    while (stat_of("client_resets") != resets + 1)
        ASSERT_LT(hm_now_ns(), until);
    ASSERT(!r.over); /* stopped: no report */

    /* A body the server ends: done reports 0, the body came through on_body. */
    r.events = r.status = r.rc = 0;
    n = write_get(req, sizeof(req), "/ok");
    ASSERT_EQ(hm_http_conn_stream_start(&r.c, hm_loop_current(), req, n, hm_now_ns() + timeout_ns,
                                        sse_head, sse_body, &r, stream_done, &r),
              0);
    until = hm_now_ns() + timeout_ns;
    while (!r.over) {
        ASSERT_LT(hm_now_ns(), until);
        hm_coro_sleep(1000000);
    }
    ASSERT_EQ(r.rc, 0);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(hm_h2_conn_connects(h2), 1);
    hm_http_conn_free(&c);
    hm_http_conn_free(&r.c);
    hm_h2_conn_free(h2);
    printf("stream on callbacks: SSE past its header deadline, stop resets it unreported, an "
           "ended one reports 0: ok\n");
}

/* ---- TLS and servers without HTTP/2 ------------------------------------------------- */

static void tls_h2(void *arg)
{
    (void)arg;
    hm_http_conn c;
    hm_http_conn_init(&c, &target, NULL);
    ASSERT_EQ(get(&c, "/_health"), 0);
    ASSERT_EQ(c.resp.status, 200);
    ASSERT(strstr(c.resp.body, "\"status\":\"ok\""));
    ASSERT_GT(c.tls_ns, 0);
    ASSERT(hm_http_conn_tls(&c));
    hm_http_conn_free(&c);
    printf("TLS: h2 through ALPN: ok\n");
}

static int last_rc;
static char last_why[256];
static hm_fail_kind last_fail;

static void no_h2(void *arg)
{
    (void)arg;
    hm_http_conn c;
    hm_http_conn_init(&c, &target, NULL);
    last_rc = get(&c, "/_health");
    last_fail = c.fail;
    snprintf(last_why, sizeof(last_why), "%s", hm_http_conn_fail_reason(&c, last_rc));
    hm_http_conn_free(&c);
}

int main(int argc, char **argv)
{
    lo = test_loop_options(argc, argv);
    signal(SIGPIPE, SIG_IGN);
    h2ts srv = {0};
    h2ts_start(&srv);
    set_target(srv.port, false);
    run_on_loop(&lo, answers, NULL);
    run_on_loop(&lo, shared, NULL);
    run_on_loop(&lo, failures, NULL);
    run_on_loop(&lo, freed_then_garbage, NULL);
    run_on_loop(&lo, stream_cancel, NULL);
    run_on_loop(&lo, stream_callbacks, NULL);
    h2ts_stop(&srv);

    /* bench_app over TLS, with HTTP/2 and without. */
    ba_test_begin(1, argv, false);
    make_pki();
    char why[256];
    hm_tls_config *cfg;
    ASSERT_EQ(hm_tls_config_create(&cfg, false, g_ca, why, sizeof(why)), 0);
    ASSERT_EQ(hm_tls_config_offer_h2(cfg), 0);
    hm_bench_app_options o = ba_test_options(lo.backend);
    o.tls_cert = g_cert;
    o.tls_key = g_key;
    o.http2 = true;
    int port;
    pid_t pid = start_server(&o, &port);
    set_target(port, true);
    target.tls_cfg = cfg;
    run_on_loop(&lo, tls_h2, NULL);
    stop_server(pid);
    o.http2 = false; /* ALPN http/1.1 only: no agreement */
    pid = start_server(&o, &port);
    set_target(port, true);
    target.tls_cfg = cfg;
    run_on_loop(&lo, no_h2, NULL);
    ASSERT_LT(last_rc, 0);
    ASSERT_EQ(last_fail, HM_FAIL_TLS); /* the server's no_application_protocol alert */
    printf("TLS: a server without h2 refuses the handshake: %s: ok\n", last_why);
    stop_server(pid);
    o = ba_test_options(lo.backend); /* cleartext HTTP/1.1 only */
    pid = start_server(&o, &port);
    set_target(port, false);
    run_on_loop(&lo, no_h2, NULL);
    ASSERT_LT(last_rc, 0);
    ASSERT(strstr(last_why, "does not speak h2c"));
    printf("h2c: a server without HTTP/2: \"%s\": ok\n", last_why);
    stop_server(pid);
    hm_tls_config_free(cfg);
    return 0;
}
