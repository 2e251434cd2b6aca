/* The io_uring backend, as kernel 6.x means it to be used, with a fallback
 * for each feature (probed at set-up, or switched off by
 * HAMMER_ENGINE_DISABLE for tests):
 *
 * - The ring: SINGLE_ISSUER | DEFER_TASKRUN (the kernel runs completion
 *   work only inside our io_uring_enter), else COOP_TASKRUN | TASKRUN_FLAG
 *   (no interrupts; the flag says when to enter), else plain; a completion
 *   queue sized for the connections (CQSIZE); the ring fd registered.
 * - Files: a sparse registered table where slot = fd, filled by a
 *   FILES_UPDATE SQE queued with the socket's first operation (no system
 *   call of its own), so SQEs skip the fd lookup and reference counting.
 * - Reads: a ring of provided buffers per thread (incremental consumption
 *   where the kernel has it, so many small responses share one buffer) and
 *   one multishot receive per socket, armed once: the kernel picks a buffer
 *   when bytes arrive, so an idle connection owns none, and the bytes go to
 *   the socket's callback reader or waiting coroutine straight from the
 *   completion. Without provided buffers or multishot receive, a readiness
 *   poll SQE and a recv() into the loop's buffer, as epoll does. A
 *   coroutine calling hm_sock_read with nothing armed still has the kernel
 *   read straight into its buffer (bench_app, TLS).
 * - Detached sends: IOSQE_CQE_SKIP_SUCCESS and MSG_WAITALL, so a successful
 *   send costs no completion at all; a failure arrives as one.
 * - Accepts: a listener keeps one multishot accept armed (hm__accept_ms),
 *   so every connection waiting in the backlog is accepted in the same loop
 *   turn, as the epoll backend's accept4() loop does, instead of one per
 *   turn; fds nobody waits for yet queue in the record. A kernel without
 *   multishot accept (before 5.19) answers -EINVAL and the listener falls
 *   back to one accept SQE per call.
 *
 * A coroutine's operation is one SQE whose user_data is the hm__op on the
 * suspended coroutine's stack; that memory stays valid because the
 * coroutine cannot resume before the operation's CQE arrives — even a
 * cancelled operation still delivers its CQE, so a deadline cancels with an
 * ASYNC_CANCEL and then waits for it. Work without a coroutine (multishot
 * receives, detached sends, started connects) names its socket by fd and
 * generation in the user_data, so a completion for a socket closed since
 * finds nothing instead of freed memory. SQEs accumulate while coroutines
 * run and go to the kernel in one io_uring_enter() per loop turn, together
 * with the wait for completions. */
#include "engine/internal.h"

#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef HM_TSAN
#include <sanitizer/tsan_interface.h>
#endif

/* Kernel interfaces newer than Debian 12's headers. */
#ifndef IOU_PBUF_RING_INC
#define IOU_PBUF_RING_INC 2 /* 6.12: buffers consumed a slice at a time */
#endif
#ifndef IORING_CQE_F_BUF_MORE
#define IORING_CQE_F_BUF_MORE (1U << 4) /* the buffer gets more completions */
#endif

/* user_data: a coroutine's hm__op (8-aligned, tag 0; 0 itself is "ignore"),
 * or a tag in the low 3 bits. */
enum {
    UD_IGNORE = 0,
    UD_ACCEPT = 1,  /* | hm__accept_ms pointer */
    UD_RECV = 2,    /* | socket: multishot receive */
    UD_POLL = 3,    /* | socket: readiness poll */
    UD_SEND = 4,    /* | socket: detached send (a failure) */
    UD_CONNECT = 5, /* | socket: hm_sock_connect_start */
    UD_FILES = 6,   /* | socket: its FILES_UPDATE (a failure) */
    UD_WAKE = 7,    /* the loop's eventfd */
};
#define UD_TAG(ud) ((unsigned)((ud)&7))

/* A socket named by fd (32 bits) and generation (29 bits). */
static uint64_t sock_ud(const hm_sock *s, unsigned tag)
{
    return (uint64_t)s->gen << 35 | (uint64_t)(uint32_t)s->fd << 3 | tag;
}

