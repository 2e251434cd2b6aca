/* Coroutine-blocking sockets: the parts both backends share (creating,
 * closing, write-everything loops, accounting). */
#include "engine/internal.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <unistd.h>

/* Before every socket operation: an aborted loop or a deadline already
 * passed fails it at once, and a coroutine whose operations keep
 * completing without waiting yields now and then (HM_FAIR_OPS). Without
 * this a server that always has data ready holds an operation forever:
 * the deadline timer only fires while an operation waits. */
static int op_enter(hm_loop *loop, int64_t deadline)
{
    hm_coro *co = loop->current;
    if (co && ++co->busy_ops >= HM_FAIR_OPS) {
        co->busy_ops = 0;
        hm_coro_yield();
    }
    if (HM_UNLIKELY(loop->aborted)) return -ECANCELED;
    if (deadline > 0 && hm_now_ns() >= deadline) return -ETIMEDOUT;
    return 0;
}

static int sock_wrap(hm_loop *loop, int fd, bool listening, hm_sock **out)
{
    hm_sock *s = hm_calloc(1, sizeof(*s));
    if (!s) {
        close(fd);
        return -ENOMEM;
    }
    s->fd = fd;
    s->loop = loop;
    s->listening = listening;
    int rc = loop->be->sock_added(s);
    if (rc < 0) {
        close(fd);
        hm_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

static int new_socket(hm_loop *loop, int family)
{
    /* epoll needs non-blocking fds; io_uring parks blocking ones itself. */
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

int hm_sock_connect(hm_sock **out, const struct sockaddr *sa, socklen_t len, int64_t deadline)
{
    hm_loop *loop = hm_loop_current();
    if (!loop || !loop->current) return -EPERM;
    int fd = op_enter(loop, deadline);
    if (fd < 0) {
        hm__count_error(loop, fd);
        return fd;
    }
    fd = new_socket(loop, sa->sa_family);
    if (fd < 0) {
        loop->stats.connect_errors++;
        return fd;
    }
    set_nodelay(fd);
    hm_sock *s;
    int rc = sock_wrap(loop, fd, false, &s);
    if (rc < 0) return rc;
    rc = loop->be->connect(s, sa, len, deadline);
    if (rc < 0) {
        if (rc == -ETIMEDOUT)
            loop->stats.timeouts++;
        else
            loop->stats.connect_errors++;
        hm_sock_close(s);
        return rc;
    }
    loop->stats.connects++;
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

ssize_t hm_sock_read(hm_sock *s, void *buf, size_t len, int64_t deadline)
{
    ssize_t n = op_enter(s->loop, deadline);
    if (n == 0) n = s->loop->be->recv(s, buf, len, deadline);
    if (n < 0) hm__count_error(s->loop, n);
    return n;
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

void hm_sock_close(hm_sock *s)
{
    if (!s) return;
    if (s->loop->be->sock_closing) s->loop->be->sock_closing(s);
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
