/* Received bytes as views of the engine's memory (hm_sock_peek /
 * hm_sock_skip): the byte stream arrives whole and in order whatever the
 * pieces, partial skips keep the rest, bytes that arrive while nobody reads
 * wait (and survive other sockets' reads into the same per-thread buffer),
 * EOF follows the last byte, hm_sock_read and peek mix, and
 * hm_sock_peer_spoke sees bytes and a close without consuming. argv[1]:
 * the backend; HAMMER_ENGINE_DISABLE picks the io_uring fallback tested. */
#include "engine_test_util.h"

#include <unistd.h>

static echo_server srv;
#define STREAM (3 * 1024 * 1024 + 17)
static char *pattern;

/* Reads STREAM echoed bytes through views, skipping odd amounts. */
static void stream_reader(void *p)
{
    hm_sock *s = p;
    size_t got = 0, step = 1;
    while (got < STREAM) {
        const char *data;
        ssize_t n = hm_sock_peek(s, &data, hm_now_ns() + 10000000000LL);
        ASSERT_GT(n, 0);
        size_t take = (size_t)n < step ? (size_t)n : step;
        ASSERT_EQ(memcmp(data, pattern + got, take), 0);
        hm_sock_skip(s, take);
        got += take;
        step = step * 7 % 5003 + 1; /* 1 byte to 5 KB, never a whole segment on purpose */
    }
}

static void stream_test(void *p)
{
    struct sockaddr_in a = loopback_addr(srv.port);
    hm_sock *s;
    ASSERT_EQ(hm_sock_connect(&s, (struct sockaddr *)&a, sizeof(a), 0), 0);
    hm_task reader = {0};
    ASSERT_EQ(hm_task_spawn(&reader, NULL, stream_reader, s), 0);
    ASSERT_EQ(hm_sock_write(s, pattern, STREAM, 0, NULL), STREAM);
    ASSERT_EQ(hm_task_join(&reader, hm_now_ns() + 20000000000LL), 0);
    hm_sock_close(s);
    *(int *)p = 1;
}

/* Two sockets whose bytes arrive while nobody reads them, then are read
 * one after the other: neither's bytes are lost or mixed (epoll reads both
 * into the same per-thread buffer). Then EOF after the last byte. */
static void queued_test(void *p)
{
    struct sockaddr_in a = loopback_addr(srv.port);
    hm_sock *s1, *s2;
    ASSERT_EQ(hm_sock_connect(&s1, (struct sockaddr *)&a, sizeof(a), 0), 0);
    ASSERT_EQ(hm_sock_connect(&s2, (struct sockaddr *)&a, sizeof(a), 0), 0);
    const char *data;
    /* arm both (a first peek that times out), then let both echoes land */
    ASSERT_EQ(hm_sock_peek(s1, &data, hm_now_ns() + 1000000), -ETIMEDOUT);
    ASSERT_EQ(hm_sock_peek(s2, &data, hm_now_ns() + 1000000), -ETIMEDOUT);
    ASSERT_EQ(hm_sock_write(s1, "first socket", 12, 0, NULL), 12);
    ASSERT_EQ(hm_sock_write(s2, "second one", 10, 0, NULL), 10);
    hm_coro_sleep(50 * 1000000);
    ASSERT_EQ(hm_sock_peer_spoke(s1), 1); /* bytes wait: not consumed by asking */
    ssize_t n = hm_sock_peek(s1, &data, hm_now_ns() + 5000000000LL);
    ASSERT_GT(n, 0);
    /* take part now, the rest after s2 was read (into the same buffer) */
    ASSERT_EQ(memcmp(data, "first", 5), 0);
    hm_sock_skip(s1, 5);
    char buf[64];
    size_t got = 0;
    while (got < 10) {
        ssize_t k = hm_sock_read(s2, buf + got, sizeof(buf) - got, hm_now_ns() + 5000000000LL);
        ASSERT_GT(k, 0);
        got += (size_t)k;
    }
    ASSERT_EQ(memcmp(buf, "second one", 10), 0);
    got = 0;
    while (got < 7) {
        n = hm_sock_peek(s1, &data, hm_now_ns() + 5000000000LL);
        ASSERT_GT(n, 0);
        memcpy(buf + got, data, (size_t)n);
        got += (size_t)n;
        hm_sock_skip(s1, (size_t)n);
    }
    ASSERT_EQ(memcmp(buf, " socket", 7), 0);
    ASSERT_EQ(hm_sock_peer_spoke(s1), 0); /* nothing waits now */
    hm_sock_close(s1);
    hm_sock_close(s2);
    *(int *)p = 1;
}

