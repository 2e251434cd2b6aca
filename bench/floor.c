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
 * usage: bench_floor HOST:PORT CONNS SECONDS [PATH | @FILE [@SSE_FILE KEY]]
 *   PATH: GET PATH (default /); @FILE: the request's raw bytes from FILE
 *   (e.g. a php-via action, so that the floor of hammer mode is measured)
 *   @SSE_FILE KEY: the floor of hammer mode with its observer. One more
 *   connection sends SSE_FILE's request (the page's SSE stream) and reads
 *   the stream as the least code can: each read scanned for `"KEY` and the
 *   integer after the ':' that follows (the patched signal's value), with
 *   no SSE, chunked-encoding or JSON parsing. The actions start once the
 *   stream showed the value; at the end the floor reads on until the value
 *   rose by the number of actions (or for 2 s), so that every patch of the
 *   run was read.
 * prints: requests N / seconds S / requests_per_s R, and with an observer
 *   patches N / increment I of A actions (the value's rise over the run;
 *   I == A, the requests and the first one, when every patch was read) */
#define _GNU_SOURCE /* memmem */
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
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

/* The observer's reads: what is left of the last read (a key or number it
 * cut) goes before the next one. */
#define CARRY 256
static struct {
    int idx; /* its registered file, after the CONNS connections */
    const char *key;
    size_t key_len;
    char buf[CARRY + RBUF + 1]; /* and a NUL after the bytes, for strtoll */
    size_t carry;
    bool have_first;
    long long first, last, patches;
} obs = {.idx = -1};

/* Finds every complete `"KEY...:<integer>` in the bytes read so far. */
static void observe(size_t got)
{
    char *p = obs.buf, *end = obs.buf + obs.carry + got, *done_to = obs.buf;
    *end = '\0';
    while ((p = memmem(p, (size_t)(end - p), obs.key, obs.key_len))) {
        char *colon = memchr(p + obs.key_len, ':', (size_t)(end - p) - obs.key_len);
        if (!colon) break;
        char *e;
        long long v = strtoll(colon + 1, &e, 10);
        if (e == end) break;  /* cut: the rest comes with the next read */
        if (e == colon + 1) { /* not an integer: another key */
            p = colon + 1;
            continue;
        }
        if (!obs.have_first)
            obs.have_first = true, obs.first = v;
        else if (v != obs.last)
            obs.patches++;
        obs.last = v;
        p = done_to = e;
    }
    size_t left = (size_t)(end - done_to);
    if (left > CARRY) done_to = end - CARRY, left = CARRY;
    memmove(obs.buf, done_to, left);
    obs.carry = left;
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

static void observe_more(void)
{
    struct io_uring_sqe *r = sqe_get();
    io_uring_prep_recv(r, obs.idx, obs.buf + obs.carry, RBUF, 0);
    r->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(r, (uint64_t)obs.idx);
}

static size_t read_file(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f) die(path, errno);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    if (n == 0 || n == cap) die("a request file", EINVAL);
    return n;
}

static int connect_to(const struct sockaddr_in *a)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (const struct sockaddr *)a, sizeof(*a)) < 0) die("connect", errno);
    return fd;
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
        req_len = read_file(path + 1, req, sizeof(req));
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

    bool observing = argc > 6 && argv[5][0] == '@';
    int *fds = malloc((size_t)(n + 1) * sizeof(int));
    conn *conns = calloc((size_t)n, sizeof(conn));
    for (int i = 0; i < n; i++)
        fds[i] = connect_to(&a);
    if (observing) {
        /* The stream opens, and shows the value, before the first action. */
        static char sse_req[8192];
        size_t sse_len = read_file(argv[5] + 1, sse_req, sizeof(sse_req));
        obs.idx = n;
        obs.key = argv[6];
        obs.key_len = strlen(argv[6]);
        fds[n] = connect_to(&a);
        if (send(fds[n], sse_req, sse_len, 0) != (ssize_t)sse_len) die("send", errno);
        while (!obs.have_first) {
            ssize_t got = recv(fds[n], obs.buf + obs.carry, RBUF, 0);
            if (got <= 0) die("the SSE stream", got < 0 ? errno : ECONNRESET);
            observe((size_t)got);
        }
    }
    if ((rc = io_uring_register_files(&ring, fds, (unsigned)(n + observing))) < 0)
        die("register_files", -rc);

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
    if (observing) observe_more();
    /* The first action, on connection 0, counts too. */
    long long actions = 1;
    double drain_end = 0;
    while (inflight > 0 ||
           (observing && obs.last - obs.first < actions + (long long)done && now_s() < drain_end)) {
        struct io_uring_cqe *cqe;
        struct __kernel_timespec wait = {.tv_nsec = 100 * 1000000};
        rc = io_uring_submit_and_wait_timeout(&ring, &cqe, 1, inflight > 0 ? NULL : &wait, NULL);
        if (rc < 0 && rc != -EINTR && rc != -ETIME) die("io_uring_submit_and_wait", -rc);
        bool more = now_s() < end;
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe)
        {
            seen++;
            uint64_t ud = cqe->user_data;
            if (ud >> 63 || cqe->res <= 0)
                die("a send or recv failed", cqe->res < 0 ? -cqe->res : ECONNRESET);
            if ((int)ud == obs.idx) {
                observe((size_t)cqe->res);
                observe_more();
                continue;
            }
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
            else if (--inflight == 0)
                drain_end = now_s() + 2;
        }
        io_uring_cq_advance(&ring, seen);
    }
    double elapsed = now_s() - t0;
    printf("requests %llu\nseconds %.3f\nrequests_per_s %.0f\n", done, elapsed, done / elapsed);
    if (observing)
        printf("patches %lld\nincrement %lld of %lld actions\n", obs.patches, obs.last - obs.first,
               actions + (long long)done);
    return 0;
}
