/* internal.h — what the engine's files share and nothing outside
 * src/engine may use: the loop and coroutine structs, timers, the
 * suspended-operation record, received-data segments and the backend
 * table. */
#ifndef HM_ENGINE_INTERNAL_H
#define HM_ENGINE_INTERNAL_H

#include "engine/engine.h"

#include <liburing.h>
#include <stdatomic.h>

/* The sanitizer this build is instrumented for (gcc defines
 * __SANITIZE_*__, clang answers __has_feature): the coroutine switch
 * tells ASan about stack changes and TSan about fibers (coro.c). */
#if defined(__SANITIZE_ADDRESS__)
#define HM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HM_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define HM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HM_TSAN 1
#endif
#endif

/* ---- timers: a binary min-heap for any deadline, FIFOs (hm_timeq) for
 * timers that share a duration ------------------------------------------ */

/* Arms t in the loop's heap for `deadline`. */
void hm__timer_arm(hm_loop *loop, hm_timer *t, int64_t deadline, hm_timer_fn fn);
void hm__timer_disarm(hm_loop *loop, hm_timer *t);

/* ---- a suspended operation -------------------------------------------- */

typedef struct hm__op hm__op;
/* Ends the operation early with op->cancel_reason as its result. */
typedef void (*hm__op_cancel_fn)(hm_loop *loop, hm__op *op);

struct hm__op {
    hm_coro *co;
    int64_t res;
    int cancel_reason; /* -ETIMEDOUT or -ECANCELED once cancelled, else 0 */
    bool completed;    /* the operation has its result */
    hm__op_cancel_fn cancel;
    hm_timer deadline;
    bool soft;       /* a sleep or a channel / wait-group / event wait: a STOP ends it */
    hm_sock *sock;   /* the socket waited on (readiness and data waits) */
    void *wait_link; /* channels / wait groups: the waiter record */
};

/* Suspends the running coroutine until hm__op_complete(op) is called; arms
 * the deadline first. A cancel that stuck to the coroutine while it was
 * not suspended ends the operation at once. Returns op->res (or the cancel
 * reason). */
int64_t hm__op_wait(hm_loop *loop, hm__op *op, int64_t deadline);
/* Marks the operation done with `res` and makes its coroutine ready. */
void hm__op_complete(hm_loop *loop, hm__op *op, int64_t res);
/* Called before a blocking operation starts: -ECANCELED (and the sticky
 * cancel is used up) when the running coroutine was cancelled while it was
 * not suspended, else 0. */
int hm__take_cancel(hm_loop *loop);

/* ---- coroutines ------------------------------------------------------- */

enum { HM__CORO_READY, HM__CORO_RUNNING, HM__CORO_SUSPENDED, HM__CORO_DONE };

struct hm_coro {
    void *sp;
    hm_coro *next_ready;
    hm_loop *loop;
    hm__op *op; /* what it is suspended in, for cancel */
    hm_coro_fn fn;
    void *arg;
    hm_task *task;                  /* told when the coroutine finishes, or NULL */
    hm_coro *live_prev, *live_next; /* the loop's live coroutines, for interrupts */
    unsigned busy_ops;              /* operations done in a row without waiting */
    void *stack;                    /* lowest address of the stack (its guard page) */
    size_t stack_size;              /* guard page included */
    int state;
    bool cancel_pending; /* cancelled while not suspended: the next op fails */
#ifdef HM_ASAN
    void *asan_fake_stack;
#endif
#ifdef HM_TSAN
    void *tsan_fiber; /* TSan's context for this coroutine's stack */
#endif
};

void hm__coro_ready(hm_loop *loop, hm_coro *co);
/* Switches from the running coroutine back to the loop. */
void hm__coro_suspend(hm_loop *loop);
void hm__coro_run_ready(hm_loop *loop);
void hm__coro_free_stacks(hm_loop *loop);
/* Sets what hm_loop_current() returns on this thread (coro.c owns it). */
void hm__set_current_loop(hm_loop *loop);

/* ---- received data ------------------------------------------------------ */

/* Where a segment's bytes live. */
enum {
    HM__SEG_HEAP = -1,    /* a heap copy, freed with the segment */
    HM__SEG_LOOPBUF = -2, /* the loop's read buffer (readiness reads): moved to
                           * the heap before that buffer is read into again */
};

