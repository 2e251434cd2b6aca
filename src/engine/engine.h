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
 *   stack buffers are fine). */
#ifndef HM_ENGINE_H
#define HM_ENGINE_H

#include "base/hm_base.h"

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
} hm_loop_stats;

typedef struct hm_loop_options {
    hm_backend_kind backend;
    size_t stack_size;     /* coroutine stack, bytes; 0 = HM_DEFAULT_STACK */
    unsigned ring_entries; /* io_uring SQ size; 0 = 4096 */
    bool stop_aborts;      /* an interrupt's STOP acts as ABORT here: for set-up and
                            * tear-down loops, which have nothing to finish */
} hm_loop_options;

#define HM_DEFAULT_STACK (64 * 1024)

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
/* Runs until every coroutine of the loop has finished. */
int hm_loop_run(hm_loop *loop);
void hm_loop_destroy(hm_loop *loop);
hm_loop *hm_loop_current(void);
hm_backend_kind hm_loop_backend(const hm_loop *loop);
const hm_loop_stats *hm_loop_get_stats(const hm_loop *loop);

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
/* Ends the blocking operation `co` is suspended in (it returns -ECANCELED).
 * Returns -ESRCH when `co` is not suspended in a cancellable operation. */
int hm_coro_cancel(hm_coro *co);
/* Bytes of the stack the calling coroutine may still use (guard excluded). */
size_t hm_coro_stack_left(void);

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
/* Writes all len bytes. Returns len or a negative errno; *sent (optional)
 * says how many bytes were handed to the kernel before the error. */
ssize_t hm_sock_write(hm_sock *s, const void *buf, size_t len, int64_t deadline, size_t *sent);
/* Writes every byte of the vector (same contract as hm_sock_write). */
ssize_t hm_sock_writev(hm_sock *s, const struct iovec *iov, int iovcnt, int64_t deadline,
                       size_t *sent);
/* Closes the socket and frees it. */
void hm_sock_close(hm_sock *s);
/* Closes with SO_LINGER 0, so the peer sees a reset. */
void hm_sock_abort(hm_sock *s);
int hm_sock_fd(const hm_sock *s);
int hm_sock_local_port(const hm_sock *s);

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

/* ---- threads ----------------------------------------------------------- */

/* Runs on each engine thread after its loop exists: spawn coroutines here. */
typedef void (*hm_thread_main)(hm_loop *loop, int thread_index, void *arg);

/* Starts `threads` threads, each with its own loop, calls main on each, runs
 * every loop to completion and joins them. Returns the first error. */
int hm_engine_run(int threads, const hm_loop_options *opt, hm_thread_main main, void *arg);

#endif
