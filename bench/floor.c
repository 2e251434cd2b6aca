/* floor: the least client work per keep-alive GET on this kernel — the
 * yardstick every CPU figure in docs/PERFORMANCE.md is divided by.
 *
 * N connections, one thread, one io_uring (SINGLE_ISSUER | DEFER_TASKRUN,
 * registered ring fd and files). Each connection keeps one request in
 * flight: a send linked to a recv (IOSQE_IO_LINK), the send's completion
 * skipped on success (IOSQE_CQE_SKIP_SUCCESS), so a request costs one SQE
 * pair, one CQE and no system call of its own (one io_uring_enter per loop
 * turn for all of them). No HTTP parsing: a response is "complete" when the
 * bytes received add up to the first response's length (the target must
 * answer every request with the same bytes, e.g. nginx's `return 200`).
 *
 * usage: bench_floor HOST:PORT CONNS SECONDS [PATH | @FILE]
 *   PATH: GET PATH (default /); @FILE: the request's raw bytes from FILE
 *   (e.g. a php-via action, so that the floor of hammer mode is measured)
 * prints: requests N / seconds S / requests_per_s R */
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RBUF 4096

typedef struct conn {
    char buf[RBUF];
    size_t got; /* bytes of the current response so far */
} conn;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, int err)
{
    fprintf(stderr, "floor: %s: %s\n", what, strerror(err));
    exit(1);
}

static struct io_uring ring;
static char req[8192];
static size_t req_len;

static struct io_uring_sqe *sqe_get(void)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    if (!sqe) {
        io_uring_submit(&ring);
        sqe = io_uring_get_sqe(&ring);
    }
    return sqe;
}

/* The request, and the receive of its response, as one linked pair. */
static void send_recv(conn *c, int idx)
{
    struct io_uring_sqe *s = sqe_get();
    io_uring_prep_send(s, idx, req, req_len, MSG_NOSIGNAL);
    s->flags |= IOSQE_FIXED_FILE | IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS;
    io_uring_sqe_set_data64(s, (uint64_t)idx | 1ull << 63); /* only a failure shows */
    struct io_uring_sqe *r = sqe_get();
    io_uring_prep_recv(r, idx, c->buf, RBUF, 0);
    r->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(r, (uint64_t)idx);
}

/* The rest of a response that arrived in pieces. */
static void recv_more(conn *c, int idx)
{
    struct io_uring_sqe *r = sqe_get();
    io_uring_prep_recv(r, idx, c->buf, RBUF, 0);
    r->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(r, (uint64_t)idx);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s HOST:PORT CONNS SECONDS [PATH]\n", argv[0]);
        return 2;
    }
    char host[64];
    int port;
    if (sscanf(argv[1], "%63[^:]:%d", host, &port) != 2) die("HOST:PORT", EINVAL);
    int n = atoi(argv[2]);
    double seconds = atof(argv[3]);
    const char *path = argc > 4 ? argv[4] : "/";
    if (path[0] == '@') {
        FILE *f = fopen(path + 1, "rb");
        if (!f) die(path + 1, errno);
        req_len = fread(req, 1, sizeof(req), f);
        fclose(f);
        if (req_len == 0 || req_len == sizeof(req)) die("the request file", EINVAL);
    } else {
        req_len = (size_t)snprintf(
            req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: */*\r\n\r\n", path, argv[1]);
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) die("host", EINVAL);

    struct io_uring_params p;
    memset(&p, 0, sizeof(p));
    p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_CQSIZE;
    unsigned entries = 256;
    while (entries < 2u * (unsigned)n)
        entries *= 2;
    p.cq_entries = 2 * entries;
    int rc = io_uring_queue_init_params(entries, &ring, &p);
    if (rc < 0) die("io_uring_queue_init", -rc);
    io_uring_register_ring_fd(&ring);

    int *fds = malloc((size_t)n * sizeof(int));
    conn *conns = calloc((size_t)n, sizeof(conn));
    for (int i = 0; i < n; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (connect(fds[i], (struct sockaddr *)&a, sizeof(a)) < 0) die("connect", errno);
    }
    if ((rc = io_uring_register_files(&ring, fds, (unsigned)n)) < 0) die("register_files", -rc);

    /* The first response on connection 0 tells how long every one is. */
    if (send(fds[0], req, req_len, 0) != (ssize_t)req_len) die("send", errno);
    ssize_t resp_len = recv(fds[0], conns[0].buf, RBUF, 0);
    if (resp_len <= 0) die("recv", resp_len < 0 ? errno : ECONNRESET);
    usleep(10000);
    char extra;
    if (recv(fds[0], &extra, 1, MSG_DONTWAIT) > 0) die("a response longer than one read", EMSGSIZE);

    double t0 = now_s(), end = t0 + seconds;
    unsigned long long done = 0;
    int inflight = n;
    for (int i = 0; i < n; i++)
        send_recv(&conns[i], i);
    while (inflight > 0) {
        struct io_uring_cqe *cqe;
        rc = io_uring_submit_and_wait(&ring, 1);
        if (rc < 0 && rc != -EINTR) die("io_uring_submit_and_wait", -rc);
        bool more = now_s() < end;
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe)
        {
            seen++;
            uint64_t ud = cqe->user_data;
            if (ud >> 63 || cqe->res <= 0)
                die("a send or recv failed", cqe->res < 0 ? -cqe->res : ECONNRESET);
            conn *c = &conns[ud];
            c->got += (size_t)cqe->res;
            if (c->got < (size_t)resp_len) {
                recv_more(c, (int)ud);
                continue;
            }
            c->got = 0;
            done++;
            if (more)
                send_recv(c, (int)ud);
            else
                inflight--;
        }
        io_uring_cq_advance(&ring, seen);
    }
    double elapsed = now_s() - t0;
    printf("requests %llu\nseconds %.3f\nrequests_per_s %.0f\n", done, elapsed, done / elapsed);
    return 0;
}