/* A server that answers "bye" and closes. */
static hm_sock *closer;
static void closer_conn(void *p)
{
    hm_sock *c;
    ASSERT_EQ(hm_sock_accept(closer, &c, 0), 0);
    char b[8];
    ASSERT_GT(hm_sock_read(c, b, sizeof(b), 0), 0);
    ASSERT_EQ(hm_sock_write(c, "bye", 3, 0, NULL), 3);
    hm_sock_close(c);
}

static void eof_test(void *p)
{
    struct sockaddr_in a = loopback_addr(hm_sock_local_port(closer));
    hm_sock *s;
    ASSERT_EQ(hm_sock_connect(&s, (struct sockaddr *)&a, sizeof(a), 0), 0);
    ASSERT_EQ(hm_sock_write(s, "hi", 2, 0, NULL), 2);
    hm_coro_sleep(50 * 1000000); /* "bye" and the FIN are both there before we look */
    const char *data;
    ssize_t n = hm_sock_peek(s, &data, hm_now_ns() + 5000000000LL);
    ASSERT_EQ(n, 3);
    ASSERT_EQ(memcmp(data, "bye", 3), 0);
    hm_sock_skip(s, 3);
    ASSERT_EQ(hm_sock_peek(s, &data, hm_now_ns() + 5000000000LL), 0); /* EOF, at once */
    ASSERT_EQ(hm_sock_peek(s, &data, hm_now_ns() + 5000000000LL), 0); /* and stays */
    ASSERT_LT(hm_sock_peer_spoke(s), 0);
    hm_sock_close(s);
    hm_sock_close(closer);
    *(int *)p = 1;
}

static void stop_after(void *p)
{
    int *flags = p;
    while (!flags[0] || !flags[1])
        hm_coro_sleep(2 * 1000000);
    echo_stop(&srv);
}

int main(int argc, char **argv)
{
    hm_loop_options o = test_loop_options(argc, argv);
    hm_loop *loop;
    ASSERT_EQ(hm_loop_create(&loop, &o), 0);
    printf("features: %s\n", hm_loop_features(loop));
    pattern = malloc(STREAM);
    for (size_t i = 0; i < STREAM; i++)
        pattern[i] = (char)(i * 2654435761u >> 11);

    static int done[2];
    echo_start(&srv);
    hm_coro_spawn(loop, stream_test, &done[0], NULL);
    hm_coro_spawn(loop, queued_test, &done[1], NULL);
    hm_coro_spawn(loop, stop_after, done, NULL);
    ASSERT_EQ(hm_loop_run(loop), 0);
    ASSERT(done[0] && done[1]);
    printf("a 3 MiB stream through views, queued bytes on two sockets: ok\n");

    struct sockaddr_in a = loopback_addr(0);
    ASSERT_EQ(hm_sock_listen(&closer, (struct sockaddr *)&a, sizeof(a), 16), 0);
    static int eof_done;
    hm_coro_spawn(loop, closer_conn, NULL, NULL);
    hm_coro_spawn(loop, eof_test, &eof_done, NULL);
    ASSERT_EQ(hm_loop_run(loop), 0);
    ASSERT(eof_done);
    printf("bytes, then EOF, then EOF again: ok\n");
    hm_loop_destroy(loop);
    free(pattern);
    return 0;
}