static hm_sock *ud_sock(hm_loop *loop, uint64_t ud)
{
    return hm__sock_lookup(loop, (int)(uint32_t)(ud >> 3), (uint32_t)(ud >> 35));
}

/* Provided buffers: with incremental consumption a few big ones that many
 * receives share; without, more small ones (each receive takes one). */
#define BUFS_INC_N 32
#define BUFS_INC_SIZE (32 * 1024)
#define BUFS_N 1024
#define BUFS_SIZE 2048
#define BGID 0

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

static void accept_cqe(hm_loop *loop, hm__accept_ms *ms, int res, unsigned flags);
static void accept_closing(hm_sock *s);
static void arm_wake(hm_loop *loop);

static hm__accept_ms *accept_of(uint64_t user_data)
{
    return (hm__accept_ms *)(uintptr_t)(user_data & ~(uint64_t)7);
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

static void sqe_fixed(struct io_uring_sqe *sqe, const hm_sock *s)
{
    if (s->fixed) sqe->flags |= IOSQE_FIXED_FILE;
}

/* ---- set-up ------------------------------------------------------------------ */

static unsigned pow2_at_least(unsigned v)
{
    unsigned p = 1;
    while (p < v && p < (1u << 30))
        p <<= 1;
    return p;
}

#ifdef HM_TSAN
static char ring_handover; /* TSan's sync object for ring memory */
#endif

/* liburing maps and unmaps the rings with raw system calls, which TSan
 * does not see: a ring mapped where another thread's destroyed ring was
 * inherits that thread's accesses, a race that never was (the kernel
 * orders the munmap before the mmap). Tell TSan so: a release before every
 * unmap, an acquire after every map. */
static void ring_memory_returned(void)
{
#ifdef HM_TSAN
    __tsan_release(&ring_handover);
#endif
}
static void ring_memory_taken(void)
{
#ifdef HM_TSAN
    __tsan_acquire(&ring_handover);
#endif
}

/* Tries the ring flags from the best down; records what took. */
static int ring_setup(hm_loop *loop, unsigned entries, unsigned conns)
{
    /* Each connection may have a receive and a send's failure in flight:
     * room for two completions each keeps the kernel off its overflow list. */
    unsigned cq = pow2_at_least(2 * (conns > entries ? conns : entries));
    if (cq > 65536) cq = 65536;
    static const unsigned modes[] = {
        IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
        IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
        0,
    };
    static const unsigned mode_feat[] = {HM__F_DEFER_TASKRUN, HM__F_COOP_TASKRUN, 0};
    int rc = -EINVAL;
    for (size_t m = 0; m < HM_ARRAY_LEN(modes); m++) {
        if (mode_feat[m] && !(loop->feat & mode_feat[m])) continue;
        for (int sized = 1; sized >= 0; sized--) {
            if (sized && !(loop->feat & HM__F_CQSIZE)) continue;
            struct io_uring_params p;
            memset(&p, 0, sizeof(p));
            p.flags = modes[m] | (m < 2 ? IORING_SETUP_SUBMIT_ALL : 0);
            if (sized) {
                p.flags |= IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP;
                p.cq_entries = cq;
            }
            rc = io_uring_queue_init_params(entries, &loop->ring, &p);
            if (rc == -EINVAL) continue;
            if (rc < 0) return rc;
            ring_memory_taken();
            loop->feat &= ~(HM__F_DEFER_TASKRUN | HM__F_COOP_TASKRUN);
            loop->feat |= mode_feat[m];
            if (!sized) loop->feat &= ~HM__F_CQSIZE;
            if (!(p.features & IORING_FEAT_CQE_SKIP)) loop->feat &= ~HM__F_CQE_SKIP;
            return 0;
        }
    }
    return rc;
}

static void files_setup(hm_loop *loop)
{
    if (!(loop->feat & HM__F_FILES)) return;
    struct rlimit rl;
    unsigned nr = 4096;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        nr = rl.rlim_cur > (1u << 20) ? (1u << 20) : (unsigned)rl.rlim_cur;
    /* calloc'd zero pages: only the slots of fds in use get touched */
    loop->fd_ident = hm_calloc(nr, sizeof(int));
    if (!loop->fd_ident || io_uring_register_files_sparse(&loop->ring, nr) < 0) {
        hm_free(loop->fd_ident);
        loop->fd_ident = NULL;
        loop->feat &= ~HM__F_FILES;
        return;
    }
    loop->files_nr = nr;
}

static void bufring_free(hm__bufring *b)
{
    if (b->br) munmap(b->br, b->br_size);
    if (b->base) munmap(b->base, (size_t)b->nbufs * b->size);
    hm_free(b->off);
    hm_free(b->refs);
    hm_free(b->kernel_done);
    memset(b, 0, sizeof(*b));
}

static void bufring_add(hm__bufring *b, uint32_t bid)
{
    io_uring_buf_ring_add(b->br, b->base + (size_t)bid * b->size, b->size, (unsigned short)bid,
                          io_uring_buf_ring_mask(b->nbufs), 0);
    io_uring_buf_ring_advance(b->br, 1);
    b->in_ring++;
}

static void bufring_setup(hm_loop *loop)
{
    hm__bufring *b = &loop->bufs;
    if (!(loop->feat & HM__F_BUFRING)) return;
    for (int inc = (loop->feat & HM__F_BUFRING_INC) ? 1 : 0; inc >= 0; inc--) {
        memset(b, 0, sizeof(*b));
        b->nbufs = inc ? BUFS_INC_N : BUFS_N;
        b->size = inc ? BUFS_INC_SIZE : BUFS_SIZE;
        b->inc = inc;
        b->bgid = BGID;
        b->br_size = (b->nbufs * sizeof(struct io_uring_buf) + 4095) & ~(size_t)4095;
        b->br = mmap(NULL, b->br_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (b->br == MAP_FAILED) {
            b->br = NULL;
            break;
        }
        struct io_uring_buf_reg reg;
        memset(&reg, 0, sizeof(reg));
        reg.ring_addr = (uint64_t)(uintptr_t)b->br;
        reg.ring_entries = b->nbufs;
        reg.bgid = b->bgid;
        reg.pad = inc ? IOU_PBUF_RING_INC : 0; /* the kernel's `flags` field */
        if (io_uring_register_buf_ring(&loop->ring, &reg, 0) < 0) {
            munmap(b->br, b->br_size);
            b->br = NULL;
            continue;
        }
        b->base = mmap(NULL, (size_t)b->nbufs * b->size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        b->off = hm_calloc(b->nbufs, sizeof(*b->off));
        b->refs = hm_calloc(b->nbufs, sizeof(*b->refs));
        b->kernel_done = hm_calloc(b->nbufs, sizeof(*b->kernel_done));
        if (b->base == MAP_FAILED || !b->off || !b->refs || !b->kernel_done) {
            if (b->base == MAP_FAILED) b->base = NULL;
            io_uring_unregister_buf_ring(&loop->ring, b->bgid);
            break;
        }
        io_uring_buf_ring_init(b->br);
        for (uint32_t i = 0; i < b->nbufs; i++)
            bufring_add(b, i);
        if (!inc) loop->feat &= ~HM__F_BUFRING_INC;
        return;
    }
    bufring_free(b);
    loop->feat &= ~(HM__F_BUFRING | HM__F_BUFRING_INC);
}

void hm__bufring_release(hm_loop *loop, int bid)
{
    hm__bufring *b = &loop->bufs;
    if (--b->refs[bid] == 0 && b->kernel_done[bid]) {
        b->kernel_done[bid] = false;
        b->off[bid] = 0;
        bufring_add(b, (uint32_t)bid);
    }
}

static int ur_init(hm_loop *loop, const hm_loop_options *o)
{
    unsigned entries = o->ring_entries ? o->ring_entries : 4096;
    int rc = ring_setup(loop, entries, o->conns ? o->conns : 1024);
    if (rc < 0) return rc;
    if (!(loop->feat & HM__F_RING_FD) || io_uring_register_ring_fd(&loop->ring) < 0)
        loop->feat &= ~HM__F_RING_FD;
    files_setup(loop);
    bufring_setup(loop);
    arm_wake(loop);
    /* The interrupt eventfds only wake the wait (their CQEs are ignored);
     * each is written once, so a one-shot poll each is enough. */
    for (int i = 0; i < 2; i++) {
        if (hm__intr_fd[i] < 0) continue;
        struct io_uring_sqe *sqe = get_sqe(loop);
        if (!sqe) return -EBUSY;
        io_uring_prep_poll_add(sqe, hm__intr_fd[i], POLLIN);
        io_uring_sqe_set_data64(sqe, UD_IGNORE);
    }
    return 0;
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
        if (UD_TAG(cqe->user_data) == UD_ACCEPT)
            accept_cqe(loop, accept_of(cqe->user_data), cqe->res, cqe->flags);
    }
    io_uring_cq_advance(&loop->ring, seen);
    ring_memory_returned();
    io_uring_queue_exit(&loop->ring);
    bufring_free(&loop->bufs);
    hm_free(loop->fd_ident);
    while (loop->accept_orphans) {
        hm__accept_ms *ms = loop->accept_orphans;
        loop->accept_orphans = ms->next;
        hm_free(ms->fds);
        hm_free(ms);
    }
}

/* ---- completions ---------------------------------------------------------------- */

/* The loop's eventfd: a multishot poll (a completion per post from another
 * thread into an empty inbox), re-armed if the kernel ends it. */
static void arm_wake(hm_loop *loop)
{
    struct io_uring_sqe *sqe = get_sqe(loop);
    if (!sqe) return;
    io_uring_prep_poll_multishot(sqe, loop->wake_fd, POLLIN);
    io_uring_sqe_set_data64(sqe, UD_WAKE);
}

static void wake_cqe(hm_loop *loop, int res, unsigned flags)
{
    uint64_t v;
    if (read(loop->wake_fd, &v, sizeof(v)) < 0) {
        /* EAGAIN: read already */
    }
    if (!(flags & IORING_CQE_F_MORE)) arm_wake(loop);
    hm__loop_drain_inbox(loop);
}

static void ur_want_read(hm_sock *s);

static void recv_cqe(hm_loop *loop, uint64_t ud, int res, unsigned flags)
{
    hm__bufring *b = &loop->bufs;
    hm_sock *s = ud_sock(loop, ud);
    hm__seg *seg = NULL;
    bool cut = false; /* the receive ended at its buffer's end */
    if (res > 0 && (flags & IORING_CQE_F_BUFFER)) {
        uint32_t bid = flags >> IORING_CQE_BUFFER_SHIFT;
        char *data = b->base + (size_t)bid * b->size;
        if (b->inc) {
            /* Incremental: this receive's bytes start where the previous
             * one's ended; the kernel moves to the next buffer on its own. */
            data += b->off[bid];
            b->off[bid] += (uint32_t)res;
            cut = b->off[bid] >= b->size;
            if (!(flags & IORING_CQE_F_BUF_MORE)) b->kernel_done[bid] = true;
        } else {
            b->kernel_done[bid] = true;
            cut = (uint32_t)res >= b->size;
        }
        if (b->kernel_done[bid]) b->in_ring--;
        b->refs[bid]++;
        seg = hm__seg_new(loop);
        if (seg) {
            seg->data = data;
            seg->len = (uint32_t)res;
            seg->bid = (int32_t)bid;
        } else {
            hm__bufring_release(loop, (int)bid);
            res = -ENOMEM;
        }
    }
    if (!s) { /* closed since: the bytes have nowhere to go */
        if (seg) hm__seg_free(loop, seg);
        return;
    }
    bool more = flags & IORING_CQE_F_MORE;
    if (!more) s->rd_armed = false;
    if (seg) {
        int fd = s->fd;
        uint32_t gen = s->gen;
        /* One arrival that ran past a buffer's end, or that was still
         * coming in while the kernel read it (it says the socket is not
         * empty: a server's one write can reach us as two segments), comes
         * in two completions of this turn: a reader must see both before
         * it takes the first for a whole answer. */
        bool rest_follows = cut || (flags & IORING_CQE_F_SOCK_NONEMPTY);
        hm__sock_deliver(s, seg, rest_follows && more);
        if (!(s = hm__sock_lookup(loop, fd, gen))) return; /* the reader closed it */
        if (!more && (s->on_data || s->rd_waiter)) ur_want_read(s);
        return;
    }
    if (res == 0) {
        hm__sock_deliver_end(s, HM__RD_EOF);
    } else if (res == -ENOBUFS) {
        /* Every buffer is in use: after this turn's readers let go of
         * theirs, the starved receives are armed again (ur_poll). */
        loop->starved = true;
    } else if (res == -EINVAL && !loop->ms_seen) {
        /* No multishot receive in this kernel (before 6.0): read after
         * readiness polls from now on. */
        loop->feat &= ~HM__F_RECV_MULTISHOT;
        if (s->on_data || s->rd_waiter) ur_want_read(s);
    } else if (res != -ECANCELED) {
        hm__sock_deliver_end(s, res);
    }
}

static void poll_cqe(hm_loop *loop, uint64_t ud, int res)
{
    hm_sock *s = ud_sock(loop, ud);
    if (!s) return;
    s->rd_armed = false;
    if (res == -ECANCELED) return;
    /* an error also makes the next recv() say it */
    hm__sock_readable(s, res < 0 || (res & (POLLERR | POLLHUP | POLLRDHUP)));
}

static void send_cqe(hm_loop *loop, uint64_t ud, int res)
{
    hm_sock *s = ud_sock(loop, ud);
    if (!s || res >= (int)s->ds_total) return; /* without CQE skip: a success */
    hm__sock_send_failed(s, res < 0 ? res : -EPIPE, res < 0);
}

static void files_cqe(hm_loop *loop, uint64_t ud, int res)
{
    if (res >= 0) return;
    /* The slot could not be filled: later sockets use plain fds, and this
     * one's queued operations fail (EBADF) and are reported so. */
    loop->feat &= ~HM__F_FILES;
    hm_sock *s = ud_sock(loop, ud);
    if (s) {
        s->fixed = false;
        s->fdx = s->fd;
    }
}

/* After a receive found no buffer: queued bytes of sockets nobody reads
 * right now move to the heap, and the receives still wanted are armed
 * again. Rare: only when every provided buffer is in use. */
static void unstarve(hm_loop *loop)
{
    loop->starved = false;
    for (size_t fd = 0; fd < loop->socks_cap; fd++) {
        hm_sock *s = loop->socks[fd];
        if (!s) continue;
        if (!s->rd_waiter) {
            for (hm__seg *seg = s->rq_head; seg; seg = seg->next) {
                if (seg->bid < 0) continue;
                char *copy = hm_alloc(seg->len ? seg->len : 1);
                if (!copy) break;
                memcpy(copy, seg->data, seg->len);
                hm__bufring_release(loop, seg->bid);
                seg->mem = seg->data = copy;
                seg->bid = HM__SEG_HEAP;
            }
        }
        if (!s->rd_armed && !s->rd_end && (s->rd_waiter || s->on_data)) ur_want_read(s);
    }
}

static int ur_poll(hm_loop *loop, int64_t timeout_ns)
{
    struct io_uring *ring = &loop->ring;
    int rc;
    if (loop->starved) unstarve(loop);
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

    /* Callbacks run from here may queue SQEs (and, when the SQ is full,
     * submit them): for_each reads the tail at every step, so completions
     * that post meanwhile are handled in this pass too. */
    unsigned head, seen = 0;
    struct io_uring_cqe *cqe;
    io_uring_for_each_cqe(ring, head, cqe)
    {
        seen++;
        uint64_t ud = cqe->user_data;
        int res = cqe->res;
        unsigned flags = cqe->flags;
        switch (UD_TAG(ud)) {
        case 0:
            if (ud) hm__op_complete(loop, (hm__op *)(uintptr_t)ud, res);
            break;
        case UD_ACCEPT:
            accept_cqe(loop, accept_of(ud), res, flags);
            break;
        case UD_RECV:
            if (res > 0) loop->ms_seen = true;
            recv_cqe(loop, ud, res, flags);
            break;
        case UD_POLL:
            poll_cqe(loop, ud, res);
            break;
        case UD_SEND:
            send_cqe(loop, ud, res);
            break;
        case UD_CONNECT: {
            hm_sock *s = ud_sock(loop, ud);
            if (s) hm__sock_connected(s, res);
            break;
        }
        case UD_FILES:
            files_cqe(loop, ud, res);
            break;
        case UD_WAKE:
            wake_cqe(loop, res, flags);
            break;
        }
    }
    io_uring_cq_advance(ring, seen);
    return (int)seen;
}

static bool ur_has_pending(hm_loop *loop)
{
    if (io_uring_sq_ready(&loop->ring) > 0) return true;
    /* COOP_TASKRUN | TASKRUN_FLAG: the kernel has completion work that
     * only an io_uring_enter runs. */
    return (loop->feat & HM__F_COOP_TASKRUN) &&
           (IO_URING_READ_ONCE(*loop->ring.sq.kflags) & IORING_SQ_TASKRUN);
}

/* ---- sockets -------------------------------------------------------------------------- */

static int ur_sock_added(hm_sock *s)
{
    hm_loop *loop = s->loop;
    if (!(loop->feat & HM__F_FILES) || (unsigned)s->fd >= loop->files_nr) return 0;
    struct io_uring_sqe *sqe = get_sqe(loop);
    if (!sqe) return 0;
    /* Read when the SQE is submitted: the slot's int must hold the fd then. */
    loop->fd_ident[s->fd] = s->fd;
    io_uring_prep_files_update(sqe, &loop->fd_ident[s->fd], 1, s->fd);
    if (loop->feat & HM__F_CQE_SKIP) sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
    io_uring_sqe_set_data64(sqe, sock_ud(s, UD_FILES));
    s->fixed = true;
    s->fdx = s->fd;
    return 0;
}

static void ur_sock_closing(hm_sock *s)
{
    hm_loop *loop = s->loop;
    if (s->ams) accept_closing(s);
    if (s->rd_armed) {
        /* The armed receive (or poll) holds the file: cancel it, so the
         * socket really closes; its last completions find no socket. */
        struct io_uring_sqe *sqe = get_sqe(loop);
        if (sqe) {
            io_uring_prep_cancel64(sqe, sock_ud(s, hm__readiness_reads(loop) ? UD_POLL : UD_RECV),
                                   0);
            io_uring_sqe_set_data64(sqe, UD_IGNORE);
        }
    }
    if (s->fixed) {
        static int minus_one = -1;
        struct io_uring_sqe *sqe = get_sqe(loop);
        if (sqe) {
            io_uring_prep_files_update(sqe, &minus_one, 1, s->fd);
            if (loop->feat & HM__F_CQE_SKIP) sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
            io_uring_sqe_set_data64(sqe, UD_IGNORE);
        }
    }
}

static void ur_cancel(hm_loop *loop, hm__op *op)
{
    struct io_uring_sqe *sqe = get_sqe(loop);
    if (!sqe) return; /* cannot happen after a submit; the op ends on its own */
    io_uring_prep_cancel(sqe, op, 0);
    io_uring_sqe_set_data64(sqe, UD_IGNORE);
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
    io_uring_prep_connect(sqe, s->fdx, sa, len);
    sqe_fixed(sqe, s);
    return (int)submit_wait(s->loop, sqe, &op, deadline);
}

static int ur_connect_start(hm_sock *s, const struct sockaddr *sa, socklen_t len)
{
    struct io_uring_sqe *sqe = get_sqe(s->loop);
    if (!sqe) return -EBUSY;
    io_uring_prep_connect(sqe, s->fdx, sa, len);
    sqe_fixed(sqe, s);
    io_uring_sqe_set_data64(sqe, sock_ud(s, UD_CONNECT));
    return 0;
}

static void ur_want_read(hm_sock *s)
{
    if (s->rd_armed || s->rd_end || s->listening) return;
    hm_loop *loop = s->loop;
    struct io_uring_sqe *sqe = get_sqe(loop);
    if (!sqe) return;
    if (hm__readiness_reads(loop)) {
        io_uring_prep_poll_add(sqe, s->fdx, POLLIN | POLLRDHUP);
        io_uring_sqe_set_data64(sqe, sock_ud(s, UD_POLL));
    } else {
        io_uring_prep_recv_multishot(sqe, s->fdx, NULL, 0, 0);
        sqe->flags |= IOSQE_BUFFER_SELECT;
        sqe->buf_group = loop->bufs.bgid;
        io_uring_sqe_set_data64(sqe, sock_ud(s, UD_RECV));
    }
    sqe_fixed(sqe, s);
    s->rd_armed = true;
}

/* One accept SQE per call (kernels without multishot accept). */
static int accept_single(hm_sock *ls, int64_t deadline)
{
    for (;;) {
        struct io_uring_sqe *sqe = get_sqe(ls->loop);
        if (!sqe) return -EBUSY;
        hm__op op = {.cancel = ur_cancel};
        io_uring_prep_accept(sqe, ls->fdx, NULL, NULL, SOCK_CLOEXEC);
        sqe_fixed(sqe, ls);
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
                io_uring_prep_multishot_accept(sqe, ls->fdx, NULL, NULL, SOCK_CLOEXEC);
                sqe_fixed(sqe, ls);
                io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)ms | UD_ACCEPT);
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
static void accept_closing(hm_sock *s)
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
        io_uring_prep_cancel64(sqe, (uint64_t)(uintptr_t)ms | UD_ACCEPT, 0);
        io_uring_sqe_set_data64(sqe, UD_IGNORE);
    }
}

