/* Connections without a coroutine: hm_sock_connect_start reports its end
 * from the loop (success, and refused), a callback reader gets every byte
 * of a request-response exchange sent detached (no completion for a
 * successful send), then EOF; a reader that closes its socket from inside
 * the callback stops getting calls; a detached send into a connection the
 * peer reset ends reading with the error; timers and hm_timeq fire in
 * order and can be disarmed; a held loop runs without coroutines until
 * released. argv[1]: the backend (HAMMER_ENGINE_DISABLE: the io_uring
 * fallback). */
#include "engine_test_util.h"

#include <unistd.h>

static echo_server srv;

/* ---- a client as a state machine ---------------------------------------- */

enum { ROUNDS = 200 };
static const char request[] = "0123456789abcdefghij";

typedef struct client {
    hm_loop *loop;
    hm_sock *s;
    int round;
    size_t got;
    int connect_res;
    bool eof, done;
    int err;
} client;

static void client_data(void *user, hm_sock *s, const char *data, ssize_t len)
{
    client *c = user;
    if (len <= 0) {
        c->err = (int)len;
        c->eof = len == 0;
        hm_sock_close(s);
        c->s = NULL;
        c->done = true;
        hm_loop_release(c->loop);
        return;
    }
    for (ssize_t i = 0; i < len; i++)
        ASSERT_EQ(data[i], request[(c->got + (size_t)i) % (sizeof(request) - 1)]);
    c->got += (size_t)len;
    if (c->got < (size_t)(c->round + 1) * (sizeof(request) - 1)) return;
    if (++c->round < ROUNDS) {
        /* request is static: it outlives every send */
        ASSERT_EQ(hm_sock_send_detached(s, request, sizeof(request) - 1), 0);
        return;
    }
    /* done: half-close so the echo server ends, and wait for its EOF */
    shutdown(hm_sock_fd(s), SHUT_WR);
}

static void client_connected(void *user, hm_sock *s, int res)
{
    client *c = user;
    c->connect_res = res;
    ASSERT_EQ(res, 0);
    ASSERT_EQ(hm_sock_set_reader(s, client_data, c), 0);
    ASSERT_EQ(hm_sock_send_detached(s, request, sizeof(request) - 1), 0);
}

static client clients[50];

static void start_clients(void *p)
{
    hm_loop *loop = hm_loop_current();
    static struct sockaddr_in a; /* must outlive the connects */
    a = loopback_addr(srv.port);
    for (size_t i = 0; i < HM_ARRAY_LEN(clients); i++) {
        client *c = &clients[i];
        *c = (client){.loop = loop, .connect_res = 1};
        hm_loop_hold(loop);
        ASSERT_EQ(hm_sock_connect_start(loop, &c->s, (struct sockaddr *)&a, sizeof(a),
                                        client_connected, c),
                  0);
        ASSERT_EQ(c->connect_res, 1); /* never called inside the start */
    }
}

static void stop_when_done(void *p)
{
    for (;;) {
        size_t done = 0;
        for (size_t i = 0; i < HM_ARRAY_LEN(clients); i++)
            done += clients[i].done;
        if (done == HM_ARRAY_LEN(clients)) break;
        hm_coro_sleep(2 * 1000000);
    }
    echo_stop(&srv);
}

/* ---- refused, and a reset under a detached send ----------------------------- */

static int refused_res = 1;
static void refused_cb(void *user, hm_sock *s, int res)
{
    refused_res = res;
    hm_sock_close(s);
    hm_loop_release(user);
}

static hm_sock *rst_listener;
static int reset_err;
static bool reset_done;
static void reset_reader(void *user, hm_sock *s, const char *data, ssize_t len)
{
    if (len > 0) return;
    reset_err = (int)len;
    reset_done = true;
    hm_sock_close(s);
    hm_loop_release(user);
}
static void reset_connected(void *user, hm_sock *s, int res)
{
    if (res < 0) { /* the reset can beat the connect's report (epoll) */
        ASSERT_EQ(res, -ECONNRESET);
        reset_reader(user, s, NULL, res);
        return;
    }
    ASSERT_EQ(hm_sock_set_reader(s, reset_reader, user), 0);
}
static void rst_server(void *p)
{
    hm_sock *c;
    ASSERT_EQ(hm_sock_accept(rst_listener, &c, 0), 0);
    hm_sock_abort(c); /* RST */
    hm_sock_close(rst_listener);
}

