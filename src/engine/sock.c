/* Sockets: the parts both backends share — creating and closing, the
 * table that names sockets by fd and generation, received-data segments
 * and their delivery (to a waiting coroutine or a callback reader),
 * readiness reads into the loop's buffer, and the write-everything loops. */
#include "engine/internal.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* The loop's read buffer for readiness reads: one per thread, so an idle
 * connection owns none. */
#define LOOP_RBUF (64 * 1024)
/* A callback reader gets at most this many reads per readiness report
 * before the others get their turn; the rest waits for the next turn. */
#define READS_PER_TURN 16

/* Before every socket operation: a cancel that stuck to the coroutine, an
 * aborted loop or a deadline already passed fails it at once, and a
 * coroutine whose operations keep completing without waiting yields now
 * and then (HM_FAIR_OPS). Without this a server that always has data ready
 * holds an operation forever: the deadline timer only fires while an
 * operation waits. */
static int op_enter(hm_loop *loop, int64_t deadline)
{
    hm_coro *co = loop->current;
    if (co && ++co->busy_ops >= HM_FAIR_OPS) {
        co->busy_ops = 0;
        hm_coro_yield();
    }
    if (hm__take_cancel(loop)) return -ECANCELED;
    if (HM_UNLIKELY(loop->aborted)) return -ECANCELED;
    if (deadline > 0 && hm_now_ns() >= deadline) return -ETIMEDOUT;
    return 0;
}

/* ---- the socket table ----------------------------------------------------- */

hm_sock *hm__sock_lookup(hm_loop *loop, int fd, uint32_t gen)
{
    if (fd < 0 || (size_t)fd >= loop->socks_cap) return NULL;
    hm_sock *s = loop->socks[fd];
    return s && s->gen == gen ? s : NULL;
}

/* Makes room in the table for fd. */
static int table_reserve(hm_loop *loop, int fd_)
{
    size_t fd = (size_t)fd_;
    if (fd >= loop->socks_cap) {
        size_t cap = loop->socks_cap ? loop->socks_cap : 256;
        while (cap <= fd)
            cap *= 2;
        hm_sock **t = hm_realloc(loop->socks, cap * sizeof(*t));
        if (!t) return -ENOMEM;
        memset(t + loop->socks_cap, 0, (cap - loop->socks_cap) * sizeof(*t));
        loop->socks = t;
        loop->socks_cap = cap;
    }
    return 0;
}

