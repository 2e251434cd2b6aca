/* The epoll backend: non-blocking fds registered once, edge-triggered, for
 * both directions. Reads happen only after a readiness report (sock.c
 * reads into the loop's buffer, or the caller's), and a short read means
 * the socket is empty, so a request-response exchange costs one recv, not
 * a recv that says EAGAIN and then another. Writes and accepts try the
 * system call first and wait for readiness only after EAGAIN. Events name
 * sockets by fd and generation, so one closed while its event waits in the
 * same batch is skipped, not touched. */
#include "engine/internal.h"

#include <stdatomic.h>
#include <sys/epoll.h>
#include <unistd.h>

/* epoll data of the loop's wake-up eventfd, and of the interrupt eventfds
 * (which only wake the wait: the loop reads the level). */
#define WAKE_DATA UINT64_MAX
#define INTR_DATA (UINT64_MAX - 1)

static uint64_t sock_data(const hm_sock *s)
{
    return (uint64_t)s->gen << 32 | (uint32_t)s->fd;
}

static int ep_init(hm_loop *loop, const hm_loop_options *o)
{
    loop->feat &= HM__F_GUARD_MADVISE; /* the rest are io_uring's */
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->epfd < 0) return -errno;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u64 = WAKE_DATA};
    if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->wake_fd, &ev) < 0) {
        int e = -errno;
        close(loop->epfd);
        return e;
    }
    /* Each interrupt eventfd is written once, so edge-triggered reports it once. */
    for (int i = 0; i < 2; i++) {
        struct epoll_event iev = {.events = EPOLLIN | EPOLLET, .data.u64 = INTR_DATA};
        if (hm__intr_fd[i] >= 0 && epoll_ctl(loop->epfd, EPOLL_CTL_ADD, hm__intr_fd[i], &iev) < 0) {
            int e = -errno;
            close(loop->epfd);
            return e;
        }
    }
    return 0;
}

static void ep_destroy(hm_loop *loop)
{
    if (loop->epfd >= 0) close(loop->epfd);
}

static void ep_cancel(hm_loop *loop, hm__op *op)
{
    hm_sock *s = op->sock;
    if (s->rd_waiter == op) s->rd_waiter = NULL;
    if (s->wr_waiter == op) s->wr_waiter = NULL;
    hm__op_complete(loop, op, op->cancel_reason);
}

/* Continues a detached send the socket could not take at once. */
static void ds_continue(hm_sock *s)
{
    while (s->ds_len) {
        ssize_t n = send(s->fd, s->ds_ptr, s->ds_len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            s->ds_ptr += n;
            s->ds_len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return; /* next EPOLLOUT */
        s->ds_len = 0;
        hm__sock_send_failed(s, n < 0 ? -errno : -EPIPE, false);
        return;
    }
}

static void connect_done(hm_sock *s)
{
    int err = 0;
    socklen_t elen = sizeof(err);
    if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0) err = errno;
    hm__sock_connected(s, -err);
}

static int ep_poll(hm_loop *loop, int64_t timeout_ns)
{
    struct epoll_event evs[256];
    /* epoll_pwait2 (Linux 5.11) waits to the nanosecond; without it (older
     * kernels, valgrind) epoll_wait, rounded up to the millisecond. */
    int n = -1;
    static _Atomic bool no_pwait2;
    if (!atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
        struct timespec ts, *tsp = NULL;
        if (timeout_ns >= 0) {
            ts.tv_sec = timeout_ns / 1000000000;
            ts.tv_nsec = timeout_ns % 1000000000;
            tsp = &ts;
        }
        n = epoll_pwait2(loop->epfd, evs, (int)HM_ARRAY_LEN(evs), tsp, NULL);
        if (n < 0 && errno == ENOSYS) atomic_store(&no_pwait2, true);
    }
    if (atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
        int ms = timeout_ns < 0 ? -1
                 : timeout_ns > (int64_t)INT32_MAX * 1000000
                     ? INT32_MAX
                     : (int)((timeout_ns + 999999) / 1000000);
        n = epoll_wait(loop->epfd, evs, (int)HM_ARRAY_LEN(evs), ms);
    }
    if (n < 0) return -errno;
    for (int i = 0; i < n; i++) {
        uint64_t data = evs[i].data.u64;
        if (data == WAKE_DATA) {
            uint64_t v;
            if (read(loop->wake_fd, &v, sizeof(v)) < 0) {
                /* EAGAIN: another report of the same wake-up */
            }
            hm__loop_drain_inbox(loop);
            continue;
        }
        if (data == INTR_DATA) continue; /* the loop reads the level */
        hm_sock *s = hm__sock_lookup(loop, (int)(uint32_t)data, (uint32_t)(data >> 32));
        if (!s) continue; /* closed earlier in this batch */
        int fd = s->fd;
        uint32_t gen = s->gen;
        uint32_t ev = evs[i].events;
        if (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)) {
            if (s->connecting) {
                connect_done(s);
            } else {
                if (s->wr_waiter) {
                    hm__op *op = s->wr_waiter;
                    s->wr_waiter = NULL;
                    hm__op_complete(loop, op, 0);
                }
                if (s->ds_len) ds_continue(s);
            }
            if (!hm__sock_lookup(loop, fd, gen)) continue;
        }
        if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP))
            hm__sock_readable(s, ev & (EPOLLERR | EPOLLHUP | EPOLLRDHUP));
    }
    return n;
}