static ssize_t ur_recv(hm_sock *s, void *buf, size_t len, int64_t deadline)
{
    struct io_uring_sqe *sqe = get_sqe(s->loop);
    if (!sqe) return -EBUSY;
    hm__op op = {.cancel = ur_cancel};
    io_uring_prep_recv(sqe, s->fdx, buf, len, 0);
    sqe_fixed(sqe, s);
    return submit_wait(s->loop, sqe, &op, deadline);
}

static ssize_t ur_sendv(hm_sock *s, struct iovec *iov, int iovcnt, int64_t deadline)
{
    struct io_uring_sqe *sqe = get_sqe(s->loop);
    if (!sqe) return -EBUSY;
    hm__op op = {.cancel = ur_cancel};
    if (iovcnt == 1) {
        io_uring_prep_send(sqe, s->fdx, iov[0].iov_base, iov[0].iov_len, MSG_NOSIGNAL);
        sqe_fixed(sqe, s);
        return submit_wait(s->loop, sqe, &op, deadline);
    }
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)iovcnt};
    io_uring_prep_sendmsg(sqe, s->fdx, &msg, MSG_NOSIGNAL);
    sqe_fixed(sqe, s);
    return submit_wait(s->loop, sqe, &op, deadline);
}

static int ur_send_detached(hm_sock *s, const void *buf, size_t len)
{
    hm_loop *loop = s->loop;
    struct io_uring_sqe *sqe = get_sqe(loop);
    if (!sqe) return -EBUSY;
    /* MSG_WAITALL: the kernel retries a short send itself, so a completion
     * that is skipped on success means every byte left. */
    io_uring_prep_send(sqe, s->fdx, buf, len, MSG_NOSIGNAL | MSG_WAITALL);
    sqe_fixed(sqe, s);
    if (loop->feat & HM__F_CQE_SKIP) sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
    io_uring_sqe_set_data64(sqe, sock_ud(s, UD_SEND));
    s->ds_total = (uint32_t)len;
    return 0;
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
    .connect_start = ur_connect_start,
    .accept = ur_accept,
    .recv = ur_recv,
    .want_read = ur_want_read,
    .sendv = ur_sendv,
    .send_detached = ur_send_detached,
};