static int sock_wrap(hm_loop *loop, int fd, bool listening, hm_sock **out)
{
    hm_sock *s = hm_calloc(1, sizeof(*s));
    if (!s || table_reserve(loop, fd) < 0) {
        hm_free(s);
        close(fd);
        return -ENOMEM;
    }
    s->fd = fd;
    s->fdx = fd;
    /* 29 bits: io_uring's user_data packs it beside the fd */
    loop->sock_gen = (loop->sock_gen + 1) & 0x1fffffffu;
    if (!loop->sock_gen) loop->sock_gen = 1;
    s->gen = loop->sock_gen;
    s->loop = loop;
    s->listening = listening;
    loop->socks[fd] = s;
    int rc = loop->be->sock_added(s);
    if (rc < 0) {
        loop->socks[fd] = NULL;
        close(fd);
        hm_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

static int new_socket(hm_loop *loop, int family)
{
    /* epoll needs non-blocking fds; io_uring parks blocking ones itself
     * (and its readiness reads say MSG_DONTWAIT). */
    int flags = SOCK_STREAM | SOCK_CLOEXEC;
    if (loop->kind == HM_BACKEND_EPOLL) flags |= SOCK_NONBLOCK;
    int fd = socket(family, flags, 0);
    return fd < 0 ? -errno : fd;
}

static void set_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* ---- segments ---------------------------------------------------------------- */

hm__seg *hm__seg_new(hm_loop *loop)
{
    hm__seg *seg = loop->seg_free;
    if (seg) {
        loop->seg_free = seg->next;
    } else {
        seg = hm_alloc(sizeof(*seg));
        if (!seg) return NULL;
    }
    seg->next = NULL;
    return seg;
}

void hm__seg_free(hm_loop *loop, hm__seg *seg)
{
    if (seg->bid >= 0)
        hm__bufring_release(loop, seg->bid);
    else if (seg->bid == HM__SEG_HEAP)
        hm_free(seg->mem);
    seg->next = loop->seg_free;
    loop->seg_free = seg;
}

static void queue_push(hm_sock *s, hm__seg *seg)
{
    seg->next = NULL;
    if (s->rq_tail)
        s->rq_tail->next = seg;
    else
        s->rq_head = seg;
    s->rq_tail = seg;
}

static void queue_pop_free(hm_sock *s)
{
    hm__seg *seg = s->rq_head;
    s->rq_head = seg->next;
    if (!s->rq_head) s->rq_tail = NULL;
    if (seg->bid == HM__SEG_LOOPBUF) s->loop->rbuf_owner = NULL;
    hm__seg_free(s->loop, seg);
}

/* The loop's buffer is about to be read into: the socket whose queued
 * bytes still sit there gets a heap copy of them. */
static void rbuf_spill(hm_loop *loop)
{
    hm_sock *owner = loop->rbuf_owner;
    if (!owner) return;
    loop->rbuf_owner = NULL;
    hm__seg *seg = owner->rq_head; /* only the head can point into rbuf */
    if (!seg || seg->bid != HM__SEG_LOOPBUF) return;
    char *copy = hm_alloc(seg->len ? seg->len : 1);
    if (!copy) {
        /* The bytes cannot be kept: the stream is broken for this socket. */
        queue_pop_free(owner);
        if (!owner->rd_end) owner->rd_end = -ENOMEM;
        return;
    }
    memcpy(copy, seg->data, seg->len);
    seg->mem = seg->data = copy;
    seg->bid = HM__SEG_HEAP;
}

static char *loop_rbuf(hm_loop *loop)
{
    rbuf_spill(loop);
    if (!loop->rbuf) {
        loop->rbuf = hm_alloc(LOOP_RBUF);
        if (!loop->rbuf) return NULL;
        loop->rbuf_cap = LOOP_RBUF;
    }
    return loop->rbuf;
}

/* ---- delivery ------------------------------------------------------------------ */

static void wake_reader(hm_sock *s)
{
    hm__op *op = s->rd_waiter;
    if (!op) return;
    s->rd_waiter = NULL;
    hm__op_complete(s->loop, op, 0);
}

void hm__sock_deliver(hm_sock *s, hm__seg *seg, bool maybe_cut)
{
    if (s->on_data && !s->rq_head && !maybe_cut) {
        hm_loop *loop = s->loop;
        s->on_data(s->user, s, seg->data, (ssize_t)seg->len);
        hm__seg_free(loop, seg); /* s may be gone: the segment is the loop's */
        return;
    }
    queue_push(s, seg);
    if (s->on_data)
        hm__sock_soon(s);
    else
        wake_reader(s);
}

void hm__sock_deliver_end(hm_sock *s, int end)
{
    if (s->rd_end) return;
    s->rd_end = end;
    if (s->on_data && !s->rq_head) {
        s->on_data(s->user, s, NULL, end == HM__RD_EOF ? 0 : end);
        return;
    }
    if (s->on_data)
        hm__sock_soon(s);
    else
        wake_reader(s);
}

void hm__sock_send_failed(hm_sock *s, int err, bool nothing_sent)
{
    if (!s->send_err) {
        s->send_err = err;
        s->send_none = nothing_sent;
    }
    hm__count_error(s->loop, err);
    hm__sock_deliver_end(s, err);
}

/* One readiness read into the loop's buffer, queued for a coroutine (the
 * view hm_sock_peek returns). */
static void read_ready_queued(hm_sock *s)
{
    hm_loop *loop = s->loop;
    char *buf = loop_rbuf(loop);
    if (!buf) {
        s->rd_end = -ENOMEM;
        return;
    }
    for (;;) {
        ssize_t n = recv(s->fd, buf, loop->rbuf_cap, MSG_DONTWAIT);
        if (n > 0) {
            hm__seg *seg = hm__seg_new(loop);
            if (!seg) {
                s->rd_end = -ENOMEM;
                return;
            }
            seg->data = buf;
            seg->len = (uint32_t)n;
            seg->bid = HM__SEG_LOOPBUF;
            queue_push(s, seg);
            loop->rbuf_owner = s;
            s->rd_full = (size_t)n == loop->rbuf_cap;
            /* A short read emptied the socket: wait for the next report
             * (edge-triggered epoll reports every new arrival) instead of
             * a read that would only say EAGAIN. */
            if ((size_t)n < loop->rbuf_cap && !s->rd_hup) s->rd_ready = false;
            return;
        }
        if (n == 0) {
            s->rd_end = HM__RD_EOF;
            return;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            s->rd_ready = false;
            return;
        }
        s->rd_end = -errno;
        return;
    }
}

/* Readiness reads for a callback reader: read and deliver until the socket
 * is empty, READS_PER_TURN times at most. */
static void read_ready_callback(hm_sock *s)
{
    hm_loop *loop = s->loop;
    int fd = s->fd;
    uint32_t gen = s->gen;
    for (int i = 0; i < READS_PER_TURN && s->rd_ready && s->on_data && !s->rd_end; i++) {
        char *buf = loop_rbuf(loop);
        if (!buf) {
            hm__sock_deliver_end(s, -ENOMEM);
            return;
        }
        ssize_t n = recv(fd, buf, loop->rbuf_cap, MSG_DONTWAIT);
        if (n > 0) {
            s->rd_full = (size_t)n == loop->rbuf_cap;
            if (!s->rd_full && !s->rd_hup) s->rd_ready = false;
            s->on_data(s->user, s, buf, n);
            if (!hm__sock_lookup(loop, fd, gen)) return; /* closed by the reader */
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            s->rd_ready = false;
            break;
        }
        hm__sock_deliver_end(s, n == 0 ? HM__RD_EOF : -errno);
        return;
    }
    if (!s->on_data || s->rd_end) return;
    if (s->rd_ready)
        hm__sock_soon(s); /* more is waiting: after the others had their turn */
    else
        loop->be->want_read(s);
}

void hm__sock_readable(hm_sock *s, bool hup)
{
    s->rd_ready = true;
    if (hup) s->rd_hup = true;
    if (s->rd_waiter)
        wake_reader(s);
    else if (s->on_data)
        read_ready_callback(s);
}

/* Deferred work of a socket: a connect's result (epoll), bytes queued
 * before a callback reader was set, reads left over from a busy turn. */
static void sock_soon_run(hm_post *p)
{
    hm_sock *s = HM_CONTAINER_OF(p, hm_sock, soon);
    hm_loop *loop = s->loop;
    int fd = s->fd;
    uint32_t gen = s->gen;
    s->soon_queued = false;
    if (s->connecting && s->conn_res != 1) {
        hm__sock_connected(s, s->conn_res);
        return;
    }
    while (s->on_data && s->rq_head) {
        hm__seg *seg = s->rq_head;
        s->rq_head = seg->next;
        if (!s->rq_head) s->rq_tail = NULL;
        if (seg->bid == HM__SEG_LOOPBUF) loop->rbuf_owner = NULL;
        s->on_data(s->user, s, seg->data, (ssize_t)seg->len);
        hm__seg_free(loop, seg);
        if (!hm__sock_lookup(loop, fd, gen)) return;
    }
    if (s->on_data && s->rd_end) {
        s->on_data(s->user, s, NULL, s->rd_end == HM__RD_EOF ? 0 : s->rd_end);
        return;
    }
    if (s->on_data && s->rd_ready && hm__readiness_reads(loop)) read_ready_callback(s);
}

void hm__sock_soon(hm_sock *s)
{
    if (s->soon_queued) return;
    s->soon_queued = true;
    s->soon.fn = sock_soon_run;
    hm__loop_soon(s->loop, &s->soon);
}

static void soon_unlink(hm_sock *s)
{
    if (!s->soon_queued) return;
    hm_loop *loop = s->loop;
    hm_post *prev = NULL;
    for (hm_post *p = loop->soon_head; p; prev = p, p = p->next_) {
        if (p != &s->soon) continue;
        if (prev)
            prev->next_ = p->next_;
        else
            loop->soon_head = p->next_;
        if (loop->soon_tail == p) loop->soon_tail = prev;
        break;
    }
    s->soon_queued = false;
}

void hm__sock_connected(hm_sock *s, int res)
{
    hm_loop *loop = s->loop;
    s->connecting = false;
    if (res == 0)
        loop->stats.connects++;
    else
        loop->stats.connect_errors++;
    if (s->on_connect) s->on_connect(s->user, s, res);
}

/* A TCP socket to connect from, TCP_NODELAY set, wrapped for the loop. */
static int new_client_sock(hm_loop *loop, int family, hm_sock **out)
{
    int fd = new_socket(loop, family);
    if (fd < 0) {
        loop->stats.connect_errors++;
        return fd;
    }
    set_nodelay(fd);
    return sock_wrap(loop, fd, false, out);
}

/* ---- coroutine operations ------------------------------------------------------- */

int hm_sock_connect(hm_sock **out, const struct sockaddr *sa, socklen_t len, int64_t deadline)
{
    hm_loop *loop = hm_loop_current();
    if (!loop || !loop->current) return -EPERM;
    int fd = op_enter(loop, deadline);
    if (fd < 0) {
        hm__count_error(loop, fd);
        return fd;
    }
    hm_sock *s;
    int rc = new_client_sock(loop, sa->sa_family, &s);
    if (rc < 0) return rc;
    rc = loop->be->connect(s, sa, len, deadline);
    if (rc < 0) {
        if (rc == -ETIMEDOUT)
            loop->stats.timeouts++;
        else if (rc != -ECANCELED)
            loop->stats.connect_errors++;
        hm_sock_close(s);
        return rc;
    }
    loop->stats.connects++;
    *out = s;
    return 0;
}

int hm_sock_connect_start(hm_loop *loop, hm_sock **out, const struct sockaddr *sa, socklen_t len,
                          hm_sock_connect_fn cb, void *user)
{
    hm_sock *s;
    int rc = new_client_sock(loop, sa->sa_family, &s);
    if (rc < 0) return rc;
    s->on_connect = cb;
    s->user = user;
    s->connecting = true;
    s->conn_res = 1; /* no result yet */
    rc = loop->be->connect_start(s, sa, len);
    if (rc < 0) {
        s->on_connect = NULL;
        hm_sock_close(s);
        loop->stats.connect_errors++;
        return rc;
    }
    *out = s;
    return 0;
}

int hm_sock_listen(hm_sock **out, const struct sockaddr *sa, socklen_t len, int backlog)
{
    hm_loop *loop = hm_loop_current();
    if (!loop) return -EPERM;
    int fd = new_socket(loop, sa->sa_family);
    if (fd < 0) return fd;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, sa, len) < 0 || listen(fd, backlog) < 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    return sock_wrap(loop, fd, true, out);
}

int hm_sock_accept(hm_sock *listener, hm_sock **out, int64_t deadline)
{
    hm_loop *loop = listener->loop;
    int fd = op_enter(loop, deadline);
    if (fd == 0) fd = loop->be->accept(listener, deadline);
    if (fd < 0) {
        hm__count_error(loop, fd);
        return fd;
    }
    set_nodelay(fd);
    loop->stats.accepts++;
    return sock_wrap(loop, fd, false, out);
}

static void rd_cancel(hm_loop *loop, hm__op *op)
{
    if (op->sock->rd_waiter == op) op->sock->rd_waiter = NULL;
    hm__op_complete(loop, op, op->cancel_reason);
}

/* Suspends until s has bytes, an end or (readiness reads) readiness. */
static int wait_readable(hm_sock *s, int64_t deadline)
{
    s->loop->be->want_read(s);
    if (s->rq_head || s->rd_end) return 0;
    hm__op op = {.cancel = rd_cancel, .sock = s};
    s->rd_waiter = &op;
    return (int)hm__op_wait(s->loop, &op, deadline);
}

static ssize_t end_result(const hm_sock *s)
{
    return s->rd_end == HM__RD_EOF ? 0 : s->rd_end;
}

ssize_t hm_sock_peek(hm_sock *s, const char **data, int64_t deadline)
{
    hm_loop *loop = s->loop;
    ssize_t rc = op_enter(loop, deadline);
    if (rc < 0) {
        hm__count_error(loop, rc);
        return rc;
    }
    for (;;) {
        if (s->rq_head) {
            *data = s->rq_head->data;
            return s->rq_head->len;
        }
        if (s->rd_end) return end_result(s);
        if (hm__readiness_reads(loop) && s->rd_ready) {
            read_ready_queued(s);
            continue;
        }
        int w = wait_readable(s, deadline);
        if (w < 0) {
            hm__count_error(loop, w);
            return w;
        }
    }
}

void hm_sock_skip(hm_sock *s, size_t n)
{
    hm__seg *seg = s->rq_head;
    if (!seg) return;
    if (n > seg->len) n = seg->len;
    seg->data += n;
    seg->len -= (uint32_t)n;
    if (seg->len == 0) queue_pop_free(s);
}

ssize_t hm_sock_read(hm_sock *s, void *buf, size_t len, int64_t deadline)
{
    hm_loop *loop = s->loop;
    ssize_t rc = op_enter(loop, deadline);
    if (rc < 0) {
        hm__count_error(loop, rc);
        return rc;
    }
    for (;;) {
        if (s->rq_head) {
            size_t n = s->rq_head->len < len ? s->rq_head->len : len;
            memcpy(buf, s->rq_head->data, n);
            hm_sock_skip(s, n);
            return (ssize_t)n;
        }
        if (s->rd_end) return end_result(s);
        if (!hm__readiness_reads(loop) && !s->rd_armed) {
            /* io_uring with nothing armed: the kernel reads straight into
             * the caller's buffer. */
            ssize_t n = loop->be->recv(s, buf, len, deadline);
            if (n < 0) hm__count_error(loop, n);
            return n;
        }
        if (hm__readiness_reads(loop) && s->rd_ready) {
            ssize_t n = recv(s->fd, buf, len, MSG_DONTWAIT);
            if (n > 0) {
                if ((size_t)n < len && !s->rd_hup) s->rd_ready = false; /* see read_ready_queued */
                return n;
            }
            if (n == 0) {
                s->rd_end = HM__RD_EOF;
                return 0;
            }
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                n = -errno;
                hm__count_error(loop, n);
                return n;
            }
            s->rd_ready = false;
            continue;
        }
        int w = wait_readable(s, deadline);
        if (w < 0) {
            hm__count_error(loop, w);
            return w;
        }
    }
}

