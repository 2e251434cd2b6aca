/* The io_uring backend. Each operation is one SQE whose user_data is the
 * hm__op on the suspended coroutine's stack; that memory stays valid because
 * the coroutine cannot resume before the operation's CQE arrives — even a
 * cancelled operation still delivers its CQE, so a deadline cancels with an
 * ASYNC_CANCEL and then waits for it.
 *
 * SQEs are not submitted one by one: they accumulate while coroutines run
 * and go to the kernel in one io_uring_enter() per loop turn, together with
 * the wait for completions.
 *
 * Accepting: a listener keeps one multishot accept armed (hm__accept_ms),
 * so every connection waiting in the backlog is accepted in the same loop
 * turn, as the epoll backend's accept4() loop does, instead of one per turn
 * (an accept SQE re-armed after each connection left a burst of clients
 * waiting hundreds of turns behind the busy ones). Its CQEs carry the
 * record's address with the low bit set; fds nobody waits for yet queue in
 * the record. A kernel without multishot accept (before 5.19) answers
 * -EINVAL and the listener falls back to one accept SQE per call. */
#include "engine/internal.h"

#include <poll.h>
#include <string.h>
#include <unistd.h>

/* user_data of our own cancel requests, whose CQEs need no handling. */
#define HM__UD_IGNORE 0
/* Low bit of a user_data that is a multishot accept record, not an op. */
#define HM__UD_ACCEPT 1u

/* A listener's multishot accept. Owned by the listener's hm_sock until it
 * closes; then, while the SQE is still armed, by the loop (accept_orphans)
 * until the final CQE or the loop's destroy. */
struct hm__accept_ms {
    hm_sock *sock;         /* NULL once the listener closed */
    hm__op *waiter;        /* hm_sock_accept() waiting for the next fd */
    int *fds;              /* accepted, not taken yet: fds[head, head + len) */
    size_t head, len, cap; /* a ring of cap slots */
    int err;               /* an error that ended the multishot, for the next call */
    bool armed;            /* the SQE is in the kernel (or queued for it) */
    bool single;           /* no multishot here: one accept SQE per call */
    hm__accept_ms *next;   /* in loop->accept_orphans */
};

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
    if (rc < 0) return rc;
    /* The interrupt eventfds only wake the wait (their CQEs are ignored);
     * each is written once, so a one-shot poll each is enough. */
    for (int i = 0; i < 2; i++) {
        if (hm__intr_fd[i] < 0) continue;
        struct io_uring_sqe *sqe = io_uring_get_sqe(&loop->ring);
        if (!sqe) return -EBUSY;
        io_uring_prep_poll_add(sqe, hm__intr_fd[i], POLLIN);
        io_uring_sqe_set_data64(sqe, HM__UD_IGNORE);
    }
    return 0;
}

static void accept_cqe(hm_loop *loop, hm__accept_ms *ms, int res, unsigned flags);

/* The multishot accept record a tagged user_data names. */
static hm__accept_ms *accept_of(uint64_t user_data)
{
    return (hm__accept_ms *)(uintptr_t)(user_data & ~(uint64_t)HM__UD_ACCEPT);
}

