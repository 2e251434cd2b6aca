/* engine.h — hammer's event engine: one loop per thread, stackful coroutines,
 * coroutine-blocking socket operations, timers, channels and wait groups.
 *
 * Model (OpenSwoole style): code runs in coroutines. A socket operation
 * submits the I/O to the thread's backend (io_uring or epoll) and suspends
 * the coroutine until it completes, its deadline passes (-ETIMEDOUT) or the
 * coroutine is cancelled (-ECANCELED). Nothing here is thread-safe: a loop,
 * its coroutines, sockets, channels and wait groups belong to one thread.
 * Threads share nothing; hm_engine_run() starts N of them and joins them.
 *
 * Errors: 0 / non-negative on success, negative errno on failure.
 * Deadlines are absolute hm_now_ns() values; 0 means "no deadline".
 *
 * Ownership:
 * - hm_loop: created and destroyed by its thread (hm_loop_create/destroy),
 *   or by hm_engine_run() for each engine thread.
 * - hm_coro: owned by the loop. Its stack (mmap'd, with a guard page) is
 *   released by the loop when the entry function returns; a coroutine handle
 *   must not be used after that (use a wait group to wait for it).
 * - hm_sock: created by connect/listen/accept, owned by the caller until
 *   hm_sock_close(), which must not be called while another coroutine is
 *   blocked on the same socket (cancel that coroutine first).
 * - Buffers passed to read/write belong to the caller and must stay valid
 *   until the call returns (the calling coroutine is suspended meanwhile, so
 *   stack buffers are fine). hm_sock_send_detached is the exception: its
 *   buffer must outlive the send (see there).
 * - Received bytes: the engine owns them (io_uring: a per-thread ring of
 *   provided buffers that the kernel fills; epoll: one per-thread buffer
 *   read into after readiness), so an idle connection owns no read buffer.
 *   hm_sock_peek hands out a view of them, valid until hm_sock_skip drops
 *   them or the caller next suspends, whichever comes first.
 * - Connections without a coroutine (callbacks: hm_sock_connect_start,
 *   hm_sock_set_reader, timers, hm_timeq): the caller owns its records and
 *   keeps the loop running with hm_loop_hold while it has any. */
#ifndef HM_ENGINE_H
#define HM_ENGINE_H

#include "base/hm_base.h"
#include "base/hm_dlist.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

typedef enum {
    HM_BACKEND_AUTO = 0,
    HM_BACKEND_IO_URING,
    HM_BACKEND_EPOLL,
} hm_backend_kind;

typedef struct hm_loop hm_loop;
typedef struct hm_coro hm_coro;
typedef struct hm_sock hm_sock;
typedef void (*hm_coro_fn)(void *arg);

/* Counters a loop keeps about its sockets; read them after the run. */
typedef struct hm_loop_stats {
    uint64_t coros_spawned;
    uint64_t switches;
    uint64_t connects;       /* successful connects */
    uint64_t connect_errors; /* refused, unreachable, ... */
    uint64_t timeouts;       /* operations ended by their deadline */
    uint64_t resets;         /* ECONNRESET / EPIPE seen on read or write */
    uint64_t accepts;
    uint64_t stacks_mapped; /* coroutine stacks the loop has mapped (in slabs) */
} hm_loop_stats;

typedef struct hm_loop_options {
    hm_backend_kind backend;
    size_t stack_size;     /* coroutine stack, bytes; 0 = HM_DEFAULT_STACK */
    unsigned ring_entries; /* io_uring SQ size; 0 = 4096 */
    unsigned conns;        /* connections the loop expects to hold (sizes the io_uring
                            * completion queue); 0 = a default */
    unsigned max_stacks;   /* coroutines alive at once; 0 = no limit, or the environment's
                            * HAMMER_MAX_STACKS (so tests can make spawning fail) */
    bool stop_aborts;      /* an interrupt's STOP acts as ABORT here: for set-up and
                            * tear-down loops, which have nothing to finish */
} hm_loop_options;

#define HM_DEFAULT_STACK (64 * 1024)

/* Engine features can be switched off for tests of the fallbacks, by
 * listing them, comma-separated, in the environment variable
 * HAMMER_ENGINE_DISABLE: defer_taskrun, coop_taskrun, cqsize, ring_fd,
 * files (registered files), bufring (provided buffers: reads fall back to
 * readiness polls), bufring_inc (incremental buffer consumption),
 * recv_multishot, cqe_skip, guard_madvise (stack guards by mprotect, one
 * mapping per stack). Each is also probed, and dropped when the kernel
 * refuses it. */

