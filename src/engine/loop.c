/* The per-thread loop: run ready coroutines, poll the backend, fire timers.
 * Also backend selection and the shared-nothing engine threads. */
#include "engine/internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* ---- features ------------------------------------------------------------ */

static const struct {
    const char *name;
    unsigned bit;
} feature_names[] = {
    {"defer_taskrun", HM__F_DEFER_TASKRUN},
    {"coop_taskrun", HM__F_COOP_TASKRUN},
    {"cqsize", HM__F_CQSIZE},
    {"ring_fd", HM__F_RING_FD},
    {"files", HM__F_FILES},
    {"bufring", HM__F_BUFRING},
    {"bufring_inc", HM__F_BUFRING_INC},
    {"recv_multishot", HM__F_RECV_MULTISHOT},
    {"cqe_skip", HM__F_CQE_SKIP},
    {"guard_madvise", HM__F_GUARD_MADVISE},
};

unsigned hm__features_allowed(void)
{
    unsigned all = 0;
    for (size_t i = 0; i < HM_ARRAY_LEN(feature_names); i++)
        all |= feature_names[i].bit;
    const char *env = getenv("HAMMER_ENGINE_DISABLE");
    if (!env) return all;
    for (size_t i = 0; i < HM_ARRAY_LEN(feature_names); i++) {
        size_t n = strlen(feature_names[i].name);
        for (const char *p = env; (p = strstr(p, feature_names[i].name)); p += n) {
            bool starts = p == env || p[-1] == ',' || p[-1] == ' ';
            bool ends = p[n] == '\0' || p[n] == ',' || p[n] == ' ';
            if (starts && ends) all &= ~feature_names[i].bit;
        }
    }
    return all;
}

const char *hm_loop_features(const hm_loop *loop)
{
    return loop->feat_names;
}

static void name_features(hm_loop *loop)
{
    size_t n = 0;
    loop->feat_names[0] = '\0';
    for (size_t i = 0; i < HM_ARRAY_LEN(feature_names); i++)
        if (loop->feat & feature_names[i].bit && n < sizeof(loop->feat_names))
            n += (size_t)snprintf(loop->feat_names + n, sizeof(loop->feat_names) - n, "%s%s",
                                  n ? " " : "", feature_names[i].name);
}

/* ---- timers: a heap for any deadline, FIFOs for shared durations ---------- */

static void heap_swap(hm_timer **h, size_t a, size_t b)
{
    hm_timer *t = h[a];
    h[a] = h[b];
    h[b] = t;
    h[a]->heap_index_ = a;
    h[b]->heap_index_ = b;
}

static void heap_up(hm_timer **h, size_t i)
{
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (h[parent]->deadline <= h[i]->deadline) break;
        heap_swap(h, i, parent);
        i = parent;
    }
}

static void heap_down(hm_timer **h, size_t len, size_t i)
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

void hm_timer_init(hm_timer *t, hm_timer_fn fn)
{
    memset(t, 0, sizeof(*t));
    t->fn = fn;
    t->heap_index_ = SIZE_MAX;
}

void hm__timer_arm(hm_loop *loop, hm_timer *t, int64_t deadline, hm_timer_fn fn)
{
    if (loop->heap_len == loop->heap_cap) {
        size_t cap = loop->heap_cap ? loop->heap_cap * 2 : 256;
        hm_timer **h = hm_realloc(loop->heap, cap * sizeof(*h));
        if (!h) abort(); /* out of memory while arming a deadline: no safe way on */
        loop->heap = h;
        loop->heap_cap = cap;
    }
    t->deadline = deadline;
    t->fn = fn;
    t->home_ = loop;
    t->heap_index_ = loop->heap_len;
    loop->heap[loop->heap_len++] = t;
    heap_up(loop->heap, t->heap_index_);
}

void hm__timer_disarm(hm_loop *loop, hm_timer *t)
{
    size_t i = t->heap_index_;
    if (i == SIZE_MAX) return;
    t->heap_index_ = SIZE_MAX;
    t->home_ = NULL;
    size_t last = --loop->heap_len;
    if (i == last) return;
    loop->heap[i] = loop->heap[last];
    loop->heap[i]->heap_index_ = i;
    heap_down(loop->heap, loop->heap_len, i);
    heap_up(loop->heap, i);
}

static void timeq_unlink(hm_timeq *q, hm_timer *t)
{
    hm_dlist_remove(&q->timers_, &t->link_);
    t->home_ = NULL;
}

/* The first timer of q (the earliest deadline), or NULL. */
static hm_timer *timeq_head(const hm_timeq *q)
{
    return q->timers_.head ? HM_CONTAINER_OF(q->timers_.head, hm_timer, link_) : NULL;
}

void hm_timer_arm(hm_loop *loop, hm_timer *t, int64_t deadline)
{
    hm_timer_disarm(t);
    hm__timer_arm(loop, t, deadline, t->fn);
}

void hm_timer_disarm(hm_timer *t)
{
    if (!t->home_) return;
    if (t->heap_index_ != SIZE_MAX)
        hm__timer_disarm(t->home_, t);
    else
        timeq_unlink(t->home_, t);
}