size_t hm_sock_queued(hm_sock *s, char *first, size_t cap, size_t *first_len)
{
    size_t n = 0, k = 0;
    if (!first) cap = 0;
    for (const hm__seg *seg = s->rq_head; seg; seg = seg->next) {
        size_t take = seg->len < cap - k ? seg->len : cap - k;
        if (take) memcpy(first + k, seg->data, take);
        k += take;
        n += seg->len;
    }
    if (!n && s->rd_full) {
        int avail = 0;
        if (ioctl(s->fd, FIONREAD, &avail) == 0 && avail > 0) {
            n = (size_t)avail;
            ssize_t p = cap ? recv(s->fd, first, cap, MSG_PEEK | MSG_DONTWAIT) : 0;
            k = p > 0 ? (size_t)p : 0;
        }
    }
    if (first_len) *first_len = k;
    return n;
}

int hm_sock_peer_spoke(hm_sock *s)
{
    if (s->rq_head) return 1;
    if (s->rd_end) return s->rd_end == HM__RD_EOF ? -HM_ECLOSED : s->rd_end;
    /* A callback reader hears of bytes and ends as they come (an armed
     * receive or poll, or epoll's reports, as of the last turn): no need to
     * ask the kernel. */
    if (s->on_data && (s->rd_armed || s->loop->kind == HM_BACKEND_EPOLL)) return 0;
    char b;
    ssize_t n = recv(s->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0) return 1;
    if (n == 0) return -HM_ECLOSED;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
    return -errno;
}