/* ---- backend selection ------------------------------------------------ */

/* Returns 0 when io_uring can be used here, else the negative errno that
 * io_uring_queue_init() or the sysctl gave, and a reason in *why. */
int hm_io_uring_probe(const char **why);
/* Resolves AUTO to a concrete backend (probing io_uring); never fails. */
hm_backend_kind hm_backend_resolve(hm_backend_kind want, const char **why_fallback);
const char *hm_backend_name(hm_backend_kind k);
/* Parses "auto", "io_uring" or "epoll"; -EINVAL otherwise. */
int hm_backend_parse(const char *s, hm_backend_kind *out);

/* ---- loops ------------------------------------------------------------ */

/* Creates a loop bound to the calling thread. */
int hm_loop_create(hm_loop **out, const hm_loop_options *opt);
/* Runs until every coroutine of the loop has finished and nothing holds
 * the loop (hm_loop_hold). */
int hm_loop_run(hm_loop *loop);
/* The time of the loop's current turn (hm_now_ns() read once after each
 * poll): for deadlines and idle checks that need no nanosecond, not for
 * measuring latency. */
int64_t hm_loop_now(const hm_loop *loop);
/* Keeps hm_loop_run going while work without a coroutine (callback-driven
 * connections, timers) is pending; each hold is released once. */
void hm_loop_hold(hm_loop *loop);
void hm_loop_release(hm_loop *loop);
/* Frees p (hm_alloc'd) when the loop is destroyed: memory that a detached
 * send on a socket closed early may still be reading. */
void hm_loop_free_later(hm_loop *loop, void *p);
/* The features the loop's backend uses, for logs and tests: a
 * space-separated list of the names HAMMER_ENGINE_DISABLE takes. */
const char *hm_loop_features(const hm_loop *loop);

/* ---- interrupts (Ctrl-C) ------------------------------------------------
 *
 * One process-wide level that only rises. Every loop notices a change at
 * its next turn (a blocked poll is woken):
 * - STOP: each coroutine suspended in a sleep or a channel or wait-group
 *   wait gets -ECANCELED; socket operations go on, so requests in flight
 *   can finish within their deadlines.
 * - ABORT: every suspended operation gets -ECANCELED, and every later one
 *   fails with it at once (a sleep or wait yields first, so loops that
 *   poll still let the others run).
 * A loop created with stop_aborts treats STOP as ABORT. */
typedef enum hm_interrupt_level {
    HM_INTERRUPT_NONE = 0,
    HM_INTERRUPT_STOP,
    HM_INTERRUPT_ABORT,
} hm_interrupt_level;

/* Creates the wake-ups loops watch (two eventfds, close-on-exec). Call once
 * from the main thread before raising; loops created earlier notice a raise
 * only at their next turn. Returns 0 or a negative errno. */
int hm_interrupt_init(void);
/* Raises the level to at least `level`. Async-signal-safe. */
void hm_interrupt_raise(hm_interrupt_level level);
hm_interrupt_level hm_interrupt_current(void);
void hm_loop_destroy(hm_loop *loop);
hm_loop *hm_loop_current(void);
hm_backend_kind hm_loop_backend(const hm_loop *loop);
const hm_loop_stats *hm_loop_get_stats(const hm_loop *loop);

/* ---- coroutines -------------------------------------------------------- */

/* Creates a coroutine that runs fn(arg) on `loop` (the current loop when
 * NULL); it starts at the loop's next turn, not inside this call. */
int hm_coro_spawn(hm_loop *loop, hm_coro_fn fn, void *arg, hm_coro **out);
/* The running coroutine, or NULL on the loop's own stack. */
hm_coro *hm_coro_self(void);
/* Lets every other ready coroutine run once, then continues. */
void hm_coro_yield(void);
/* Suspends for ns nanoseconds; -ECANCELED if cancelled (or interrupted) first. */
int hm_coro_sleep(int64_t ns);
/* Suspends until the absolute time; -ECANCELED if cancelled first. */
int hm_coro_sleep_until(int64_t deadline_ns);
/* Cancels `co`: the blocking operation it is suspended in returns
 * -ECANCELED; when it is not suspended (ready to run, or running), the
 * cancel sticks and its next blocking operation returns -ECANCELED at once.
 * One cancel ends one operation. -ESRCH when `co` has finished (its handle
 * is valid until then only; hm_task keeps one that stays valid). */