/* Received bytes not consumed yet: a provided buffer's slice (bid >= 0) or
 * one of the kinds above. */
typedef struct hm__seg {
    struct hm__seg *next;
    char *mem; /* HM__SEG_HEAP: the allocation (data moves on as bytes are skipped) */
    char *data;
    uint32_t len;
    int32_t bid;
} hm__seg;

/* rd_end values besides a negative errno. */
#define HM__RD_EOF 1

/* ---- sockets ---------------------------------------------------------- */

typedef struct hm__accept_ms hm__accept_ms;

struct hm_sock {
    /* Word-sized fields first, then the 4-byte ones, then the flags: a
     * socket record is allocated per connection (160-byte bin, not 192). */
    hm_loop *loop;
    hm__op *rd_waiter;          /* a coroutine waiting for bytes (or readiness) */
    hm__op *wr_waiter;          /* epoll: a coroutine waiting for writability */
    hm__seg *rq_head, *rq_tail; /* received, not consumed */
    hm_sock_data_fn on_data;    /* callback reader, or NULL */
    hm_sock_connect_fn on_connect;
    void *user;
    const char *ds_ptr; /* epoll: what a detached send still has to write */
    size_t ds_len;
    char *ds_copy;      /* hm_sock_send_copy's copy of what it could not send at once */
    hm_post soon;       /* deferred work: a connect's result, reads left over */
    hm__accept_ms *ams; /* io_uring listener: its multishot accept, or NULL */
    int fd;
    int fdx;           /* io_uring: what SQEs name (registered index when `fixed`) */
    uint32_t gen;      /* distinguishes sockets that reuse an fd (user_data, epoll data) */
    int rd_end;        /* 0, HM__RD_EOF or a negative errno: reading has ended */
    int send_err;      /* a detached send failed with this */
    uint32_t ds_total; /* io_uring: length of the detached send in flight */
    int conn_res;      /* epoll: a connect's result, for the deferred callback */
    bool listening;
    bool fixed;    /* io_uring: fdx is a registered file index */
    bool rd_ready; /* readiness reads: the kernel has bytes (or an end) for us */
    bool rd_full;  /* readiness reads: the last read filled the loop's buffer, so
                    * the rest of that arrival may still be in the kernel */
    bool rd_hup;   /* readiness reads: the peer's FIN (or an error) is queued, so a
                    * short read no longer means the socket is empty */
    bool rd_armed; /* io_uring: a receive (multishot) or a poll is in the kernel */
    bool connecting;
    bool send_none;   /* ... having sent none of its bytes (send_err) */
    bool soon_queued; /* `soon` is in the loop's deferred list */
};

/* The live socket with this fd and generation, or NULL (closed since). */
hm_sock *hm__sock_lookup(hm_loop *loop, int fd, uint32_t gen);

/* Hands received bytes to s: to its callback reader at once, else into its
 * queue (waking a waiting coroutine). The segment is s's afterwards.
 * maybe_cut: the segment filled its provided buffer to the end, or the
 * kernel said the socket still held bytes, so it may have put the rest of
 * the same arrival in the next completion of this turn: a callback reader
 * then gets it after the turn's completions, with the rest queued behind
 * it (hm_sock_queued). */
void hm__sock_deliver(hm_sock *s, hm__seg *seg, bool maybe_cut);
/* Reading ended (HM__RD_EOF or a negative errno): tells the reader or the
 * waiter, after the bytes already queued. */
void hm__sock_deliver_end(hm_sock *s, int end);
/* A detached send failed. */
void hm__sock_send_failed(hm_sock *s, int err, bool nothing_sent);
/* The kernel says s has bytes (or an end: hup) to read: wakes a waiter;
 * for a callback reader, reads them into the loop's buffer and delivers. */
void hm__sock_readable(hm_sock *s, bool hup);
/* A connect started with hm_sock_connect_start finished. */
void hm__sock_connected(hm_sock *s, int res);

hm__seg *hm__seg_new(hm_loop *loop);
/* io_uring: a segment pointing into provided buffer bid was freed. */
void hm__bufring_release(hm_loop *loop, int bid);
/* Releases a segment's bytes (a provided buffer's reference, a heap copy)
 * and the segment. */
void hm__seg_free(hm_loop *loop, hm__seg *seg);

/* ---- backends --------------------------------------------------------- */

