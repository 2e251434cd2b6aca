/* internal.h — what the engine's files share and nothing outside
 * src/engine may use: the loop and coroutine structs, the timer heap, the
 * suspended-operation record and the backend table. */
#ifndef HM_ENGINE_INTERNAL_H
#define HM_ENGINE_INTERNAL_H

#include "engine/engine.h"

#include <liburing.h>
#include <stdatomic.h>

/* ---- timers: a binary min-heap of pointers, O(log n) arm and disarm ---- */

typedef struct hm__timer hm__timer;
typedef void (*hm__timer_cb)(hm__timer *t);
struct hm__timer {
    int64_t deadline;
    size_t heap_index; /* SIZE_MAX when not armed */
    hm__timer_cb cb;
};

void hm__timer_arm(hm_loop *loop, hm__timer *t, int64_t deadline, hm__timer_cb cb);
void hm__timer_disarm(hm_loop *loop, hm__timer *t);

/* ---- a suspended operation -------------------------------------------- */

typedef struct hm__op hm__op;
/* Ends the operation early with op->cancel_reason as its result. */
typedef void (*hm__op_cancel_fn)(hm_loop *loop, hm__op *op);

struct hm__op {
    hm_coro *co;
    int64_t res;
    int cancel_reason; /* -ETIMEDOUT or -ECANCELED once cancelled, else 0 */
    bool completed;    /* io_uring: the CQE arrived */
    hm__op_cancel_fn cancel;
    hm__timer deadline;
    bool soft;       /* a sleep or a channel / wait-group wait: a STOP ends it */
    hm_sock *sock;   /* epoll: the socket waited on */
    void *wait_link; /* channels / wait groups: the waiter record */
};

/* Suspends the running coroutine until hm__op_complete(op) is called; arms
 * the deadline first. Returns op->res (or the cancel reason). */
int64_t hm__op_wait(hm_loop *loop, hm__op *op, int64_t deadline);
/* Marks the operation done with `res` and makes its coroutine ready. */
void hm__op_complete(hm_loop *loop, hm__op *op, int64_t res);

/* ---- coroutines ------------------------------------------------------- */

enum { HM__CORO_READY, HM__CORO_RUNNING, HM__CORO_SUSPENDED, HM__CORO_DONE };

struct hm_coro {
    void *sp;
    hm_coro *next_ready;
    hm_loop *loop;
    hm__op *op; /* what it is suspended in, for cancel */
    hm_coro_fn fn;
    void *arg;
    hm_coro *live_prev, *live_next; /* the loop's live coroutines, for interrupts */
    unsigned busy_ops;              /* operations done in a row without waiting */
    void *stack;                    /* mmap base (the guard page is the lowest page) */
    size_t stack_size;              /* whole mapping */
    int state;
#ifdef HM_SANITIZE
    void *asan_fake_stack;
#endif
};

void hm__coro_ready(hm_loop *loop, hm_coro *co);
/* Switches from the running coroutine back to the loop. */
void hm__coro_suspend(hm_loop *loop);
void hm__coro_run_ready(hm_loop *loop);
void hm__coro_free_stacks(hm_loop *loop);
/* Sets what hm_loop_current() returns on this thread (coro.c owns it). */
void hm__set_current_loop(hm_loop *loop);

/* ---- sockets ---------------------------------------------------------- */

typedef struct hm__accept_ms hm__accept_ms;

struct hm_sock {
    int fd;
    bool listening;
    hm__op *rd_waiter; /* epoll: coroutine waiting for readability */
    hm__op *wr_waiter; /* epoll: coroutine waiting for writability */
    hm_loop *loop;
    hm__accept_ms *ams; /* io_uring listener: its multishot accept, or NULL */
};

/* ---- backends --------------------------------------------------------- */

typedef struct hm__backend {
    const char *name;
    int (*init)(hm_loop *loop, unsigned entries);
    void (*destroy)(hm_loop *loop);
    /* Waits for I/O up to timeout_ns (-1 forever, 0 poll) and completes ops. */
    int (*poll)(hm_loop *loop, int64_t timeout_ns);
    /* True when submitted work waits for the next poll (io_uring SQEs). */
    bool (*has_pending)(hm_loop *loop);
    int (*sock_added)(hm_sock *s);    /* a new fd joins the loop */
    void (*sock_closing)(hm_sock *s); /* before its fd closes; NULL: nothing to do */
    int (*connect)(hm_sock *s, const struct sockaddr *sa, socklen_t len, int64_t deadline);
    int (*accept)(hm_sock *ls, int64_t deadline); /* returns the new fd */
    ssize_t (*recv)(hm_sock *s, void *buf, size_t len, int64_t deadline);
    ssize_t (*sendv)(hm_sock *s, struct iovec *iov, int iovcnt, int64_t deadline);
} hm__backend;

extern const hm__backend hm__backend_epoll;
extern const hm__backend hm__backend_uring;

/* ---- the loop --------------------------------------------------------- */

struct hm_loop {
    const hm__backend *be;
    hm_backend_kind kind;
    hm_coro *current;
    void *sched_sp; /* the loop's own stack while a coroutine runs */
    hm_coro *ready_head, *ready_tail;
    hm_coro *live_head; /* every coroutine not yet done */
    size_t live_coros;
    size_t stack_size;

    hm__timer **heap;
    size_t heap_len, heap_cap;

    hm_coro *dead; /* finished coroutines whose stacks await reuse */
    void **stack_pool;
    size_t stack_pool_len;

    hm_loop_stats stats;

    int intr_seen;    /* the interrupt level this loop has acted on */
    bool stop_aborts; /* hm_loop_options.stop_aborts */
    bool aborted;     /* ABORT seen: every operation fails with -ECANCELED */

    /* backend state */
    struct io_uring ring;
    int epfd;
    /* io_uring: multishot accepts of closed listeners whose final CQE has
     * not arrived yet (freed then, or by the backend's destroy). */
    hm__accept_ms *accept_orphans;
#ifdef HM_SANITIZE
    void *asan_fake_stack;
    const void *main_stack_bottom;
    size_t main_stack_size;
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

/* Counts socket errors into the loop's stats. */
static inline void hm__count_error(hm_loop *loop, int64_t res)
{
    if (res == -ETIMEDOUT)
        loop->stats.timeouts++;
    else if (res == -ECONNRESET || res == -EPIPE)
        loop->stats.resets++;
}

#endif