int hm_coro_cancel(hm_coro *co);
/* Bytes of the stack the calling coroutine may still use (guard excluded). */
size_t hm_coro_stack_left(void);
/* Runs fn(arg) on the thread's own stack, which is idle while a coroutine
 * runs, and returns: deep work that never suspends (parsing, scraping,
 * serializing) then touches pages every coroutine of the thread shares,
 * not pages of each coroutine's stack, which stays as shallow as its
 * suspension points. fn must not suspend (no blocking engine call) nor
 * spawn-and-yield. Outside a coroutine (or nested) it just calls fn. */
void hm_call_on_loop_stack(void (*fn)(void *), void *arg);

/* A coroutine that can be joined and cancelled safely whether or not it has
 * finished: the caller owns the hm_task (zeroed, or reused after a join),
 * which must outlive the coroutine. */
typedef struct hm_task {
    hm_coro *co;     /* NULL once finished */
    bool done;       /* the coroutine's function has returned */
    void *waitq_[2]; /* internal: coroutines joining it */
} hm_task;

/* Spawns fn(arg) on `loop` (the current loop when NULL) as t. */
int hm_task_spawn(hm_task *t, hm_loop *loop, hm_coro_fn fn, void *arg);
/* Waits until t has finished: 0, -ETIMEDOUT or -ECANCELED. */
int hm_task_join(hm_task *t, int64_t deadline);
/* hm_coro_cancel for a task; 0 when it has already finished too. */
int hm_task_cancel(hm_task *t);

/* ---- sockets ----------------------------------------------------------- */

/* Deadlines of socket operations are checked before each operation too,
 * not only while it waits: data that is always there (a server that floods)
 * cannot hold an operation past its deadline (-ETIMEDOUT). A coroutine
 * whose operations keep completing without waiting yields every
 * HM_FAIR_OPS of them, so it cannot starve the others of its thread. */
#define HM_FAIR_OPS 16

/* Connects a TCP socket (IPv4 or IPv6) with TCP_NODELAY. */
int hm_sock_connect(hm_sock **out, const struct sockaddr *sa, socklen_t len, int64_t deadline);
/* Binds and listens; port 0 picks a free port (see hm_sock_local_port). */
int hm_sock_listen(hm_sock **out, const struct sockaddr *sa, socklen_t len, int backlog);
/* Accepts one connection (TCP_NODELAY set). */
int hm_sock_accept(hm_sock *listener, hm_sock **out, int64_t deadline);
/* Reads at most len bytes; returns the count, 0 on EOF, or a negative errno. */
ssize_t hm_sock_read(hm_sock *s, void *buf, size_t len, int64_t deadline);
/* Waits for received bytes and points *data at them, in engine memory (no
 * buffer of the caller's): returns their count, 0 on EOF, or a negative
 * errno. The view stays valid until hm_sock_skip drops it, or the caller
 * suspends, or calls hm_sock_peek / hm_sock_read again. */
ssize_t hm_sock_peek(hm_sock *s, const char **data, int64_t deadline);
/* Drops the first n bytes of what hm_sock_peek returned (n <= that count);
 * the rest is returned by the next peek or read. */
void hm_sock_skip(hm_sock *s, size_t n);
/* Whether the peer closed or sent something while the socket sat idle:
 * 1 when bytes, an EOF or an error wait to be read, 0 when nothing does.
 * Never blocks. */
int hm_sock_peer_spoke(hm_sock *s);
/* Bytes received for s and not read or skipped yet (for a callback reader:
 * beyond the ones it is being handed now). One arrival can reach a reader
 * in pieces: it ran past a provided buffer's end (io_uring: the pieces of
 * one turn are all queued before a reader sees the first), or filled the
 * loop's read buffer (epoll: the rest is still in the kernel, and only
 * then does this ask it, with two system calls). So a client that never
 * pipelines finds here, right after a complete response, bytes nobody
 * asked for. Copies the first of them (up to cap) to first, and their
 * count to *first_len (both optional). */
size_t hm_sock_queued(hm_sock *s, char *first, size_t cap, size_t *first_len);
/* Writes all len bytes. Returns len or a negative errno; *sent (optional)
 * says how many bytes were handed to the kernel before the error. */
ssize_t hm_sock_write(hm_sock *s, const void *buf, size_t len, int64_t deadline, size_t *sent);
/* Writes every byte of the vector (same contract as hm_sock_write). */
ssize_t hm_sock_writev(hm_sock *s, const struct iovec *iov, int iovcnt, int64_t deadline,
                       size_t *sent);