void hm_timeq_init(hm_loop *loop, hm_timeq *q, int64_t duration_ns)
{
    memset(q, 0, sizeof(*q));
    q->duration = duration_ns;
    q->loop_ = loop;
    q->next_ = loop->timeqs;
    loop->timeqs = q;
}

void hm_timeq_fini(hm_timeq *q)
{
    while (!hm_dlist_empty(&q->timers_))
        timeq_unlink(q, timeq_head(q));
    for (hm_timeq **pp = &q->loop_->timeqs; *pp; pp = &(*pp)->next_) {
        if (*pp == q) {
            *pp = q->next_;
            break;
        }
    }
}

void hm_timeq_arm(hm_timeq *q, hm_timer *t)
{
    hm_timer_disarm(t);
    /* Now, not the turn's time: a turn that ran long (a busy machine) would
     * otherwise cut the timeout short by as much. The clock is monotonic, so
     * the tail is always the latest deadline. */
    t->deadline = hm_now_ns() + q->duration;
    t->home_ = q;
    hm_dlist_push(&q->timers_, &t->link_);
}

/* The earliest deadline of every armed timer, or INT64_MAX. */
static int64_t next_deadline(const hm_loop *loop)
{
    int64_t d = loop->heap_len ? loop->heap[0]->deadline : INT64_MAX;
    for (const hm_timeq *q = loop->timeqs; q; q = q->next_) {
        const hm_timer *t = timeq_head(q);
        if (t && t->deadline < d) d = t->deadline;
    }
    return d;
}

static void fire_timers(hm_loop *loop)
{
    int64_t now = loop->now = hm_now_ns();
    if (!loop->heap_len && !loop->timeqs) return;
    while (loop->heap_len && loop->heap[0]->deadline <= now) {
        hm_timer *t = loop->heap[0];
        hm__timer_disarm(loop, t);
        t->fn(t);
    }
    for (hm_timeq *q = loop->timeqs; q; q = q->next_) {
        hm_timer *t;
        while ((t = timeq_head(q)) && t->deadline <= now) {
            timeq_unlink(q, t);
            t->fn(t); /* may re-arm t at the tail, or fini q: q stays registered then */
        }
    }
}

/* ---- suspended operations ----------------------------------------------- */

static void op_deadline_fired(hm_timer *t)
{
    hm__op *op = HM_CONTAINER_OF(t, hm__op, deadline);
    if (op->cancel_reason) return;
    op->cancel_reason = -ETIMEDOUT;
    op->cancel(op->co->loop, op);
}

int hm__take_cancel(hm_loop *loop)
{
    hm_coro *co = loop->current;
    if (HM_LIKELY(!co || !co->cancel_pending)) return 0;
    co->cancel_pending = false;
    return -ECANCELED;
}

