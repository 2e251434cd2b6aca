/* The epoll backend: non-blocking fds registered once, edge-triggered, for
 * both directions. An operation tries the system call first and only waits
 * for readiness after EAGAIN, so no readiness edge can be missed. */
#include "engine/internal.h"

#include <stdatomic.h>
#include <sys/epoll.h>
#include <unistd.h>

static int ep_init(hm_loop *loop, unsigned entries)
{
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->epfd < 0) return -errno;
    /* The interrupt eventfds only wake the wait (data.ptr NULL); each is
     * written once, so edge-triggered reports it once. */
    for (int i = 0; i < 2; i++) {
        struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.ptr = NULL};
        if (hm__intr_fd[i] >= 0 && epoll_ctl(loop->epfd, EPOLL_CTL_ADD, hm__intr_fd[i], &ev) < 0)
            return -errno;
    }
    return 0;
}

static void ep_destroy(hm_loop *loop)
{
    if (loop->epfd >= 0) close(loop->epfd);
}

static int ep_poll(hm_loop *loop, int64_t timeout_ns)
{
    struct epoll_event evs[256];
    struct timespec ts, *tsp = NULL;
    if (timeout_ns >= 0) {
        ts.tv_sec = timeout_ns / 1000000000;
        ts.tv_nsec = timeout_ns % 1000000000;
        tsp = &ts;
    }
    /* epoll_pwait2 (Linux 5.11) waits to the nanosecond; without it (older
     * kernels, valgrind) epoll_wait, rounded up to the millisecond. */
    static _Atomic bool no_pwait2;
    int n = -1;
    if (!atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
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
        hm_sock *s = evs[i].data.ptr;
        if (!s) continue; /* an interrupt: the loop reads the level */
        uint32_t ev = evs[i].events;
        if (s->rd_waiter && (ev & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP))) {
            hm__op *op = s->rd_waiter;
            s->rd_waiter = NULL;
            hm__op_complete(loop, op, 0);
        }
        if (s->wr_waiter && (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
            hm__op *op = s->wr_waiter;
            s->wr_waiter = NULL;
            hm__op_complete(loop, op, 0);
        }
    }
    return n;
}

static bool ep_has_pending(hm_loop *loop)
{
    return false;
}

static int ep_sock_added(hm_sock *s)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = s};
    if (s->listening) ev.events = EPOLLIN | EPOLLET;
    return epoll_ctl(s->loop->epfd, EPOLL_CTL_ADD, s->fd, &ev) < 0 ? -errno : 0;
}

static void ep_cancel(hm_loop *loop, hm__op *op)
{
    hm_sock *s = op->sock;
    if (s->rd_waiter == op) s->rd_waiter = NULL;
    if (s->wr_waiter == op) s->wr_waiter = NULL;
    hm__op_complete(loop, op, op->cancel_reason);
}

/* Waits until the socket may be readable (or writable); 0 or the reason the
 * wait ended early. */
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

static ssize_t ep_recv(hm_sock *s, void *buf, size_t len, int64_t deadline)
{
    for (;;) {
        ssize_t n = recv(s->fd, buf, len, 0);
        if (n >= 0) return n;
        if (errno == EINTR) continue;
        if (errno != EAGAIN) return -errno;
        int rc = wait_ready(s, false, deadline);
        if (rc < 0) return rc;
    }
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

const hm__backend hm__backend_epoll = {
    .name = "epoll",
    .init = ep_init,
    .destroy = ep_destroy,
    .poll = ep_poll,
    .has_pending = ep_has_pending,
    .sock_added = ep_sock_added,
    .connect = ep_connect,
    .accept = ep_accept,
    .recv = ep_recv,
    .sendv = ep_sendv,
};