/* Queues len bytes for sending and returns at once, without suspending:
 * buf must stay valid until the peer has answered them (so that they
 * certainly left) or the loop is destroyed, and only one detached send may
 * be in flight per socket (send the next after the answer). Success is not
 * reported (io_uring: IOSQE_CQE_SKIP_SUCCESS); a failure ends the socket's
 * reading with its error (the next read or the reader sees it), and
 * hm_sock_send_error tells whether any byte had left. 0, or a negative errno
 * when the send could not even be queued. */
int hm_sock_send_detached(hm_sock *s, const void *buf, size_t len);
/* Sends what the socket takes now (a non-blocking send) and returns at
 * once; the rest, if any, is copied and sent detached (the copy lives with
 * the socket until its next send or its close). For a request that is not
 * kept: the caller may free buf when this returns. As for a detached send,
 * the next send on s comes after the peer has answered. Failures as for
 * hm_sock_send_detached. */
int hm_sock_send_copy(hm_sock *s, const void *buf, size_t len);
/* The error of a failed detached send (0 if none); *nothing_sent (optional)
 * says whether the kernel had sent none of its bytes. */
int hm_sock_send_error(const hm_sock *s, bool *nothing_sent);
/* Closes the socket and frees it. On io_uring its file may stay open until
 * the loop's next turn (an armed receive and the registered slot hold it
 * until the kernel has released them), so a coroutine must not block the
 * thread waiting for the close to take effect. */
void hm_sock_close(hm_sock *s);
/* Closes with SO_LINGER 0, so the peer sees a reset. */
void hm_sock_abort(hm_sock *s);
int hm_sock_fd(const hm_sock *s);
int hm_sock_local_port(const hm_sock *s);

/* ---- sockets without a coroutine ---------------------------------------- */

/* Called when an hm_sock_connect_start finishes: res 0, or a negative errno
 * (the caller then closes s). */
typedef void (*hm_sock_connect_fn)(void *user, hm_sock *s, int res);
/* Called on the loop's stack with received bytes (len > 0; data valid only
 * during the call, every byte counts as taken), at EOF (len 0) or on an
 * error (len < 0: a negative errno; a failed detached send ends reading so
 * too). It may send, close s or start other work; after EOF or an error it
 * is not called again. */
typedef void (*hm_sock_data_fn)(void *user, hm_sock *s, const char *data, ssize_t len);

/* Starts connecting a TCP socket (TCP_NODELAY) on `loop` and returns at
 * once: *out is the socket, and cb runs from the loop (never inside this
 * call) when the connect ends. Deadlines are the caller's (close s to give
 * up: cb is then not called). */
int hm_sock_connect_start(hm_loop *loop, hm_sock **out, const struct sockaddr *sa, socklen_t len,
                          hm_sock_connect_fn cb, void *user);
/* Makes fn the socket's reader: received bytes go to it as they arrive
 * (io_uring: from the completion, straight out of the provided buffer;
 * epoll: read after readiness into the thread's buffer). NULL stops. */
int hm_sock_set_reader(hm_sock *s, hm_sock_data_fn fn, void *user);

/* ---- timers without a coroutine ------------------------------------------ */

typedef struct hm_timer hm_timer;
typedef void (*hm_timer_fn)(hm_timer *t);
/* A timer the caller owns (embed it in a record); fn runs on the loop's
 * stack once the deadline passes. Fields ending in _ are the engine's. */
struct hm_timer {
    int64_t deadline;
    hm_timer_fn fn;
    hm_dlink link_;     /* in a hm_timeq */
    void *home_;        /* the hm_timeq it is in, or NULL */
    size_t heap_index_; /* in the loop's heap, or SIZE_MAX */
};

/* A FIFO of timers that all wait the same duration: since each is armed at
 * now + duration, they expire in arming order, so arming and disarming cost
 * O(1) (the loop looks at the head only) instead of a heap's O(log n). */
typedef struct hm_timeq {
    int64_t duration;
    hm_dlist timers_;
    struct hm_timeq *next_; /* in the loop's list */
    hm_loop *loop_;
} hm_timeq;

void hm_timer_init(hm_timer *t, hm_timer_fn fn);
/* Arms t for an absolute deadline (re-arms it if armed): O(log n). */
void hm_timer_arm(hm_loop *loop, hm_timer *t, int64_t deadline);
/* Disarms t wherever it is armed; nothing if it is not. */
void hm_timer_disarm(hm_timer *t);
static inline bool hm_timer_armed(const hm_timer *t)
{
    return t->home_ != NULL;
}
/* Registers q on loop; fini before its memory goes. */
void hm_timeq_init(hm_loop *loop, hm_timeq *q, int64_t duration_ns);
void hm_timeq_fini(hm_timeq *q);
/* Arms t for now + q->duration at the tail of q (re-arms it if armed). */
void hm_timeq_arm(hm_timeq *q, hm_timer *t);

