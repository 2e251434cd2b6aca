/* bench_app's HTTP/1.1 framing: a malformed request answers 400 and
 * closes (other connections unaffected), a bad Content-Length 400, an
 * oversized header section 431, an oversized body 413, pipelined requests
 * answer in order, Expect: 100-continue gets its interim answer, and a
 * connection that never sends is closed after the idle timeout (1.5 s
 * here), not before. argv[1]: the engine backend. */
#include "bench_app_client.h"

#define IDLE_MS 1500

int main(int argc, char **argv)
{
    hm_bench_app_options o = ba_test_options(ba_test_begin(argc, argv, true));
    o.idle_timeout_ms = IDLE_MS;
    int port;
    pid_t pid = start_server(&o, &port);

    int idle_fd = tcp_connect(port); /* never sends */
    int64_t idle_t0 = now_ms();
    check_http_framing(port, 1);

    char b[8];
    ASSERT_EQ(read_until(idle_fd, b, sizeof(b), idle_t0 + IDLE_MS + IO_TIMEOUT_MS), 0);
    ASSERT_GE(now_ms() - idle_t0, IDLE_MS - 100);
    fd_close(idle_fd);
    printf("idle timeout: ok\n");
    stop_server(pid);
    return 0;
}
