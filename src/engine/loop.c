/* The per-thread loop: run ready coroutines, poll the backend, fire timers.
 * Also backend selection and the shared-nothing engine threads. */
#include "engine/internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- timer heap ---------------------------------------------------------- */

static void heap_swap(hm__timer **h, size_t a, size_t b)
{
    hm__timer *t = h[a];
    h[a] = h[b];
    h[b] = t;
    h[a]->heap_index = a;
    h[b]->heap_index = b;
}

static void heap_up(hm__timer **h, size_t i)
{
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (h[parent]->deadline <= h[i]->deadline) break;
        heap_swap(h, i, parent);
        i = parent;
    }
}

static void heap_down(hm__timer **h, size_t len, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < len && h[l]->deadline < h[m]->deadline) m = l;
        if (r < len && h[r]->deadline < h[m]->deadline) m = r;
        if (m == i) return;
        heap_swap(h, i, m);
        i = m;
    }
}

void hm__timer_arm(hm_loop *loop, hm__timer *t, int64_t deadline, hm__timer_cb cb)
{
    if (loop->heap_len == loop->heap_cap) {
        size_t cap = loop->heap_cap ? loop->heap_cap * 2 : 256;
        hm__timer **h = hm_realloc(loop->heap, cap * sizeof(*h));
        if (!h) abort(); /* out of memory while arming a deadline: no safe way on */
        loop->heap = h;
        loop->heap_cap = cap;
    }
    t->deadline = deadline;
    t->cb = cb;
    t->heap_index = loop->heap_len;
    loop->heap[loop->heap_len++] = t;
    heap_up(loop->heap, t->heap_index);
}

void hm__timer_disarm(hm_loop *loop, hm__timer *t)
{
    size_t i = t->heap_index;
    if (i == SIZE_MAX) return;
    t->heap_index = SIZE_MAX;
    size_t last = --loop->heap_len;
    if (i == last) return;
    loop->heap[i] = loop->heap[last];
    loop->heap[i]->heap_index = i;
    heap_down(loop->heap, loop->heap_len, i);
    heap_up(loop->heap, i);
}

static void fire_timers(hm_loop *loop)
{
    if (!loop->heap_len) return;
    int64_t now = hm_now_ns();
    while (loop->heap_len && loop->heap[0]->deadline <= now) {
        hm__timer *t = loop->heap[0];
        hm__timer_disarm(loop, t);
        t->cb(t);
    }
}

/* ---- suspended operations ----------------------------------------------- */

static void op_deadline_fired(hm__timer *t)
{
    hm__op *op = HM_CONTAINER_OF(t, hm__op, deadline);
    if (op->cancel_reason) return;
    op->cancel_reason = -ETIMEDOUT;
    op->cancel(op->co->loop, op);
}

int64_t hm__op_wait(hm_loop *loop, hm__op *op, int64_t deadline)
{
    hm_coro *co = loop->current;
    co->busy_ops = 0; /* it waits: the others get their turn */
    op->co = co;
    op->cancel_reason = 0;
    op->completed = false;
    op->deadline.heap_index = SIZE_MAX;
    if (deadline > 0) hm__timer_arm(loop, &op->deadline, deadline, op_deadline_fired);
    co->op = op;
    hm__coro_suspend(loop);
    co->op = NULL;
    hm__timer_disarm(loop, &op->deadline);
    return op->res;
}

void hm__op_complete(hm_loop *loop, hm__op *op, int64_t res)
{
    if (op->completed) return;
    op->completed = true;
    /* A cancelled io_uring op reports -ECANCELED (or -EINTR); what the caller
     * needs to see is why it was cancelled. */
    if (op->cancel_reason && (res == -ECANCELED || res == -EINTR)) res = op->cancel_reason;
    op->res = res;
    hm__coro_ready(loop, op->co);
}

/* ---- backend selection ------------------------------------------------- */

int hm_io_uring_probe(const char **why)
{
    const char *reason = NULL;
    FILE *f = fopen("/proc/sys/kernel/io_uring_disabled", "r");
    if (f) {
        int v = 0;
        if (fscanf(f, "%d", &v) == 1 && v == 2) reason = "kernel.io_uring_disabled=2";
        fclose(f);
    }
    if (reason) {
        if (why) *why = reason;
        return -EPERM;
    }
    struct io_uring ring;
    int rc = io_uring_queue_init(8, &ring, 0);
    if (rc < 0) {
        if (why)
            *why = rc == -ENOSYS  ? "io_uring_setup is not implemented (kernel or seccomp)"
                   : rc == -EPERM ? "io_uring_setup is not permitted (seccomp or sysctl)"
                                  : "io_uring_setup failed";
        return rc;
    }
    struct io_uring_probe *probe = io_uring_get_probe_ring(&ring);
    if (probe) {
        static const int needed[] = {IORING_OP_CONNECT, IORING_OP_ACCEPT, IORING_OP_RECV,
                                     IORING_OP_SENDMSG, IORING_OP_ASYNC_CANCEL};
        for (size_t i = 0; i < HM_ARRAY_LEN(needed); i++) {
            if (!io_uring_opcode_supported(probe, needed[i])) {
                reason = "the kernel's io_uring lacks a needed operation";
                rc = -EOPNOTSUPP;
            }
        }
        io_uring_free_probe(probe);
    }
    io_uring_queue_exit(&ring);
    if (why) *why = reason;
    return rc;
}