/* ---- across threads -------------------------------------------------------- */

/* A call to run on another loop's thread: the caller owns the record until
 * fn runs; fn(p) runs at that loop's next turn. */
typedef struct hm_post {
    struct hm_post *next_;
    void (*fn)(struct hm_post *p);
} hm_post;
/* Thread-safe: queues p on loop and wakes it (an eventfd). The loop must be
 * kept alive (a coroutine or a hold) until fn has run. */
void hm_loop_post(hm_loop *loop, hm_post *p);

/* A count shared by threads: coroutines of any loop wait until it reaches
 * zero (a gate is a latch of 1). Thread-safe; waiters on other loops are
 * woken through hm_loop_post. */
typedef struct hm_latch {
    _Atomic int64_t count;
    _Atomic int lock_;
    void *waiters_;
} hm_latch;
void hm_latch_init(hm_latch *l, int64_t count);
/* Lowers the count by n; at zero every waiter wakes. */
void hm_latch_count_down(hm_latch *l, int64_t n);
/* 0 once the count is zero, -ETIMEDOUT, -ECANCELED. */
int hm_latch_wait(hm_latch *l, int64_t deadline);
static inline bool hm_latch_open(hm_latch *l)
{
    return atomic_load_explicit(&l->count, memory_order_acquire) <= 0;
}

/* ---- channels ---------------------------------------------------------- */

/* A bounded FIFO of pointers between coroutines of one loop. */
typedef struct hm_chan hm_chan;
int hm_chan_create(hm_chan **out, size_t capacity);
/* Blocks while full. -EPIPE once closed, -ETIMEDOUT, -ECANCELED. */
int hm_chan_push(hm_chan *ch, void *item, int64_t deadline);
/* Blocks while empty. Items pushed before close are still delivered; then
 * -EPIPE. -ETIMEDOUT, -ECANCELED. */
int hm_chan_pop(hm_chan *ch, void **item, int64_t deadline);
/* Non-blocking variants: -EAGAIN instead of waiting. */
int hm_chan_try_push(hm_chan *ch, void *item);
int hm_chan_try_pop(hm_chan *ch, void **item);
size_t hm_chan_len(const hm_chan *ch);
/* Wakes every waiter; later pushes fail with -EPIPE. */
void hm_chan_close(hm_chan *ch);
/* Frees the channel; no coroutine may be waiting on it. */
void hm_chan_destroy(hm_chan *ch);

/* ---- wait groups ------------------------------------------------------- */

typedef struct hm_waitgroup {
    int64_t count;
    void *waitq_[2]; /* internal: queue of waiting coroutines */
} hm_waitgroup;

void hm_wg_init(hm_waitgroup *wg);
void hm_wg_add(hm_waitgroup *wg, int64_t n);
void hm_wg_done(hm_waitgroup *wg);
/* Blocks until the count reaches zero: 0, -ETIMEDOUT or -ECANCELED. */
int hm_wg_wait(hm_waitgroup *wg, int64_t deadline);

/* ---- events ------------------------------------------------------------ */

/* A condition coroutines of one loop wait for: wait, then re-check what
 * they wait for (a notify wakes every waiter; none is remembered). */
typedef struct hm_event {
    void *waitq_[2];
} hm_event;

void hm_event_init(hm_event *ev);
/* Suspends until notified: 0, -ETIMEDOUT or -ECANCELED. */
int hm_event_wait(hm_event *ev, int64_t deadline);
/* As hm_event_wait, for a coroutine that waits for I/O which callbacks
 * drive (an exchange on a callback reader): an interrupt's STOP leaves it
 * waiting, as it leaves socket operations; ABORT and hm_coro_cancel end
 * it (-ECANCELED). */
int hm_event_wait_io(hm_event *ev, int64_t deadline);
/* Wakes every waiter. */
void hm_event_notify(hm_event *ev);

/* ---- threads ----------------------------------------------------------- */

/* Runs on each engine thread after its loop exists: spawn coroutines here. */
typedef void (*hm_thread_main)(hm_loop *loop, int thread_index, void *arg);

/* Starts `threads` threads, each with its own loop, calls main on each, runs
 * every loop to completion and joins them. Returns the first error. */
int hm_engine_run(int threads, const hm_loop_options *opt, hm_thread_main main, void *arg);

#endif