/* ---- timers ---------------------------------------------------------------- */

static char order[16];
static size_t order_len;
typedef struct named_timer {
    hm_timer t;
    char name;
} named_timer;
static void timer_fired(hm_timer *t)
{
    order[order_len++] = HM_CONTAINER_OF(t, named_timer, t)->name;
    hm_loop_release(hm_loop_current());
}

int main(int argc, char **argv)
{
    hm_loop_options o = test_loop_options(argc, argv);
    hm_loop *loop;
    ASSERT_EQ(hm_loop_create(&loop, &o), 0);
    printf("features: %s\n", hm_loop_features(loop));

    echo_start(&srv);
    hm_coro_spawn(loop, start_clients, NULL, NULL);
    hm_coro_spawn(loop, stop_when_done, NULL, NULL);
    ASSERT_EQ(hm_loop_run(loop), 0);
    for (size_t i = 0; i < HM_ARRAY_LEN(clients); i++) {
        ASSERT_EQ(clients[i].connect_res, 0);
        ASSERT_EQ(clients[i].round, ROUNDS);
        ASSERT(clients[i].eof);
    }
    printf("%zu callback clients, %d detached request-response rounds each: ok\n",
           HM_ARRAY_LEN(clients), ROUNDS);

    /* Refused: the callback says so, from the loop. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in closed = loopback_addr(0);
    ASSERT_EQ(bind(fd, (struct sockaddr *)&closed, sizeof(closed)), 0);
    socklen_t alen = sizeof(closed);
    getsockname(fd, (struct sockaddr *)&closed, &alen);
    close(fd);
    hm_sock *s;
    hm_loop_hold(loop);
    ASSERT_EQ(hm_sock_connect_start(loop, &s, (struct sockaddr *)&closed, sizeof(closed),
                                    refused_cb, loop),
              0);
    ASSERT_EQ(refused_res, 1);
    ASSERT_EQ(hm_loop_run(loop), 0);
    ASSERT_EQ(refused_res, -ECONNREFUSED);
    printf("refused connect, reported from the loop: ok\n");

    /* The peer resets: the reader gets the error (or EOF), the loop ends. */
    struct sockaddr_in a = loopback_addr(0);
    ASSERT_EQ(hm_sock_listen(&rst_listener, (struct sockaddr *)&a, sizeof(a), 16), 0);
    static struct sockaddr_in rst_addr;
    rst_addr = loopback_addr(hm_sock_local_port(rst_listener));
    hm_coro_spawn(loop, rst_server, NULL, NULL);
    hm_loop_hold(loop);
    ASSERT_EQ(hm_sock_connect_start(loop, &s, (struct sockaddr *)&rst_addr, sizeof(rst_addr),
                                    reset_connected, loop),
              0);
    ASSERT_EQ(hm_loop_run(loop), 0);
    ASSERT(reset_done);
    ASSERT(reset_err == -ECONNRESET || reset_err == 0);
    printf("reset under a reader: %s: ok\n", reset_err ? "ECONNRESET" : "EOF");

    /* Timers: a heap timer and a FIFO of same-duration timers fire in
     * deadline order; a disarmed one never fires. */
    hm_timeq q;
    hm_timeq_init(loop, &q, 30 * 1000000);
    named_timer t[4] = {{.name = 'a'}, {.name = 'b'}, {.name = 'c'}, {.name = 'x'}};
    for (int i = 0; i < 4; i++)
        hm_timer_init(&t[i].t, timer_fired);
    hm_timeq_arm(&q, &t[0].t); /* now + 30 ms */
    usleep(2000);
    hm_timeq_arm(&q, &t[3].t);                               /* disarmed below */
    hm_timeq_arm(&q, &t[2].t);                               /* now + 30 ms, after a */
    hm_timer_arm(loop, &t[1].t, hm_now_ns() + 10 * 1000000); /* first */
    ASSERT(hm_timer_armed(&t[3].t));
    hm_timer_disarm(&t[3].t);
    ASSERT(!hm_timer_armed(&t[3].t));
    for (int i = 0; i < 3; i++)
        hm_loop_hold(loop);
    ASSERT_EQ(hm_loop_run(loop), 0);
    order[order_len] = 0;
    ASSERT_STREQ(order, "bac");
    hm_timeq_fini(&q);
    printf("timers and a timer FIFO: ok\n");
    hm_loop_destroy(loop);
    return 0;
}