static void ur_destroy(hm_loop *loop)
{
    /* Accepted fds still in the CQ must not leak; nothing else there has a
     * coroutine left to resume. */
    unsigned head, seen = 0;
    struct io_uring_cqe *cqe;
    io_uring_for_each_cqe(&loop->ring, head, cqe)
    {
        seen++;
        if (cqe->user_data & HM__UD_ACCEPT)
            accept_cqe(loop, accept_of(cqe->user_data), cqe->res, cqe->flags);
    }
    io_uring_cq_advance(&loop->ring, seen);
    io_uring_queue_exit(&loop->ring);
    while (loop->accept_orphans) {
        hm__accept_ms *ms = loop->accept_orphans;
        loop->accept_orphans = ms->next;
        hm_free(ms->fds);
        hm_free(ms);
    }
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
        if (cqe->user_data & HM__UD_ACCEPT) {
            accept_cqe(loop, accept_of(cqe->user_data), cqe->res, cqe->flags);
            continue;
        }
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

/* One accept SQE per call (kernels without multishot accept). */
static int accept_single(hm_sock *ls, int64_t deadline)
{
    for (;;) {
        struct io_uring_sqe *sqe = get_sqe(ls->loop);
        if (!sqe) return -EBUSY;
        hm__op op = {.cancel = ur_cancel};
        io_uring_prep_accept(sqe, ls->fd, NULL, NULL, SOCK_CLOEXEC);
        int64_t r = submit_wait(ls->loop, sqe, &op, deadline);
        if (r != -ECONNABORTED && r != -EINTR) return (int)r;
    }
}

/* Unlinks an orphan record from the loop's list and frees it. */
static void accept_free_orphan(hm_loop *loop, hm__accept_ms *ms)
{
    for (hm__accept_ms **pp = &loop->accept_orphans; *pp; pp = &(*pp)->next) {
        if (*pp == ms) {
            *pp = ms->next;
            break;
        }
    }
    hm_free(ms->fds);
    hm_free(ms);
}

/* Queues an accepted fd for the next hm_sock_accept(); false when out of
 * memory (the caller closes it: the client sees its connection reset). */
static bool accept_queue(hm__accept_ms *ms, int fd)
{
    if (ms->len == ms->cap) {
        size_t cap = ms->cap ? ms->cap * 2 : 64;
        int *fds = hm_alloc(cap * sizeof(*fds));
        if (!fds) return false;
        for (size_t i = 0; i < ms->len; i++)
            fds[i] = ms->fds[(ms->head + i) % ms->cap];
        hm_free(ms->fds);
        ms->fds = fds;
        ms->head = 0;
        ms->cap = cap;
    }
    ms->fds[(ms->head + ms->len++) % ms->cap] = fd;
    return true;
}

/* A CQE of a multishot accept: a new fd, or an error; without
 * IORING_CQE_F_MORE the SQE is spent. */
static void accept_cqe(hm_loop *loop, hm__accept_ms *ms, int res, unsigned flags)
{
    bool more = flags & IORING_CQE_F_MORE;
    if (!more) ms->armed = false;
    if (!ms->sock) { /* the listener closed: drop what still arrives */
        if (res >= 0) close(res);
        if (!more) accept_free_orphan(loop, ms);
        return;
    }
    if (res < 0 && !more && res == -EINVAL) ms->single = true; /* no multishot accept here */
    if (ms->waiter) {
        hm__op *op = ms->waiter;
        ms->waiter = NULL;
        /* -EAGAIN: the waiter just tries again (re-arming, or single-shot). */
        hm__op_complete(loop, op, res == -EINVAL && ms->single ? -EAGAIN : res);
        return;
    }
    if (res >= 0) {
        if (!accept_queue(ms, res)) close(res);
    } else if (!(res == -EINVAL && ms->single)) {
        ms->err = res;
    }
}

static void accept_wait_cancel(hm_loop *loop, hm__op *op)
{
    hm__accept_ms *ms = op->sock->ams;
    if (ms->waiter == op) ms->waiter = NULL;
    hm__op_complete(loop, op, op->cancel_reason);
}

static int ur_accept(hm_sock *ls, int64_t deadline)
{
    hm_loop *loop = ls->loop;
    hm__accept_ms *ms = ls->ams;
    if (!ms) {
        ms = hm_calloc(1, sizeof(*ms));
        if (!ms) return -ENOMEM;
        ms->sock = ls;
        ls->ams = ms;
    }
    for (;;) {
        if (ms->len) {
            int fd = ms->fds[ms->head];
            ms->head = (ms->head + 1) % ms->cap;
            ms->len--;
            return fd;
        }
        int64_t r = ms->err;
        ms->err = 0;
        if (r == 0) {
            if (ms->single) return accept_single(ls, deadline);
            if (!ms->armed) {
                struct io_uring_sqe *sqe = get_sqe(loop);
                if (!sqe) return -EBUSY;
                io_uring_prep_multishot_accept(sqe, ls->fd, NULL, NULL, SOCK_CLOEXEC);
                io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)ms | HM__UD_ACCEPT);
                ms->armed = true;
            }
            hm__op op = {.cancel = accept_wait_cancel, .sock = ls};
            ms->waiter = &op;
            r = hm__op_wait(loop, &op, deadline);
        }
        if (r >= 0) return (int)r;
        if (r != -EAGAIN && r != -ECONNABORTED && r != -EINTR) return (int)r;
    }
}

/* The listener closes: accepted fds nobody took are closed, an armed SQE
 * is cancelled and its record handed to the loop until the final CQE. */
static void ur_sock_closing(hm_sock *s)
{
    hm__accept_ms *ms = s->ams;
    if (!ms) return;
    s->ams = NULL;
    for (; ms->len; ms->len--, ms->head = (ms->head + 1) % ms->cap)
        close(ms->fds[ms->head]);
    if (!ms->armed) {
        hm_free(ms->fds);
        hm_free(ms);
        return;
    }
    ms->sock = NULL;
    ms->waiter = NULL;
    ms->next = s->loop->accept_orphans;
    s->loop->accept_orphans = ms;
    struct io_uring_sqe *sqe = get_sqe(s->loop);
    if (sqe) { /* else the ring's exit cancels it */
        io_uring_prep_cancel64(sqe, (uint64_t)(uintptr_t)ms | HM__UD_ACCEPT, 0);
        io_uring_sqe_set_data64(sqe, HM__UD_IGNORE);
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
    .sock_closing = ur_sock_closing,
    .connect = ur_connect,
    .accept = ur_accept,
    .recv = ur_recv,
    .sendv = ur_sendv,
};
