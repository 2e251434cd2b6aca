/* Shared-nothing engine threads: each thread runs its own echo server and
 * clients on its own loop; one and two threads. */
#include "engine_test_util.h"

#include <stdatomic.h>

typedef struct {
    echo_server srv;
    int done;
    hm_backend_kind backend;
} thread_state;

static thread_state states[2];
static atomic_int total_ok;

static void client(void *p)
{
    thread_state *ts = p;
    struct sockaddr_in a = loopback_addr(ts->srv.port);
    hm_sock *s;
    ASSERT_EQ(hm_sock_connect(&s, (struct sockaddr *)&a, sizeof(a), 0), 0);
    for (int i = 0; i < 100; i++) {
        char buf[8];
        ASSERT_EQ(hm_sock_write(s, "abcdefgh", 8, 0, NULL), 8);
        size_t got = 0;
        while (got < 8) {
            ssize_t k = hm_sock_read(s, buf + got, 8 - got, 0);
            ASSERT_GT(k, 0);
            got += (size_t)k;
        }
    }
    hm_sock_close(s);
    atomic_fetch_add(&total_ok, 1);
    if (++ts->done == 50) echo_stop(&ts->srv);
}

static void thread_main(hm_loop *loop, int idx, void *arg)
{
    thread_state *ts = &states[idx];
    ts->backend = hm_loop_backend(loop);
    echo_start(&ts->srv);
    for (int i = 0; i < 50; i++)
        ASSERT_EQ(hm_coro_spawn(loop, client, ts, NULL), 0);
}

int main(int argc, char **argv)
{
    hm_loop_options o = test_loop_options(argc, argv);
    for (int threads = 1; threads <= 2; threads++) {
        memset(states, 0, sizeof(states));
        atomic_store(&total_ok, 0);
        ASSERT_EQ(hm_engine_run(threads, &o, thread_main, NULL), 0);
        ASSERT_EQ(atomic_load(&total_ok), 50 * threads);
        for (int i = 0; i < threads; i++)
            ASSERT_EQ(states[i].backend, o.backend);
        printf("%d engine thread(s): ok\n", threads);
    }
    return 0;
}
