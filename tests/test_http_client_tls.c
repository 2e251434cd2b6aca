/* hm_http_conn over https without a coroutine: hm_http_conn_start runs the
 * TLS handshake and the exchange on the socket's callback reader (TLS as a
 * filter), against a TLS server on the same loop (tls.h's server side).
 * Checked: the response, keep-alive reuse without a second handshake, a
 * resumed handshake after the server closed, the coroutine calls (the same
 * machine, waited for), and the words and kinds of a handshake that times
 * out or does not verify; a big answer in many records, cut across
 * reads, intact; and the turns of a thread's handshakes: no more
 * run at once than the config's bound, the others wait and then go, and
 * one that times out waiting says so. argv: BACKEND GEN_CERT_SCRIPT */
#include "engine_test_util.h"
#include "proto/http_client.h"
#include "run_util.h"

#include <string.h>

#define MS 1000000LL

/* What the server does with each connection. */
enum { SERVE_KEEP, SERVE_ONE_THEN_CLOSE, SERVE_SILENT, SERVE_HOLD, SERVE_BIG };

static hm_sock *listener;
static hm_tls_config *server_cfg;
static int serve_mode;
static int accepted;
static hm_task server;
static hm_event hold_over; /* SERVE_HOLD: the held connections go on */
static bool holding;
static const char reply[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
/* SERVE_BIG's answer: its head and a body of BIG_BODY bytes (byte i is
 * i % 251) in two writes, so records of both sizes arrive, whole, several
 * in one read, and cut across reads. */
#define BIG_BODY 200000
static char big_body[BIG_BODY];
static const char big_head[] = "HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n\r\n";

static void serve_conn(void *arg)
{
    hm_sock *s = arg;
    int mode = serve_mode;
    if (mode == SERVE_SILENT) { /* accepts, never answers the ClientHello */
        hm_coro_sleep(1000 * MS);
        hm_sock_close(s);
        return;
    }
    if (mode == SERVE_HOLD) /* reads nothing until told, then serves */
        while (holding)
            hm_event_wait(&hold_over, 0);
    hm_tls *t = NULL;
    ASSERT_EQ(hm_tls_create(&t, server_cfg, NULL), 0);
    if (hm_tls_accept(t, s, hm_now_ns() + 5000 * MS) == 0) {
        char buf[4096];
        size_t have = 0;
        for (;;) {
            ssize_t n = hm_tls_read(t, s, buf + have, sizeof(buf) - 1 - have, 0);
            if (n <= 0) break;
            have += (size_t)n;
            buf[have] = 0;
            if (!strstr(buf, "\r\n\r\n")) continue;
            have = 0;
            if (mode == SERVE_BIG) {
                if (hm_tls_write(t, s, big_head, sizeof(big_head) - 1, 0, NULL) < 0 ||
                    hm_tls_write(t, s, big_body, sizeof(big_body), 0, NULL) < 0)
                    break;
                continue;
            }
            if (hm_tls_write(t, s, reply, sizeof(reply) - 1, 0, NULL) < 0) break;
            if (mode == SERVE_ONE_THEN_CLOSE) {
                hm_tls_close_notify(t, s, 0);
                break;
            }
        }
    }
    hm_tls_free(t);
    hm_sock_close(s);
}

static void server_main(void *arg)
{
    (void)arg;
    for (;;) {
        hm_sock *s;
        if (hm_sock_accept(listener, &s, 0) < 0) return;
        accepted++;
        ASSERT_EQ(hm_coro_spawn(NULL, serve_conn, s, NULL), 0);
    }
}

typedef struct waiting {
    hm_event ev;
    bool done;
    int rc;
} waiting;

static void on_done(hm_http_conn *c, int rc, void *user)
{
    (void)c;
    waiting *w = user;
    w->done = true;
    w->rc = rc;
    hm_event_notify(&w->ev);
}

static const char req[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/* Starts one exchange on the loop's callbacks; on_done tells w. */
static void start_cb(hm_http_conn *c, int64_t timeout_ns, waiting *w)
{
    *w = (waiting){0};
    hm_event_init(&w->ev);
    hm_http_xopts o = {.idempotent = true, .deadline = hm_now_ns() + timeout_ns};
    int rc = hm_http_conn_start(c, hm_loop_current(), req, sizeof(req) - 1, &o, on_done, w);
    ASSERT_EQ(rc, 0); /* https is no longer refused */
    ASSERT(!w->done); /* never inside the start */
}

/* One exchange on the loop's callbacks; this coroutine only waits. */
static int exchange_cb(hm_http_conn *c, int64_t timeout_ns)
{
    waiting w;
    start_cb(c, timeout_ns, &w);
    while (!w.done)
        hm_event_wait(&w.ev, 0);
    return w.rc;
}

/* The thread's handshakes now, and the most that ever held a turn. */
static void turns_seen(int *running, int *queued, int *most)
{
    hm_tls_turns(running, queued);
    if (*running > *most) *most = *running;
}

static void turns(hm_http_target *target, const char *ca)
{
    char why[256];
    hm_tls_config *two;
    ASSERT_EQ(hm_tls_config_create(&two, false, ca, why, sizeof(why)), 0);
    hm_tls_config_set_handshakes(two, 2);
    target->tls_cfg = two;
    /* The server holds every connection: 6 exchanges start, 2 send their
     * hello and 4 wait for a turn. Released, every one is answered. */
    serve_mode = SERVE_HOLD;
    holding = true;
    hm_event_init(&hold_over);
    enum { N = 6 };
    hm_http_conn cs[N];
    waiting ws[N];
    int accepted0 = accepted, running, queued, most = 0;
    for (int i = 0; i < N; i++) {
        hm_http_conn_init(&cs[i], target, NULL);
        start_cb(&cs[i], 60000 * MS, &ws[i]);
    }
    do {
        hm_coro_sleep(MS);
        turns_seen(&running, &queued, &most);
    } while (accepted - accepted0 < N || running + queued < N);
    ASSERT_EQ(running, 2);
    ASSERT_EQ(queued, N - 2);
    for (int i = 0; i < N; i++)
        ASSERT(!ws[i].done);
    holding = false;
    hm_event_notify(&hold_over);
    for (int i = 0; i < N; i++)
        while (!ws[i].done) {
            hm_coro_sleep(MS);
            turns_seen(&running, &queued, &most);
        }
    for (int i = 0; i < N; i++) {
        ASSERT_EQ(ws[i].rc, 0);
        ASSERT_EQ(cs[i].resp.status, 200);
        ASSERT(cs[i].tls_ns > 0);
        hm_http_conn_free(&cs[i]);
    }
    ASSERT_EQ(most, 2);
    hm_tls_turns(&running, &queued);
    ASSERT_EQ(running + queued, 0);
    printf("turns: %d exchanges, at most 2 handshakes at once, %d waited, all answered\n", N,
           N - 2);

    /* One at a time against a server that never answers: the second
     * connection times out before its turn comes, and says so. */
    hm_tls_config_set_handshakes(two, 1);
    serve_mode = SERVE_SILENT;
    hm_http_conn first, second;
    waiting w1, w2;
    hm_http_conn_init(&first, target, NULL);
    hm_http_conn_init(&second, target, NULL);
    start_cb(&first, 60000 * MS, &w1);
    do {
        hm_coro_sleep(MS);
        hm_tls_turns(&running, &queued);
    } while (running < 1);
    start_cb(&second, 100 * MS, &w2);
    while (!w2.done)
        hm_event_wait(&w2.ev, 0);
    ASSERT_EQ(w2.rc, -ETIMEDOUT);
    ASSERT_EQ(second.fail, HM_FAIL_TIMEOUT);
    const char *said = hm_reason(second.fail_why);
    if (!strstr(said, "TLS handshake not begun within 0.1 s: it waited for its turn: this "
                      "thread runs 1 handshake at once (--tls-handshakes)"))
        HM_FAIL_("the wait's words: %s", said);
    printf("timed out waiting: %s\n", said);
    ASSERT(!w1.done);
    hm_http_conn_stop(&first); /* its turn ends with it */
    hm_tls_turns(&running, &queued);
    ASSERT_EQ(running + queued, 0);
    hm_http_conn_free(&first);
    hm_http_conn_free(&second);
    hm_tls_config_free(two);
}

static hm_http_target target;
static char *ca_path;

static void tests(void *arg)
{
    (void)arg;
    char why[256];
    hm_tls_config *ccfg;
    ASSERT_EQ(hm_tls_config_create(&ccfg, false, ca_path, why, sizeof(why)), 0);
    target.tls_cfg = ccfg;

    /* Keep-alive: two exchanges, one connection, one full handshake. */
    serve_mode = SERVE_KEEP;
    hm_http_conn c;
    hm_http_conn_init(&c, &target, NULL);
    for (int i = 0; i < 2; i++) {
        ASSERT_EQ(exchange_cb(&c, 5000 * MS), 0);
        ASSERT_EQ(c.resp.status, 200);
        ASSERT_EQ(c.resp.body_len, 5);
        ASSERT(memcmp(c.resp.body, "hello", 5) == 0);
        if (i == 0) { /* the first one made the handshake, a full one */
            ASSERT(c.tls_ns > 0);
            ASSERT(!hm_tls_resumed(hm_http_conn_tls(&c)));
        }
    }
    ASSERT_EQ(c.connects, 1);
    ASSERT(c.tls_ns == 0); /* the second one reused the connection */
    printf("keep-alive over TLS on callbacks: 2 exchanges, 1 connect, 1 full handshake\n");

    /* The server closes after each answer: the next exchange reconnects
     * and resumes the session (a ticket came with the first answer). */
    serve_mode = SERVE_ONE_THEN_CLOSE;
    hm_http_conn_close(&c);
    ASSERT_EQ(exchange_cb(&c, 5000 * MS), 0);
    hm_coro_sleep(20 * MS); /* the close_notify and FIN arrive */
    ASSERT_EQ(exchange_cb(&c, 5000 * MS), 0);
    ASSERT_EQ(c.resp.status, 200);
    ASSERT_EQ(c.connects, 3);
    ASSERT(c.tls_ns > 0);                         /* a handshake, */
    ASSERT(hm_tls_resumed(hm_http_conn_tls(&c))); /* a resumed one */
    printf("reconnect: resumed\n");

    /* The coroutine's call is the same machine, waited for. */
    serve_mode = SERVE_KEEP;
    hm_http_conn_close(&c);
    hm_http_xopts xo = {.idempotent = true, .deadline = hm_now_ns() + 5000 * MS};
    ASSERT_EQ(hm_http_conn_exchange(&c, req, sizeof(req) - 1, &xo), 0);
    ASSERT_EQ(c.resp.status, 200);
    ASSERT(memcmp(c.resp.body, "hello", 5) == 0);
    hm_http_conn_free(&c);
    printf("hm_http_conn_exchange over TLS: 200\n");

    /* A server that never answers the ClientHello: the exchange's deadline
     * ends the handshake, worded as such. */
    serve_mode = SERVE_SILENT;
    hm_http_conn_init(&c, &target, NULL);
    int64_t t0 = hm_now_ns();
    int rc = exchange_cb(&c, 200 * MS);
    ASSERT_EQ(rc, -ETIMEDOUT);
    ASSERT(hm_now_ns() - t0 >= 200 * MS);
    ASSERT_EQ(c.fail, HM_FAIL_TIMEOUT);
    ASSERT(strstr(hm_reason(c.fail_why), "TLS handshake not done within 0.2 s"));
    printf("silent server: %s\n", hm_reason(c.fail_why));
    hm_http_conn_free(&c);

    /* A certificate no CA here signed: a TLS failure that says why. */
    serve_mode = SERVE_KEEP;
    hm_tls_config *strict;
    ASSERT_EQ(hm_tls_config_create(&strict, false, NULL, why, sizeof(why)), 0);
    target.tls_cfg = strict;
    hm_http_conn_init(&c, &target, NULL);
    rc = exchange_cb(&c, 5000 * MS);
    ASSERT_EQ(rc, -HM_ETLS);
    ASSERT_EQ(c.fail, HM_FAIL_TLS);
    ASSERT(strstr(hm_reason(c.fail_why), "TLS handshake failed: certificate verification failed"));
    ASSERT_EQ(hm_tls_last_fail(hm_http_conn_tls(&c)), HM_TLS_VERIFY);
    printf("unverified server: %s\n", hm_reason(c.fail_why));
    hm_http_conn_free(&c);

    /* A big answer in many records, some cut across reads: every byte
     * arrives in order, and the connection goes on (also after its idle
     * buffers went) to a second and a third. */
    serve_mode = SERVE_BIG;
    target.tls_cfg = ccfg;
    hm_http_conn_init(&c, &target, NULL);
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(exchange_cb(&c, 5000 * MS), 0);
        ASSERT_EQ(c.resp.status, 200);
        ASSERT_EQ(c.resp.body_len, BIG_BODY);
        ASSERT(memcmp(c.resp.body, big_body, BIG_BODY) == 0);
        if (i == 1) hm_http_conn_release(&c); /* as a browser tab idles */
    }
    ASSERT_EQ(c.connects, 1);
    hm_http_conn_free(&c);
    printf("a %d-byte answer over TLS, three times on one connection: intact\n", BIG_BODY);

    turns(&target, ca_path);

    hm_task_cancel(&server); /* ends server_main's accept */
    hm_task_join(&server, 0);
    hm_sock_close(listener);
    hm_coro_sleep(1100 * MS); /* the silent server's connection ends */
    hm_tls_config_free(ccfg);
    hm_tls_config_free(strict);
}

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s BACKEND GEN_CERT", argv[0]);
    for (int i = 0; i < BIG_BODY; i++)
        big_body[i] = (char)(i % 251);
    hm_loop_options lo = test_loop_options(argc, argv);
    test_certs certs;
    test_certs_make(&certs, argv[2], "h1tls");
    ca_path = certs.ca;
    char why[256];
    ASSERT_EQ(hm_tls_server_config_create(&server_cfg, certs.cert, certs.key, why, sizeof(why)), 0);
    hm_loop *loop;
    ASSERT_EQ(hm_loop_create(&loop, &lo), 0);
    struct sockaddr_in a = loopback_addr(0);
    ASSERT_EQ(hm_sock_listen(&listener, (struct sockaddr *)&a, sizeof(a), 16), 0);
    char url[64];
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/", hm_sock_local_port(listener));
    ASSERT_EQ(hm_http_target_from_url(url, &target, NULL), 0);
    ASSERT_EQ(hm_task_spawn(&server, loop, server_main, NULL), 0);
    ASSERT_EQ(hm_coro_spawn(loop, tests, NULL, NULL), 0);
    ASSERT_EQ(hm_loop_run(loop), 0);
    hm_loop_destroy(loop);
    hm_tls_config_free(server_cfg);
    printf("ok (%d connections accepted)\n", accepted);
    return 0;
}
