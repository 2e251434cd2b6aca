/* Helpers for engine tests: backend from argv[1] (skipping with a reason
 * when io_uring is unavailable) and a loopback echo server. */
#ifndef HM_ENGINE_TEST_UTIL_H
#define HM_ENGINE_TEST_UTIL_H

#include "engine/engine.h"
#include "hm_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>

static inline hm_loop_options test_loop_options(int argc, char **argv)
{
    hm_loop_options o = {0};
    if (argc < 2 || hm_backend_parse(argv[1], &o.backend) < 0 || o.backend == HM_BACKEND_AUTO) {
        fprintf(stderr, "usage: %s io_uring|epoll\n", argv[0]);
        exit(2);
    }
    if (o.backend == HM_BACKEND_IO_URING) {
        const char *why = NULL;
        if (hm_io_uring_probe(&why) < 0) HM_SKIP("io_uring unavailable here: %s", why ? why : "?");
    }
    printf("backend: %s\n", hm_backend_name(o.backend));
    return o;
}

/* Runs fn(arg) as a coroutine on a loop of its own until the loop has
 * nothing left to run. */
static inline void run_on_loop(const hm_loop_options *lo, hm_coro_fn fn, void *arg)
{
    hm_loop *loop;
    ASSERT_EQ(hm_loop_create(&loop, lo), 0);
    ASSERT_EQ(hm_coro_spawn(loop, fn, arg, NULL), 0);
    ASSERT_EQ(hm_loop_run(loop), 0);
    hm_loop_destroy(loop);
}

static inline void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static inline struct sockaddr_in loopback_addr(int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

/* Echo server: one coroutine per connection, echoes until EOF. */
typedef struct echo_server {
    hm_sock *listener;
    int port;
    int accepted;
    int active;
    bool stop;
    hm_coro *acceptor;
} echo_server;

static inline void echo_conn(void *arg)
{
    hm_sock *s = arg;
    char buf[16384];
    for (;;) {
        ssize_t n = hm_sock_read(s, buf, sizeof(buf), 0);
        if (n <= 0) break;
        if (hm_sock_write(s, buf, (size_t)n, 0, NULL) < 0) break;
    }
    hm_sock_close(s);
}

static inline void echo_accept_loop(void *arg)
{
    echo_server *srv = arg;
    while (!srv->stop) {
        hm_sock *c;
        int rc = hm_sock_accept(srv->listener, &c, 0);
        if (rc < 0) break;
        srv->accepted++;
        ASSERT_EQ(hm_coro_spawn(NULL, echo_conn, c, NULL), 0);
    }
    hm_sock_close(srv->listener);
}

/* Starts the echo server on the current loop; stop it with echo_stop(). */
static inline void echo_start(echo_server *srv)
{
    struct sockaddr_in a = loopback_addr(0);
    ASSERT_EQ(hm_sock_listen(&srv->listener, (struct sockaddr *)&a, sizeof(a), 4096), 0);
    srv->port = hm_sock_local_port(srv->listener);
    ASSERT_GT(srv->port, 0);
    ASSERT_EQ(hm_coro_spawn(NULL, echo_accept_loop, srv, &srv->acceptor), 0);
}

static inline void echo_stop(echo_server *srv)
{
    srv->stop = true;
    ASSERT_EQ(hm_coro_cancel(srv->acceptor), 0);
}

#endif
