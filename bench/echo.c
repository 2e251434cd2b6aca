/* Loopback echo round trips per client-CPU-second, io_uring vs epoll.
 *
 * A forked echo server (our engine, epoll, pinned to CPU 1) serves 200
 * connections; the client (this process, pinned to CPU 0) runs each
 * backend in turn, interleaved over ROUNDS rounds of SECONDS each. Every
 * connection does 64-byte write + read round trips back to back. The
 * figure is round trips divided by the client's user+sys CPU time
 * (getrusage), so it measures the client's cost, not the server's. */
#include "bench_util.h"
#include "engine/engine.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define CONNS 200
#define ROUNDS 5
#define SECONDS 3
#define MSG 64

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
}

static void serve_conn(void *p)
{
    hm_sock *s = p;
    char buf[4096];
    for (;;) {
        ssize_t n = hm_sock_read(s, buf, sizeof(buf), 0);
        if (n <= 0 || hm_sock_write(s, buf, (size_t)n, 0, NULL) < 0) break;
    }
    hm_sock_close(s);
}

static void serve(void *p)
{
    hm_sock *ls = p, *c;
    while (hm_sock_accept(ls, &c, 0) == 0)
        hm_coro_spawn(NULL, serve_conn, c, NULL);
}

static int port;
static int64_t end_ns;
static long total_rt;

static void client(void *p)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    hm_sock *s;
    if (hm_sock_connect(&s, (struct sockaddr *)&a, sizeof(a), 0) < 0) return;
    char msg[MSG], buf[MSG];
    memset(msg, 'x', sizeof(msg));
    while (hm_now_ns() < end_ns) {
        if (hm_sock_write(s, msg, MSG, 0, NULL) < 0) break;
        size_t got = 0;
        while (got < MSG) {
            ssize_t n = hm_sock_read(s, buf + got, MSG - got, 0);
            if (n <= 0) goto out;
            got += (size_t)n;
        }
        total_rt++;
    }
out:
    hm_sock_close(s);
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

int main(void)
{
    int fds[2];
    if (pipe(fds) < 0) return 1;
    pid_t pid = fork();
    if (pid == 0) {
        pin(1);
        hm_loop *loop;
        hm_loop_options lo = {.backend = HM_BACKEND_EPOLL};
        hm_loop_create(&loop, &lo);
        struct sockaddr_in a = {.sin_family = AF_INET};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        hm_sock *ls;
        if (hm_sock_listen(&ls, (struct sockaddr *)&a, sizeof(a), 1024) < 0) _exit(1);
        int p = hm_sock_local_port(ls);
        if (write(fds[1], &p, sizeof(p)) != sizeof(p)) _exit(1);
        hm_coro_spawn(loop, serve, ls, NULL);
        hm_loop_run(loop);
        _exit(0);
    }
    if (read(fds[0], &port, sizeof(port)) != sizeof(port)) return 1;
    pin(0);

    hm_backend_kind kinds[2] = {HM_BACKEND_IO_URING, HM_BACKEND_EPOLL};
    double per_cpu[2][ROUNDS], per_sec[2][ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        for (int k = 0; k < 2; k++) {
            int kk = (r % 2) ? 1 - k : k; /* alternate which backend goes first */
            hm_loop *loop;
            hm_loop_options lo = {.backend = kinds[kk]};
            if (hm_loop_create(&loop, &lo) < 0) return 1;
            total_rt = 0;
            end_ns = hm_now_ns() + SECONDS * 1000000000LL;
            for (int i = 0; i < CONNS; i++)
                hm_coro_spawn(loop, client, NULL, NULL);
            double c0 = cpu_seconds();
            int64_t t0 = hm_now_ns();
            hm_loop_run(loop);
            double cpu = cpu_seconds() - c0;
            double wall = (double)(hm_now_ns() - t0) / 1e9;
            hm_loop_destroy(loop);
            per_cpu[kk][r] = (double)total_rt / cpu;
            per_sec[kk][r] = (double)total_rt / wall;
        }
    }
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    printf("echo: %d connections, %d-byte round trips, %d rounds x %d s, interleaved\n", CONNS, MSG,
           ROUNDS, SECONDS);
    double a = print_median("io_uring round trips / client CPU s", per_cpu[0], ROUNDS, "");
    double b = print_median("epoll    round trips / client CPU s", per_cpu[1], ROUNDS, "");
    print_median("io_uring round trips / s (wall)", per_sec[0], ROUNDS, "");
    print_median("epoll    round trips / s (wall)", per_sec[1], ROUNDS, "");
    printf("ratio io_uring/epoll (per CPU s, medians): %.2f\n", a / b);
    return 0;
}