typedef struct hm__backend {
    const char *name;
    int (*init)(hm_loop *loop, const hm_loop_options *o);
    void (*destroy)(hm_loop *loop);
    /* Waits for I/O up to timeout_ns (-1 forever, 0 poll) and completes ops. */
    int (*poll)(hm_loop *loop, int64_t timeout_ns);
    /* True when submitted work waits for the next poll (io_uring SQEs). */
    bool (*has_pending)(hm_loop *loop);
    int (*sock_added)(hm_sock *s);    /* a new fd joins the loop */
    void (*sock_closing)(hm_sock *s); /* before its fd closes; NULL: nothing to do */
    int (*connect)(hm_sock *s, const struct sockaddr *sa, socklen_t len, int64_t deadline);
    /* Starts a connect whose end hm__sock_connected reports. */
    int (*connect_start)(hm_sock *s, const struct sockaddr *sa, socklen_t len);
    int (*accept)(hm_sock *ls, int64_t deadline); /* returns the new fd */
    /* Reads into the caller's buffer (io_uring only: the readiness
     * backends read in sock.c). */
    ssize_t (*recv)(hm_sock *s, void *buf, size_t len, int64_t deadline);
    /* Someone wants s's bytes: make sure they will be delivered (io_uring:
     * arm a multishot receive, or a readiness poll). */
    void (*want_read)(hm_sock *s);
    ssize_t (*sendv)(hm_sock *s, struct iovec *iov, int iovcnt, int64_t deadline);
    int (*send_detached)(hm_sock *s, const void *buf, size_t len);
} hm__backend;

extern const hm__backend hm__backend_epoll;
extern const hm__backend hm__backend_uring;

/* ---- the loop --------------------------------------------------------- */

/* Features (hm_loop.feat), each switched off by its name in
 * HAMMER_ENGINE_DISABLE or by a failed probe. */
enum {
    HM__F_DEFER_TASKRUN = 1u << 0,
    HM__F_COOP_TASKRUN = 1u << 1,
    HM__F_CQSIZE = 1u << 2,
    HM__F_RING_FD = 1u << 3,
    HM__F_FILES = 1u << 4,
    HM__F_BUFRING = 1u << 5,
    HM__F_BUFRING_INC = 1u << 6,
    HM__F_RECV_MULTISHOT = 1u << 7,
    HM__F_CQE_SKIP = 1u << 8,
    HM__F_GUARD_MADVISE = 1u << 9,
};
/* The features the environment leaves on (all, unless HAMMER_ENGINE_DISABLE
 * names some). */
unsigned hm__features_allowed(void);

/* A stack slab: one mapping for many stacks (one VMA when guards are
 * madvise'd). */
typedef struct hm__slab {
    struct hm__slab *next;
    void *base;
    size_t size;
} hm__slab;

/* The provided-buffer ring (io_uring). */
typedef struct hm__bufring {
    struct io_uring_buf_ring *br;
    size_t br_size;
    char *base; /* nbufs buffers of size bytes */
    uint32_t size, nbufs;
    uint16_t bgid;
    bool inc;          /* incremental consumption: many receives share a buffer */
    uint32_t *off;     /* per buffer: where the kernel's next bytes go (inc) */
    uint32_t *refs;    /* per buffer: segments still pointing into it */
    bool *kernel_done; /* per buffer: the kernel has moved past it */
    uint32_t in_ring;  /* buffers the kernel may still fill */
} hm__bufring;

struct hm_loop {
    const hm__backend *be;
    hm_backend_kind kind;
    unsigned feat; /* HM__F_*: what this loop uses */
    char feat_names[200];
    hm_coro *current;
    void *sched_sp;     /* the loop's own stack while a coroutine runs */
    bool on_loop_stack; /* inside hm_call_on_loop_stack */
    hm_coro *ready_head, *ready_tail;
    hm_coro *live_head; /* every coroutine not yet done */
    size_t live_coros;
    size_t holds; /* hm_loop_hold */
    int64_t now;  /* hm_loop_now: read once a turn */

    /* stacks: slabs of stack_size each, free ones on a LIFO */
    size_t stack_size;
    hm__slab *slabs;
    void **stack_free;
    size_t stack_free_len, stack_free_cap;
    size_t stacks_used, max_stacks;
    /* HAMMER_STACK_PROBE: the pages each ended coroutine left resident in
     * its stack (how deep it went), summed, and the deepest; reported on
     * stderr when the loop ends. For bench/vu_memory.sh. */
    bool stack_probe;
    size_t probe_stacks, probe_pages, probe_max, probe_deep; /* deep: past one page */

