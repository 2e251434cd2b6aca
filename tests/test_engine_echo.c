/* Loopback sockets end to end: many concurrent echo connections, partial
 * reads and writes, EOF, reset, refused, read deadlines and cancellation. */
#include "engine_test_util.h"

#include <sys/socket.h>
#include <unistd.h>

static echo_server srv;

typedef struct {
    int id;
    int rounds;
    int ok;
} client_arg;

static void echo_client(void *p)
{
    client_arg *ca = p;
    struct sockaddr_in a = loopback_addr(srv.port);
    hm_sock *s;
    int rc = hm_sock_connect(&s, (struct sockaddr *)&a, sizeof(a), hm_now_ns() + 10000000000LL);
    ASSERT_EQ(rc, 0);
    char msg[64], buf[64];
    for (int r = 0; r < ca->rounds; r++) {
        int n = snprintf(msg, sizeof(msg), "client %d round %d", ca->id, r);
        ASSERT_EQ(hm_sock_write(s, msg, (size_t)n, 0, NULL), n);
        int got = 0;
        while (got < n) {
            ssize_t k = hm_sock_read(s, buf + got, sizeof(buf) - (size_t)got, 0);
            ASSERT_GT(k, 0);
            got += (int)k;
        }
        ASSERT_EQ(memcmp(buf, msg, (size_t)n), 0);
    }
    hm_sock_close(s);
    ca->ok = 1;
}

static client_arg *args;
static void run_clients_fn(void *p)
{
    int n = (int)(intptr_t)p;
    args = calloc((size_t)n, sizeof(*args));
    for (int i = 0; i < n; i++) {
        args[i] = (client_arg){.id = i, .rounds = 3};
        ASSERT_EQ(hm_coro_spawn(NULL, (hm_coro_fn)echo_client, &args[i], NULL), 0);
    }
}

/* Partial I/O: 4 MiB written in one call while another coroutine reads the
 * echo in 1000-byte pieces; the kernel buffers force partial writes. */
static char *big_out, *big_in;
#define BIG (4 * 1024 * 1024)
static hm_sock *big_sock;
static size_t big_read;
static void big_reader(void *p)
{
    while (big_read < BIG) {
        size_t want = BIG - big_read < 1000 ? BIG - big_read : 1000;
        ssize_t k = hm_sock_read(big_sock, big_in + big_read, want, 0);
        ASSERT_GT(k, 0);
        big_read += (size_t)k;
    }
}
static void big_writer(void *p)
{
    struct sockaddr_in a = loopback_addr(srv.port);
    ASSERT_EQ(hm_sock_connect(&big_sock, (struct sockaddr *)&a, sizeof(a), 0), 0);
    hm_coro *reader;
    ASSERT_EQ(hm_coro_spawn(NULL, big_reader, NULL, &reader), 0);
    struct iovec iov[3] = {
        {big_out, 1000}, {big_out + 1000, BIG / 2 - 1000}, {big_out + BIG / 2, BIG / 2}};
    size_t sent = 0;
    ASSERT_EQ(hm_sock_writev(big_sock, iov, 3, 0, &sent), BIG);
    ASSERT_EQ(sent, BIG);
    while (big_read < BIG)
        hm_coro_sleep(1000000);
    ASSERT_EQ(memcmp(big_in, big_out, BIG), 0);
    hm_sock_close(big_sock);
    *(int *)p = 1;
}

/* A server that reads once, then closes (EOF) or aborts (RST). */
static void closing_conn(void *p)
{
    hm_sock *s = p;
    char buf[16];
    ssize_t n = hm_sock_read(s, buf, sizeof(buf), 0);
    ASSERT_GT(n, 0);
    if (buf[0] == 'R')
        hm_sock_abort(s);
    else
        hm_sock_close(s);
}
static hm_sock *closer_listener;
static void closer_accept(void *p)
{
    for (int i = 0; i < 2; i++) {
        hm_sock *c;
        ASSERT_EQ(hm_sock_accept(closer_listener, &c, 0), 0);
        hm_coro_spawn(NULL, closing_conn, c, NULL);
    }
    hm_sock_close(closer_listener);
}
static void eof_and_reset(void *p)
{
    int port = hm_sock_local_port(closer_listener);
    struct sockaddr_in a = loopback_addr(port);
    hm_sock *s;
    char buf[16];
    ASSERT_EQ(hm_sock_connect(&s, (struct sockaddr *)&a, sizeof(a), 0), 0);
    ASSERT_EQ(hm_sock_write(s, "E", 1, 0, NULL), 1);
    ASSERT_EQ(hm_sock_read(s, buf, sizeof(buf), hm_now_ns() + 5000000000LL), 0); /* EOF */
    hm_sock_close(s);

    ASSERT_EQ(hm_sock_connect(&s, (struct sockaddr *)&a, sizeof(a), 0), 0);
    ASSERT_EQ(hm_sock_write(s, "R", 1, 0, NULL), 1);
    ASSERT_EQ(hm_sock_read(s, buf, sizeof(buf), hm_now_ns() + 5000000000LL), -ECONNRESET);
    hm_sock_close(s);
}