hm_backend_kind hm_backend_resolve(hm_backend_kind want, const char **why_fallback)
{
    if (why_fallback) *why_fallback = NULL;
    if (want != HM_BACKEND_AUTO) return want;
    const char *why = NULL;
    if (hm_io_uring_probe(&why) == 0) return HM_BACKEND_IO_URING;
    if (why_fallback) *why_fallback = why;
    return HM_BACKEND_EPOLL;
}

const char *hm_backend_name(hm_backend_kind k)
{
    switch (k) {
    case HM_BACKEND_IO_URING:
        return "io_uring";
    case HM_BACKEND_EPOLL:
        return "epoll";
    default:
        return "auto";
    }
}

int hm_backend_parse(const char *s, hm_backend_kind *out)
{
    if (!strcmp(s, "auto"))
        *out = HM_BACKEND_AUTO;
    else if (!strcmp(s, "io_uring") || !strcmp(s, "uring"))
        *out = HM_BACKEND_IO_URING;
    else if (!strcmp(s, "epoll"))
        *out = HM_BACKEND_EPOLL;
    else
        return -EINVAL;
    return 0;
}

/* ---- loops ---------------------------------------------------------------- */

int hm_loop_create(hm_loop **out, const hm_loop_options *opt)
{
    hm_loop_options o = opt ? *opt : (hm_loop_options){0};
    hm_loop *loop = hm_calloc(1, sizeof(*loop));
    if (!loop) return -ENOMEM;
    loop->kind = hm_backend_resolve(o.backend, NULL);
    loop->be = loop->kind == HM_BACKEND_IO_URING ? &hm__backend_uring : &hm__backend_epoll;
    size_t ps = 4096;
    size_t ss = o.stack_size ? o.stack_size : HM_DEFAULT_STACK;
    loop->stack_size = ((ss + ps - 1) / ps) * ps + ps; /* + guard page */
    loop->stack_pool = hm_calloc(256, sizeof(void *));
    loop->epfd = -1;
    loop->stop_aborts = o.stop_aborts;
    int rc =
        loop->stack_pool ? loop->be->init(loop, o.ring_entries ? o.ring_entries : 4096) : -ENOMEM;
    if (rc < 0) {
        hm_free(loop->stack_pool);
        hm_free(loop);
        return rc;
    }
    hm__set_current_loop(loop);
    *out = loop;
    return 0;
}

int hm_loop_run(hm_loop *loop)
{
    hm__set_current_loop(loop);
    unsigned busy_turns = 0;
    while (loop->live_coros > 0) {
        int level = atomic_load_explicit(&hm__intr_level, memory_order_relaxed);
        if (HM_UNLIKELY(level != loop->intr_seen)) hm__loop_interrupted(loop, level);
        hm__coro_run_ready(loop);
        if (!loop->live_coros) break;
        int64_t timeout = -1;
        if (loop->ready_head) {
            /* Coroutines that only yield need no system call per turn, but
             * I/O must not starve: poll at least every 16th busy turn, and
             * whenever SQEs wait to be submitted. */
            if (++busy_turns % 16 && !loop->be->has_pending(loop)) {
                fire_timers(loop);
                continue;
            }
            timeout = 0;
        } else {
            busy_turns = 0;
            if (loop->heap_len) {
                timeout = loop->heap[0]->deadline - hm_now_ns();
                if (timeout < 0) timeout = 0;
            }
        }
        int rc = loop->be->poll(loop, timeout);
        if (rc < 0 && rc != -EINTR && rc != -ETIME) return rc;
        fire_timers(loop);
    }
    return 0;
}

void hm_loop_destroy(hm_loop *loop)
{
    if (!loop) return;
    loop->be->destroy(loop);
    hm__coro_free_stacks(loop);
    hm_free(loop->stack_pool);
    hm_free(loop->heap);
    if (hm_loop_current() == loop) hm__set_current_loop(NULL);
    hm_free(loop);
}

hm_backend_kind hm_loop_backend(const hm_loop *loop)
{
    return loop->kind;
}
const hm_loop_stats *hm_loop_get_stats(const hm_loop *loop)
{
    return &loop->stats;
}

/* ---- engine threads ------------------------------------------------------- */

typedef struct {
    pthread_t tid;
    int index;
    int rc;
    const hm_loop_options *opt;
    hm_thread_main main;
    void *arg;
} engine_thread;

static void *engine_thread_run(void *p)
{
    engine_thread *t = p;
    hm_loop *loop;
    t->rc = hm_loop_create(&loop, t->opt);
    if (t->rc < 0) return NULL;
    t->main(loop, t->index, t->arg);
    t->rc = hm_loop_run(loop);
    hm_loop_destroy(loop);
    return NULL;
}

int hm_engine_run(int threads, const hm_loop_options *opt, hm_thread_main main, void *arg)
{
    if (threads < 1) return -EINVAL;
    hm_loop_options o = opt ? *opt : (hm_loop_options){0};
    /* Probe once, so every thread uses the same backend. */
    o.backend = hm_backend_resolve(o.backend, NULL);
    engine_thread *ts = hm_calloc((size_t)threads, sizeof(*ts));
    if (!ts) return -ENOMEM;
    int rc = 0, started = 0;
    for (int i = 0; i < threads; i++) {
        ts[i] = (engine_thread){.index = i, .opt = &o, .main = main, .arg = arg};
        int e = pthread_create(&ts[i].tid, NULL, engine_thread_run, &ts[i]);
        if (e) {
            rc = -e;
            break;
        }
        started++;
    }
    for (int i = 0; i < started; i++) {
        pthread_join(ts[i].tid, NULL);
        if (!rc && ts[i].rc < 0) rc = ts[i].rc;
    }
    hm_free(ts);
    return rc;
}
