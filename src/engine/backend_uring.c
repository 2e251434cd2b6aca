/* The io_uring backend. Each operation is one SQE whose user_data is the
 * hm__op on the suspended coroutine's stack; that memory stays valid because
 * the coroutine cannot resume before the operation's CQE arrives — even a
 * cancelled operation still delivers its CQE, so a deadline cancels with an
 * ASYNC_CANCEL and then waits for it.
 *
 * SQEs are not submitted one by one: they accumulate while coroutines run
 * and go to the kernel in one io_uring_enter() per loop turn, together with
 * the wait for completions. */
#include "engine/internal.h"

#include <string.h>

/* user_data of our own cancel requests, whose CQEs need no handling. */
#define HM__UD_IGNORE 0

static int ur_init(hm_loop *loop, unsigned entries)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof(p));
    /* One thread submits and reaps, so the kernel may defer completion work
     * to our io_uring_enter() calls instead of interrupting us (6.1+). */
    p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    int rc = io_uring_queue_init_params(entries, &loop->ring, &p);
    if (rc == -EINVAL) {
        memset(&p, 0, sizeof(p));
        rc = io_uring_queue_init_params(entries, &loop->ring, &p);
    }
    return rc;
}

static void ur_destroy(hm_loop *loop)
{
    io_uring_queue_exit(&loop->ring);
}

static struct io_uring_sqe *get_sqe(hm_loop *loop)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&loop->ring);
    if (HM_UNLIKELY(!sqe)) {
        /* The SQ ring is full: hand what we have to the kernel first. */
        io_uring_submit(&loop->ring);
        sqe = io_uring_get_sqe(&loop->ring);
    }
    return sqe;
}

static int ur_poll(hm_loop *loop, int64_t timeout_ns)
{
    struct io_uring *ring = &loop->ring;
    int rc;
    if (timeout_ns == 0) {
        rc = io_uring_submit_and_get_events(ring);
    } else {
        struct io_uring_cqe *cqe;
        struct __kernel_timespec ts, *tsp = NULL;
        if (timeout_ns > 0) {
            ts.tv_sec = timeout_ns / 1000000000;
            ts.tv_nsec = timeout_ns % 1000000000;
            tsp = &ts;
        }
        rc = io_uring_submit_and_wait_timeout(ring, &cqe, 1, tsp, NULL);
    }
    if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EBUSY) return rc;

    unsigned head, seen = 0;
    struct io_uring_cqe *cqe;
    io_uring_for_each_cqe(ring, head, cqe)
    {
        seen++;
        hm__op *op = io_uring_cqe_get_data(cqe);
        if (op) hm__op_complete(loop, op, cqe->res);
    }
    io_uring_cq_advance(ring, seen);
    return (int)seen;
}

static bool ur_has_pending(hm_loop *loop)
{
    return io_uring_sq_ready(&loop->ring) > 0;
}

static int ur_sock_added(hm_sock *s)
{
    return 0;
}

static void ur_cancel(hm_loop *loop, hm__op *op)
{
    struct io_uring_sqe *sqe = get_sqe(loop);
    if (!sqe) return; /* cannot happen after a submit; the op ends on its own */
    io_uring_prep_cancel(sqe, op, 0);
    io_uring_sqe_set_data64(sqe, HM__UD_IGNORE);
}

/* Queues the prepared SQE for `op` and suspends until its CQE. */
static int64_t submit_wait(hm_loop *loop, struct io_uring_sqe *sqe, hm__op *op, int64_t deadline)
{
    io_uring_sqe_set_data(sqe, op);
    return hm__op_wait(loop, op, deadline);
}

static int ur_connect(hm_sock *s, const struct sockaddr *sa, socklen_t len, int64_t deadline)
{
    struct io_uring_sqe *sqe = get_sqe(s->loop);
    if (!sqe) return -EBUSY;
    hm__op op = {.cancel = ur_cancel};
    io_uring_prep_connect(sqe, s->fd, sa, len);
    return (int)submit_wait(s->loop, sqe, &op, deadline);
}

static int ur_accept(hm_sock *ls, int64_t deadline)
{
    struct io_uring_sqe *sqe = get_sqe(ls->loop);
    if (!sqe) return -EBUSY;
    hm__op op = {.cancel = ur_cancel};
    io_uring_prep_accept(sqe, ls->fd, NULL, NULL, SOCK_CLOEXEC);
    for (;;) {
        int64_t r = submit_wait(ls->loop, sqe, &op, deadline);
        if (r != -ECONNABORTED && r != -EINTR) return (int)r;
        sqe = get_sqe(ls->loop);
        if (!sqe) return -EBUSY;
        io_uring_prep_accept(sqe, ls->fd, NULL, NULL, SOCK_CLOEXEC);
    }
}

static ssize_t ur_recv(hm_sock *s, void *buf, size_t len, int64_t deadline)
{
    struct io_uring_sqe *sqe = get_sqe(s->loop);
    if (!sqe) return -EBUSY;
    hm__op op = {.cancel = ur_cancel};
    io_uring_prep_recv(sqe, s->fd, buf, len, 0);
    return submit_wait(s->loop, sqe, &op, deadline);
}

static ssize_t ur_sendv(hm_sock *s, struct iovec *iov, int iovcnt, int64_t deadline)
{
    struct io_uring_sqe *sqe = get_sqe(s->loop);
    if (!sqe) return -EBUSY;
    hm__op op = {.cancel = ur_cancel};
    if (iovcnt == 1) {
        io_uring_prep_send(sqe, s->fd, iov[0].iov_base, iov[0].iov_len, MSG_NOSIGNAL);
        return submit_wait(s->loop, sqe, &op, deadline);
    }
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)iovcnt};
    io_uring_prep_sendmsg(sqe, s->fd, &msg, MSG_NOSIGNAL);
    return submit_wait(s->loop, sqe, &op, deadline);
}

const hm__backend hm__backend_uring = {
    .name = "io_uring",
    .init = ur_init,
    .destroy = ur_destroy,
    .poll = ur_poll,
    .has_pending = ur_has_pending,
    .sock_added = ur_sock_added,
    .connect = ur_connect,
    .accept = ur_accept,
    .recv = ur_recv,
    .sendv = ur_sendv,
};