int64_t hm__op_wait(hm_loop *loop, hm__op *op, int64_t deadline)
{
    hm_coro *co = loop->current;
    co->busy_ops = 0; /* it waits: the others get their turn */
    op->co = co;
    op->cancel_reason = 0;
    op->completed = false;
    op->deadline.heap_index_ = SIZE_MAX;
    op->deadline.home_ = NULL;
    if (deadline > 0) hm__timer_arm(loop, &op->deadline, deadline, op_deadline_fired);
    co->op = op;
    if (HM_UNLIKELY(co->cancel_pending)) {
        /* Cancelled while it was running: end this operation at once (the
         * cancel completes it, or, on io_uring, asks the kernel to). */
        co->cancel_pending = false;
        op->cancel_reason = -ECANCELED;
        op->cancel(loop, op);
    }
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

/* ---- posts: calls from other threads, and deferred local ones ----------- */

void hm_loop_post(hm_loop *loop, hm_post *p)
{
    /* Counted before the post is visible: once it is, the loop may run it
     * and end, and only this count keeps its wake_fd (and the loop) here
     * until the write below is done. */
    atomic_fetch_add_explicit(&loop->posting, 1, memory_order_relaxed);
    hm_post *head = atomic_load_explicit(&loop->inbox, memory_order_relaxed);
    do {
        p->next_ = head;
    } while (!atomic_compare_exchange_weak_explicit(&loop->inbox, &head, p, memory_order_release,
                                                    memory_order_relaxed));
    /* Only the first post into an empty inbox needs to wake the loop: it
     * takes the whole inbox at once. */
    if (!head) {
        uint64_t one = 1;
        if (write(loop->wake_fd, &one, sizeof(one)) < 0) {
            /* EAGAIN: the counter is saturated, so the loop is woken anyway */
        }
    }
    atomic_fetch_sub_explicit(&loop->posting, 1, memory_order_release);
}

void hm__loop_soon(hm_loop *loop, hm_post *p)
{
    p->next_ = NULL;
    if (loop->soon_tail)
        loop->soon_tail->next_ = p;
    else
        loop->soon_head = p;
    loop->soon_tail = p;
}

void hm__loop_drain_inbox(hm_loop *loop)
{
    hm_post *p = atomic_exchange_explicit(&loop->inbox, NULL, memory_order_acquire);
    /* The stack holds the newest first: reverse it so calls run in order. */
    hm_post *fifo = NULL;
    while (p) {
        hm_post *next = p->next_;
        p->next_ = fifo;
        fifo = p;
        p = next;
    }
    while (fifo) {
        hm_post *next = fifo->next_;
        fifo->fn(fifo);
        fifo = next;
    }
}

static void run_soon(hm_loop *loop)
{
    hm_post *p = loop->soon_head;
    loop->soon_head = loop->soon_tail = NULL;
    while (p) {
        hm_post *next = p->next_;
        p->fn(p);
        p = next;
    }
}

/* ---- loops ---------------------------------------------------------------- */

int hm_loop_create(hm_loop **out, const hm_loop_options *opt)
{
    hm_loop_options o = opt ? *opt : (hm_loop_options){0};
    hm_loop *loop = hm_calloc(1, sizeof(*loop));
    if (!loop) return -ENOMEM;
    loop->kind = hm_backend_resolve(o.backend, NULL);
    loop->be = loop->kind == HM_BACKEND_IO_URING ? &hm__backend_uring : &hm__backend_epoll;
    loop->feat = hm__features_allowed();
    size_t ps = 4096;
    size_t ss = o.stack_size ? o.stack_size : HM_DEFAULT_STACK;
    loop->stack_size = ((ss + ps - 1) / ps) * ps + ps; /* + guard page */
    loop->max_stacks = o.max_stacks;
    loop->stack_probe = getenv("HAMMER_STACK_PROBE") != NULL;
    const char *env = getenv("HAMMER_MAX_STACKS");
    long long max = 0;
    if (!loop->max_stacks && env && hm_parse_int(env, 1, 1LL << 30, &max) == 0)
        loop->max_stacks = (size_t)max;
    loop->epfd = -1;
    loop->stop_aborts = o.stop_aborts;
    loop->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int rc = loop->wake_fd < 0 ? -errno : loop->be->init(loop, &o);
    if (rc < 0) {
        if (loop->wake_fd >= 0) close(loop->wake_fd);
        hm_free(loop);
        return rc;
    }
    name_features(loop);
    loop->now = hm_now_ns();
    hm__set_current_loop(loop);
    *out = loop;
    return 0;
}

int64_t hm_loop_now(const hm_loop *loop)
{
    return loop->now;
}

void hm_loop_hold(hm_loop *loop)
{
    loop->holds++;
}

void hm_loop_release(hm_loop *loop)
{
    loop->holds--;
}

int hm_loop_run(hm_loop *loop)
{
    hm__set_current_loop(loop);
    unsigned busy_turns = 0;
    while (loop->live_coros > 0 || loop->holds > 0) {
        int level = atomic_load_explicit(&hm__intr_level, memory_order_relaxed);
        if (HM_UNLIKELY(level != loop->intr_seen)) hm__loop_interrupted(loop, level);
        if (atomic_load_explicit(&loop->inbox, memory_order_relaxed)) hm__loop_drain_inbox(loop);
        if (loop->soon_head) run_soon(loop);
        hm__coro_run_ready(loop);
        if (!loop->live_coros && !loop->holds) break;
        int64_t timeout = -1;
        if (loop->ready_head || loop->soon_head) {
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
            int64_t d = next_deadline(loop);
            if (d != INT64_MAX) {
                timeout = d - hm_now_ns();
                if (timeout < 0) timeout = 0;
            }
        }
        int rc = loop->be->poll(loop, timeout);
        if (rc < 0 && rc != -EINTR && rc != -ETIME) return rc;
        fire_timers(loop);
    }
    return 0;
}

void hm__loop_defer_free(hm_loop *loop, void *p)
{
    if (loop->defer_len == loop->defer_cap) {
        size_t cap = loop->defer_cap ? loop->defer_cap * 2 : 16;
        void **d = hm_realloc(loop->defer_free, cap * sizeof(*d));
        if (!d) return; /* leaked rather than freed under the kernel */
        loop->defer_free = d;
        loop->defer_cap = cap;
    }
    loop->defer_free[loop->defer_len++] = p;
}

void hm_loop_free_later(hm_loop *loop, void *p)
{
    if (!loop) {
        hm_free(p);
        return;
    }
    if (p) hm__loop_defer_free(loop, p);
}

void hm_loop_destroy(hm_loop *loop)
{
    if (!loop) return;
    loop->be->destroy(loop);
    while (loop->defer_len)
        hm_free(loop->defer_free[--loop->defer_len]);
    hm_free(loop->defer_free);
    hm__coro_free_stacks(loop);
    hm_free(loop->heap);
    while (loop->seg_free) {
        hm__seg *seg = loop->seg_free;
        loop->seg_free = seg->next;
        hm_free(seg);
    }
    hm_free(loop->socks);
    hm_free(loop->rbuf);
    /* A poster whose post this loop already ran may still be about to
     * write wake_fd (hm_loop_post): a few instructions, so spin. */
    while (atomic_load_explicit(&loop->posting, memory_order_acquire))
        sched_yield();
    close(loop->wake_fd);
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