    hm_timer **heap;
    size_t heap_len, heap_cap;
    hm_timeq *timeqs;

    /* cross-thread posts: a lock-free stack the loop drains each turn */
    _Atomic(hm_post *) inbox;
    int wake_fd; /* eventfd written when the inbox was empty */
    /* Posters between making a post visible and writing wake_fd: the loop
     * may take the post, end and be destroyed in that window, so
     * hm_loop_destroy waits for this to reach 0 before it closes wake_fd. */
    atomic_int posting;
    uint64_t wake_buf;
    hm_post *soon_head, *soon_tail; /* local deferred calls, run next turn */

    /* sockets by fd, so completions and events can name them without
     * pointers that a close would leave dangling */
    hm_sock **socks;
    size_t socks_cap;
    uint32_t sock_gen;
    hm__seg *seg_free;
    void **defer_free; /* hm__loop_defer_free */
    size_t defer_len, defer_cap;
    char *rbuf; /* readiness reads land here (lazily allocated) */
    size_t rbuf_cap;
    hm_sock *rbuf_owner; /* whose queued segment points into rbuf */

    hm_loop_stats stats;

    int intr_seen;    /* the interrupt level this loop has acted on */
    bool stop_aborts; /* hm_loop_options.stop_aborts */
    bool aborted;     /* ABORT seen: every operation fails with -ECANCELED */

    /* backend state */
    struct io_uring ring;
    hm__bufring bufs;
    unsigned files_nr; /* registered file table size (slot = fd) */
    int *fd_ident;     /* fd_ident[i] == i: what FILES_UPDATE reads */
    bool starved;      /* a receive ended for want of buffers */
    bool ms_seen;      /* a multishot receive has delivered: the kernel has them */
    int epfd;
    /* io_uring: multishot accepts of closed listeners whose final CQE has
     * not arrived yet (freed then, or by the backend's destroy). */
    hm__accept_ms *accept_orphans;
#ifdef HM_ASAN
    void *asan_fake_stack;
    const void *main_stack_bottom;
    size_t main_stack_size;
#endif
#ifdef HM_TSAN
    void *tsan_sched_fiber; /* TSan's context of the stack that resumed the coroutine */
#endif
};

/* ---- interrupts ------------------------------------------------------- */

/* The process-wide level (hm_interrupt_level) and the eventfds a raise
 * writes (index 0 for STOP, 1 for ABORT; -1 before hm_interrupt_init).
 * Backends watch both fds only to wake their poll: a loop acts on the
 * level, which it reads every turn. */
extern _Atomic int hm__intr_level;
extern int hm__intr_fd[2];

/* Ends the waits the level asks for (see engine.h); called by the loop. */
void hm__loop_interrupted(hm_loop *loop, int level);

/* Frees p when the loop is destroyed (memory the kernel may still read). */
void hm__loop_defer_free(hm_loop *loop, void *p);

/* Queues p to run on the loop's own thread at the next turn. */
void hm__loop_soon(hm_loop *loop, hm_post *p);
/* Runs what other threads posted (the backend calls it when woken). */
void hm__loop_drain_inbox(hm_loop *loop);

/* Whether s's loop reads after readiness into its own buffer (epoll, and
 * io_uring without provided buffers or multishot receive) rather than
 * having the kernel fill provided buffers. */
static inline bool hm__readiness_reads(const hm_loop *loop)
{
    return loop->kind == HM_BACKEND_EPOLL ||
           (loop->feat & (HM__F_BUFRING | HM__F_RECV_MULTISHOT)) !=
               (HM__F_BUFRING | HM__F_RECV_MULTISHOT);
}

/* Queues s's deferred work (a connect result, reads left over). */
void hm__sock_soon(hm_sock *s);

/* Counts socket errors into the loop's stats. */
static inline void hm__count_error(hm_loop *loop, int64_t res)
{
    if (res == -ETIMEDOUT)
        loop->stats.timeouts++;
    else if (res == -ECONNRESET || res == -EPIPE)
        loop->stats.resets++;
}

#endif