static void refused(void *p)
{
    /* Bind a port, close it, and connect: nothing listens there. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = loopback_addr(0);
    ASSERT_EQ(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    socklen_t len = sizeof(a);
    getsockname(fd, (struct sockaddr *)&a, &len);
    close(fd);
    hm_sock *s;
    ASSERT_EQ(hm_sock_connect(&s, (struct sockaddr *)&a, sizeof(a), 0), -ECONNREFUSED);
}

static hm_coro *blocked_reader;
static int cancel_result = 1;
static void deadline_and_cancel(void *p)
{
    struct sockaddr_in a = loopback_addr(srv.port);
    hm_sock *s;
    ASSERT_EQ(hm_sock_connect(&s, (struct sockaddr *)&a, sizeof(a), 0), 0);
    char buf[8];
    int64_t t0 = hm_now_ns();
    ASSERT_EQ(hm_sock_read(s, buf, sizeof(buf), t0 + 50 * 1000000), -ETIMEDOUT);
    /* Not before the deadline; how long after is the machine's business (a
     * deadline that never fired would hang the read: ctest's TIMEOUT). */
    ASSERT_GE(hm_now_ns() - t0, 50 * 1000000);
    /* The socket still works after a timed-out read. */
    ASSERT_EQ(hm_sock_write(s, "ping", 4, 0, NULL), 4);
    ASSERT_EQ(hm_sock_read(s, buf, sizeof(buf), hm_now_ns() + 5000000000LL), 4);
    blocked_reader = hm_coro_self();
    cancel_result = (int)hm_sock_read(s, buf, sizeof(buf), 0); /* cancelled below */
    hm_sock_close(s);
    *(int *)p = 1;
}
static void do_cancel(void *p)
{
    while (!blocked_reader)
        hm_coro_sleep(1000000);
    hm_coro_sleep(100 * 1000000); /* well past the read deadline above */
    ASSERT_EQ(hm_coro_cancel(blocked_reader), 0);
}

/* Stops the echo server once `*flag` becomes true. */
static void stop_when(void *p)
{
    volatile int *flag = p;
    while (!*flag)
        hm_coro_sleep(2 * 1000000);
    echo_stop(&srv);
}

static void stop_when_clients_done(void *p)
{
    int n = (int)(intptr_t)p;
    for (;;) {
        int done = 0;
        for (int i = 0; i < n; i++)
            done += args[i].ok;
        if (done == n) break;
        hm_coro_sleep(2 * 1000000);
    }
    echo_stop(&srv);
}

int main(int argc, char **argv)
{
    hm_loop_options o = test_loop_options(argc, argv);
    raise_nofile();
    hm_loop *loop;
    ASSERT_EQ(hm_loop_create(&loop, &o), 0);

    int counts[] = {1, 100, 5000};
    for (size_t k = 0; k < HM_ARRAY_LEN(counts); k++) {
        int n = counts[k];
        memset(&srv, 0, sizeof(srv));
        echo_start(&srv);
        run_clients_fn((void *)(intptr_t)n);
        hm_coro_spawn(loop, stop_when_clients_done, (void *)(intptr_t)n, NULL);
        ASSERT_EQ(hm_loop_run(loop), 0);
        for (int i = 0; i < n; i++)
            ASSERT_EQ(args[i].ok, 1);
        ASSERT_EQ(srv.accepted, n);
        printf("%d concurrent echo connections: ok\n", n);
        free(args);
    }

    big_out = malloc(BIG);
    big_in = malloc(BIG);
    for (size_t i = 0; i < BIG; i++)
        big_out[i] = (char)(i * 2654435761u >> 13);
    memset(&srv, 0, sizeof(srv));
    echo_start(&srv);
    static int big_done;
    hm_coro_spawn(loop, big_writer, &big_done, NULL);
    hm_coro_spawn(loop, stop_when, &big_done, NULL);
    ASSERT_EQ(hm_loop_run(loop), 0);
    printf("partial reads and writes of 4 MiB: ok\n");

    struct sockaddr_in a = loopback_addr(0);
    ASSERT_EQ(hm_sock_listen(&closer_listener, (struct sockaddr *)&a, sizeof(a), 16), 0);
    hm_coro_spawn(loop, closer_accept, NULL, NULL);
    hm_coro_spawn(loop, eof_and_reset, NULL, NULL);
    hm_coro_spawn(loop, refused, NULL, NULL);
    ASSERT_EQ(hm_loop_run(loop), 0);
    printf("EOF, reset and refused: ok\n");

    static int cancel_done;
    memset(&srv, 0, sizeof(srv));
    echo_start(&srv);
    hm_coro_spawn(loop, deadline_and_cancel, &cancel_done, NULL);
    hm_coro_spawn(loop, do_cancel, NULL, NULL);
    hm_coro_spawn(loop, stop_when, &cancel_done, NULL);
    ASSERT_EQ(hm_loop_run(loop), 0);
    ASSERT_EQ(cancel_result, -ECANCELED);
    const hm_loop_stats *st = hm_loop_get_stats(loop);
    ASSERT_GE(st->timeouts, 1);
    ASSERT_GE(st->resets, 1);
    ASSERT_GE(st->connect_errors, 1);
    printf("read deadline and cancellation: ok\n");
    hm_loop_destroy(loop);
    free(big_out);
    free(big_in);
    return 0;
}