ssize_t hm_sock_writev(hm_sock *s, const struct iovec *iov_in, int iovcnt, int64_t deadline,
                       size_t *sent)
{
    struct iovec local[16];
    if (iovcnt < 1 || iovcnt > (int)HM_ARRAY_LEN(local)) return -EINVAL;
    memcpy(local, iov_in, (size_t)iovcnt * sizeof(*local));
    struct iovec *iov = local;
    size_t total = 0, done = 0;
    for (int i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    while (done < total) {
        ssize_t n = op_enter(s->loop, deadline);
        if (n == 0) n = s->loop->be->sendv(s, iov, iovcnt, deadline);
        if (n < 0) {
            hm__count_error(s->loop, n);
            if (sent) *sent = done;
            return n;
        }
        done += (size_t)n;
        /* Skip what the kernel took; a partial write resumes mid-vector. */
        while (iovcnt && (size_t)n >= iov->iov_len) {
            n -= (ssize_t)iov->iov_len;
            iov++;
            iovcnt--;
        }
        if (iovcnt) {
            iov->iov_base = (char *)iov->iov_base + n;
            iov->iov_len -= (size_t)n;
        }
    }
    if (sent) *sent = done;
    return (ssize_t)done;
}

ssize_t hm_sock_write(hm_sock *s, const void *buf, size_t len, int64_t deadline, size_t *sent)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    if (len == 0) {
        if (sent) *sent = 0;
        return 0;
    }
    return hm_sock_writev(s, &iov, 1, deadline, sent);
}