static bool ep_has_pending(hm_loop *loop)
{
    return false;
}

static int ep_sock_added(hm_sock *s)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
                             .data.u64 = sock_data(s)};
    if (s->listening) ev.events = EPOLLIN | EPOLLET;
    return epoll_ctl(s->loop->epfd, EPOLL_CTL_ADD, s->fd, &ev) < 0 ? -errno : 0;
}

/* Waits until the socket may be writable (or, for a listener, readable);
 * 0 or the reason the wait ended early. */
static int wait_ready(hm_sock *s, bool write, int64_t deadline)
{
    hm__op op = {.cancel = ep_cancel, .sock = s};
    if (write)
        s->wr_waiter = &op;
    else
        s->rd_waiter = &op;
    return (int)hm__op_wait(s->loop, &op, deadline);
}

static int ep_connect(hm_sock *s, const struct sockaddr *sa, socklen_t len, int64_t deadline)
{
    if (connect(s->fd, sa, len) == 0) return 0;
    if (errno != EINPROGRESS) return -errno;
    int rc = wait_ready(s, true, deadline);
    if (rc < 0) return rc;
    int err = 0;
    socklen_t elen = sizeof(err);
    if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0) return -errno;
    return -err;
}

static int ep_connect_start(hm_sock *s, const struct sockaddr *sa, socklen_t len)
{
    if (connect(s->fd, sa, len) == 0) {
        s->conn_res = 0;
        hm__sock_soon(s); /* the callback never runs inside the starting call */
        return 0;
    }
    if (errno == EINPROGRESS) return 0; /* EPOLLOUT (or an error) reports the end */
    s->conn_res = -errno;
    hm__sock_soon(s);
    return 0;
}

static int ep_accept(hm_sock *ls, int64_t deadline)
{
    for (;;) {
        int fd = accept4(ls->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) return fd;
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno != EAGAIN) return -errno;
        int rc = wait_ready(ls, false, deadline);
        if (rc < 0) return rc;
    }
}

static void ep_want_read(hm_sock *s)
{
    /* Registered for EPOLLIN once, edge-triggered: reports come anyway. */
}

static ssize_t ep_sendv(hm_sock *s, struct iovec *iov, int iovcnt, int64_t deadline)
{
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)iovcnt};
    for (;;) {
        ssize_t n = sendmsg(s->fd, &msg, MSG_NOSIGNAL);
        if (n >= 0) return n;
        if (errno == EINTR) continue;
        if (errno != EAGAIN) return -errno;
        int rc = wait_ready(s, true, deadline);
        if (rc < 0) return rc;
    }
}

static int ep_send_detached(hm_sock *s, const void *buf, size_t len)
{
    if (s->ds_len) return -EBUSY; /* one in flight at a time */
    for (;;) {
        ssize_t n = send(s->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n == (ssize_t)len) return 0;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return -errno;
        if (n < 0) n = 0;
        /* The rest goes out on the next EPOLLOUT; buf outlives the send. */
        s->ds_ptr = (const char *)buf + n;
        s->ds_len = len - (size_t)n;
        return 0;
    }
}

const hm__backend hm__backend_epoll = {
    .name = "epoll",
    .init = ep_init,
    .destroy = ep_destroy,
    .poll = ep_poll,
    .has_pending = ep_has_pending,
    .sock_added = ep_sock_added,
    .connect = ep_connect,
    .connect_start = ep_connect_start,
    .accept = ep_accept,
    .recv = NULL, /* readiness reads happen in sock.c */
    .want_read = ep_want_read,
    .sendv = ep_sendv,
    .send_detached = ep_send_detached,
};