int hm_sock_send_detached(hm_sock *s, const void *buf, size_t len)
{
    if (s->send_err) return s->send_err;
    if (len == 0) return 0;
    if (len > UINT32_MAX) return -EMSGSIZE;
    return s->loop->be->send_detached(s, buf, len);
}

int hm_sock_send_copy(hm_sock *s, const void *buf, size_t len)
{
    if (s->send_err) return s->send_err;
    if (len == 0) return 0;
    size_t done = 0;
    if (s->ds_copy) {
        /* The caller sends after the peer answered, so the last copy has
         * left (epoll says so; io_uring skips the success). */
        if (s->ds_len) return -EBUSY; /* one at a time */
        hm_free(s->ds_copy);
        s->ds_copy = NULL;
    }
    for (;;) { /* nothing of ours in flight: the kernel may take it all now */
        ssize_t n = send(s->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n >= 0) {
            done = (size_t)n;
            break;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -errno;
        break;
    }
    if (done == len) return 0;
    s->ds_copy = hm_alloc(len - done);
    if (!s->ds_copy) return -ENOMEM;
    memcpy(s->ds_copy, (const char *)buf + done, len - done);
    return hm_sock_send_detached(s, s->ds_copy, len - done);
}

int hm_sock_send_error(const hm_sock *s, bool *nothing_sent)
{
    if (nothing_sent) *nothing_sent = s->send_none;
    return s->send_err;
}

/* ---- callback readers ------------------------------------------------------------ */

int hm_sock_set_reader(hm_sock *s, hm_sock_data_fn fn, void *user)
{
    s->on_data = fn;
    s->user = user;
    if (!fn) return 0;
    if (s->rq_head || s->rd_end || (s->rd_ready && hm__readiness_reads(s->loop)))
        hm__sock_soon(s);
    else
        s->loop->be->want_read(s);
    return 0;
}

/* ---- closing ---------------------------------------------------------------------- */

void hm_sock_close(hm_sock *s)
{
    if (!s) return;
    hm_loop *loop = s->loop;
    if (loop->be->sock_closing) loop->be->sock_closing(s);
    soon_unlink(s);
    while (s->rq_head)
        queue_pop_free(s);
    if (loop->rbuf_owner == s) loop->rbuf_owner = NULL;
    /* A detached send of the copy may still be in the kernel (io_uring):
     * the copy goes when the loop does, not before. */
    if (s->ds_copy) hm__loop_defer_free(loop, s->ds_copy);
    if ((size_t)s->fd < loop->socks_cap && loop->socks[s->fd] == s) loop->socks[s->fd] = NULL;
    close(s->fd);
    hm_free(s);
}

void hm_sock_abort(hm_sock *s)
{
    if (!s) return;
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(s->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    hm_sock_close(s);
}

int hm_sock_fd(const hm_sock *s)
{
    return s->fd;
}

int hm_sock_local_port(const hm_sock *s)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    if (getsockname(s->fd, (struct sockaddr *)&ss, &len) < 0) return -errno;
    if (ss.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return -EAFNOSUPPORT;
}
