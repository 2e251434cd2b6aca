/* Stackful coroutines: stacks, the context switch glue and the run queue.
 *
 * Each coroutine lives at the top of its own mmap'd stack, with a PROT_NONE
 * guard page at the bottom so an overflow faults instead of corrupting a
 * neighbour. Switching is asymmetric: a coroutine always switches back to
 * its loop's stack, and the loop picks the next one. */
#include "engine/internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef HM_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef HM_TSAN
/* Without fibers, TSan sees one stack per thread: every switch would look
 * like a wild jump and its shadow stack would grow without bound. Each
 * coroutine is a TSan fiber; a switch (default flags) orders the two
 * sides, as the single thread that runs both does. */
#include <sanitizer/tsan_interface.h>
#endif

void hm__ctx_switch(void **from_sp, void *to_sp);
void hm__ctx_start(void);
void hm__call_on_stack(void *sp, void (*fn)(void *), void *arg);

static __thread hm_loop *tl_loop;

hm_loop *hm_loop_current(void)
{
    return tl_loop;
}
void hm__set_current_loop(hm_loop *loop)
{
    tl_loop = loop;
}

hm_coro *hm_coro_self(void)
{
    return tl_loop ? tl_loop->current : NULL;
}

static size_t page_size(void)
{
    /* Engine threads fill the cache at once; every one stores the same
     * value, and the relaxed atomic makes that a defined race (TSan). */
    static _Atomic size_t ps;
    size_t v = atomic_load_explicit(&ps, memory_order_relaxed);
    if (!v) {
        v = (size_t)sysconf(_SC_PAGESIZE);
        atomic_store_explicit(&ps, v, memory_order_relaxed);
    }
    return v;
}

/* Lays out a fresh stack so that the first switch to it "returns" into
 * hm__ctx_start with the entry function and its argument in the registers
 * the assembly expects. */
static void *ctx_make(void *top, void (*fn)(void *), void *arg)
{
    uintptr_t sp = (uintptr_t)top & ~(uintptr_t)15;
#if defined(__x86_64__)
    /* After the six pops and ret, rsp must be 16-aligned so that the call
     * in hm__ctx_start leaves the ABI's rsp % 16 == 8 at the callee. */
    void **frame = (void **)(sp - 7 * sizeof(void *));
    frame[0] = NULL;       /* r15 */
    frame[1] = NULL;       /* r14 */
    frame[2] = (void *)fn; /* r13 */
    frame[3] = arg;        /* r12 */
    frame[4] = NULL;       /* rbx */
    frame[5] = NULL;       /* rbp: ends frame-pointer walks */
    frame[6] = (void *)hm__ctx_start;
    return frame;
#elif defined(__aarch64__)
    void **frame = (void **)(sp - 160);
    memset(frame, 0, 160);
    frame[0] = arg;                    /* x19 */
    frame[1] = (void *)fn;             /* x20 */
    frame[11] = (void *)hm__ctx_start; /* x30 (lr) */
    return frame;
#endif
}

/* Stacks per slab: one mapping (and, with madvise'd guards, one VMA) for
 * this many coroutines instead of two VMAs each. */
#define SLAB_STACKS 32
/* Free stacks kept with their pages; beyond this many, a freed stack's
 * pages go back to the kernel (its guard stays). */
#define KEEP_WARM 256

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102 /* Linux 6.13: a guard page that splits no VMA */
#endif

static bool free_push(hm_loop *loop, void *stack)
{
    if (loop->stack_free_len == loop->stack_free_cap) {
        size_t cap = loop->stack_free_cap ? loop->stack_free_cap * 2 : 64;
        void **f = hm_realloc(loop->stack_free, cap * sizeof(*f));
        if (!f) return false;
        loop->stack_free = f;
        loop->stack_free_cap = cap;
    }
    loop->stack_free[loop->stack_free_len++] = stack;
    return true;
}

/* Maps a slab and puts its stacks on the free list, guards installed. */
static int slab_add(hm_loop *loop)
{
    size_t ss = loop->stack_size, n = SLAB_STACKS;
    hm__slab *slab = hm_alloc(sizeof(*slab));
    if (!slab) return -ENOMEM;
    char *mem = mmap(NULL, n * ss, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (mem == MAP_FAILED) {
        hm_free(slab);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        char *guard = mem + i * ss; /* stacks grow down: the guard is lowest */
        int rc = -1;
        if (loop->feat & HM__F_GUARD_MADVISE) {
            rc = madvise(guard, page_size(), MADV_GUARD_INSTALL);
            if (rc != 0) loop->feat &= ~HM__F_GUARD_MADVISE; /* before 6.13: mprotect */
        }
        if (rc != 0 && mprotect(guard, page_size(), PROT_NONE) != 0) {
            munmap(mem, n * ss);
            hm_free(slab);
            return -ENOMEM;
        }
    }
    if (loop->stack_free_cap < loop->stack_free_len + n) {
        void **f = hm_realloc(loop->stack_free, (loop->stack_free_len + n) * 2 * sizeof(*f));
        if (!f) {
            munmap(mem, n * ss);
            hm_free(slab);
            return -ENOMEM;
        }
        loop->stack_free = f;
        loop->stack_free_cap = (loop->stack_free_len + n) * 2;
    }
    /* Lowest address last: the LIFO hands out neighbouring stacks first. */
    for (size_t i = n; i-- > 0;)
        loop->stack_free[loop->stack_free_len++] = mem + i * ss;
    slab->base = mem;
    slab->size = n * ss;
    loop->stats.stacks_mapped += n;
    slab->next = loop->slabs;
    loop->slabs = slab;
    return 0;
}

static void *stack_get(hm_loop *loop)
{
    if (loop->max_stacks && loop->stacks_used >= loop->max_stacks) return NULL;
    if (!loop->stack_free_len && slab_add(loop) < 0) return NULL;
    loop->stacks_used++;
    return loop->stack_free[--loop->stack_free_len];
}

/* HAMMER_STACK_PROBE: how many of the stack's pages are resident as its
 * coroutine ends, i.e. how deep it went (or an earlier user of a warm
 * stack: an upper bound). One mincore per coroutine, only when asked. */
static void stack_probe(hm_loop *loop, void *stack)
{
    size_t ps = page_size(), n = (loop->stack_size - ps) / ps;
    unsigned char vec[256];
    if (n > sizeof(vec) || mincore((char *)stack + ps, n * ps, vec) < 0) return;
    size_t res = 0;
    for (size_t i = 0; i < n; i++)
        res += vec[i] & 1;
    loop->probe_stacks++;
    loop->probe_pages += res;
    if (res > loop->probe_max) loop->probe_max = res;
    if (res > 1) loop->probe_deep++;
}

static void stack_put(hm_loop *loop, void *stack)
{
    loop->stacks_used--;
    if (HM_UNLIKELY(loop->stack_probe)) stack_probe(loop, stack);
    if (loop->stack_free_len >= KEEP_WARM) {
        /* Many coroutines ended at once: let their pages go. The guard
         * survives (madvise'd guards are kept by MADV_DONTNEED). */
        madvise((char *)stack + page_size(), loop->stack_size - page_size(), MADV_DONTNEED);
    }
    if (!free_push(loop, stack)) {
        /* No memory to remember it: the stack stays mapped in its slab,
         * unused until the loop ends. */
    }
}

void hm__coro_free_stacks(hm_loop *loop)
{
    if (loop->stack_probe && loop->probe_stacks)
        fprintf(stderr,
                "hammer: stack probe: %zu coroutines ended, %.1f KiB of stack touched each on "
                "average, %.1f KiB at most, of %zu KiB; %zu past one page\n",
                loop->probe_stacks,
                (double)loop->probe_pages * (double)page_size() / 1024.0 /
                    (double)loop->probe_stacks,
                (double)loop->probe_max * (double)page_size() / 1024.0,
                (loop->stack_size - page_size()) / 1024, loop->probe_deep);
#ifdef HM_TSAN
    /* Coroutines still suspended when the loop goes: their fibers go too. */
    for (hm_coro *co = loop->live_head; co; co = co->live_next)
        __tsan_destroy_fiber(co->tsan_fiber);
#endif
    while (loop->slabs) {
        hm__slab *slab = loop->slabs;
        loop->slabs = slab->next;
        munmap(slab->base, slab->size);
        hm_free(slab);
    }
    hm_free(loop->stack_free);
    loop->stack_free = NULL;
    loop->stack_free_len = loop->stack_free_cap = 0;
}

static void coro_entry(void *p)
{
    hm_coro *co = p;
    hm_loop *loop = co->loop;
#ifdef HM_ASAN
    __sanitizer_finish_switch_fiber(NULL, &loop->main_stack_bottom, &loop->main_stack_size);
#endif
    co->fn(co->arg);
    co->state = HM__CORO_DONE;
    loop->live_coros--;
    if (co->live_prev)
        co->live_prev->live_next = co->live_next;
    else
        loop->live_head = co->live_next;
    if (co->live_next) co->live_next->live_prev = co->live_prev;
    if (co->task) {
        hm_task *t = co->task;
        t->co = NULL;
        t->done = true;
        hm_event_notify((hm_event *)(void *)t->waitq_);
    }
    hm__coro_suspend(loop); /* never comes back: the loop recycles the stack */
    __builtin_unreachable();
}

int hm_coro_spawn(hm_loop *loop, hm_coro_fn fn, void *arg, hm_coro **out)
{
    if (!loop) loop = tl_loop;
    if (!loop || !fn) return -EINVAL;
    void *stack = stack_get(loop);
    if (!stack) return -ENOMEM;
    /* The coroutine record sits at the top of its own stack: no malloc. */
    char *top = (char *)stack + loop->stack_size;
    hm_coro *co = (hm_coro *)(((uintptr_t)top - sizeof(hm_coro)) & ~(uintptr_t)63);
    memset(co, 0, sizeof(*co));
    co->loop = loop;
    co->fn = fn;
    co->arg = arg;
    co->stack = stack;
    co->stack_size = loop->stack_size;
    co->sp = ctx_make(co, coro_entry, co);
#ifdef HM_TSAN
    co->tsan_fiber = __tsan_create_fiber(0);
#endif
    co->live_next = loop->live_head;
    if (loop->live_head) loop->live_head->live_prev = co;
    loop->live_head = co;
    loop->live_coros++;
    loop->stats.coros_spawned++;
    co->state = HM__CORO_SUSPENDED;
    hm__coro_ready(loop, co);
    if (out) *out = co;
    return 0;
}

int hm_task_spawn(hm_task *t, hm_loop *loop, hm_coro_fn fn, void *arg)
{
    t->co = NULL;
    t->done = false;
    hm_event_init((hm_event *)(void *)t->waitq_);
    int rc = hm_coro_spawn(loop, fn, arg, &t->co);
    if (rc < 0) {
        t->done = true;
        return rc;
    }
    t->co->task = t;
    return 0;
}

int hm_task_join(hm_task *t, int64_t deadline)
{
    while (!t->done) {
        int rc = hm_event_wait((hm_event *)(void *)t->waitq_, deadline);
        if (rc < 0 && !t->done) return rc;
    }
    return 0;
}

int hm_task_cancel(hm_task *t)
{
    return t->done ? 0 : hm_coro_cancel(t->co);
}

void hm__coro_ready(hm_loop *loop, hm_coro *co)
{
    if (co->state == HM__CORO_READY || co->state == HM__CORO_DONE) return;
    co->state = HM__CORO_READY;
    co->next_ready = NULL;
    if (loop->ready_tail)
        loop->ready_tail->next_ready = co;
    else
        loop->ready_head = co;
    loop->ready_tail = co;
}

static void coro_resume(hm_loop *loop, hm_coro *co)
{
    co->state = HM__CORO_RUNNING;
    loop->current = co;
    loop->stats.switches++;
#ifdef HM_ASAN
    size_t usable = co->stack_size - page_size();
    __sanitizer_start_switch_fiber(&loop->asan_fake_stack, (char *)co->stack + page_size(), usable);
#endif
#ifdef HM_TSAN
    loop->tsan_sched_fiber = __tsan_get_current_fiber();
    __tsan_switch_to_fiber(co->tsan_fiber, 0);
#endif
    hm__ctx_switch(&loop->sched_sp, co->sp);
#ifdef HM_ASAN
    __sanitizer_finish_switch_fiber(loop->asan_fake_stack, NULL, NULL);
#endif
    loop->current = NULL;
    if (co->state == HM__CORO_DONE) {
#ifdef HM_TSAN
        __tsan_destroy_fiber(co->tsan_fiber); /* back on the loop's fiber: safe */
#endif
        stack_put(loop, co->stack);
    }
}

void hm__coro_suspend(hm_loop *loop)
{
    hm_coro *co = loop->current;
    if (co->state == HM__CORO_RUNNING) co->state = HM__CORO_SUSPENDED;
#ifdef HM_ASAN
    __sanitizer_start_switch_fiber(co->state == HM__CORO_DONE ? NULL : &co->asan_fake_stack,
                                   loop->main_stack_bottom, loop->main_stack_size);
#endif
#ifdef HM_TSAN
    __tsan_switch_to_fiber(loop->tsan_sched_fiber, 0);
#endif
    hm__ctx_switch(&co->sp, loop->sched_sp);
#ifdef HM_ASAN
    __sanitizer_finish_switch_fiber(co->asan_fake_stack, NULL, NULL);
#endif
}

void hm__coro_run_ready(hm_loop *loop)
{
    /* Run only what was ready when the pass began, so coroutines that keep
     * yielding cannot starve I/O polling. */
    hm_coro *co = loop->ready_head;
    loop->ready_head = loop->ready_tail = NULL;
    while (co) {
        hm_coro *next = co->next_ready;
        coro_resume(loop, co);
        co = next;
    }
}

void hm_coro_yield(void)
{
    hm_loop *loop = tl_loop;
    if (!loop || !loop->current) return;
    hm__coro_ready(loop, loop->current);
    hm__coro_suspend(loop);
}

static void sleep_cancel(hm_loop *loop, hm__op *op)
{
    hm__op_complete(loop, op, op->cancel_reason);
}

int hm_coro_sleep_until(int64_t deadline_ns)
{
    hm_loop *loop = tl_loop;
    if (!loop || !loop->current) return -EPERM;
    if (hm__take_cancel(loop)) return -ECANCELED;
    if (HM_UNLIKELY(loop->aborted)) {
        hm_coro_yield(); /* whoever polls with sleeps still lets the others run */
        return -ECANCELED;
    }
    hm__op op = {.cancel = sleep_cancel, .soft = true};
    if (deadline_ns <= 0) deadline_ns = 1; /* 0 means "none" to op_wait */
    int64_t r = hm__op_wait(loop, &op, deadline_ns);
    return r == -ETIMEDOUT ? 0 : (int)r;
}

int hm_coro_sleep(int64_t ns)
{
    return hm_coro_sleep_until(hm_now_ns() + (ns > 0 ? ns : 0));
}

int hm_coro_cancel(hm_coro *co)
{
    if (!co || co->state == HM__CORO_DONE) return -ESRCH;
    hm__op *op = co->op;
    if (co->state != HM__CORO_SUSPENDED || !op || op->completed) {
        /* Running, or ready to run (its operation has its result): the
         * cancel waits for its next blocking operation. */
        co->cancel_pending = true;
        return 0;
    }
    if (op->cancel_reason) return 0; /* already being cancelled */
    op->cancel_reason = -ECANCELED;
    op->cancel(co->loop, op);
    return 0;
}

void hm_call_on_loop_stack(void (*fn)(void *), void *arg)
{
    hm_loop *loop = tl_loop;
#ifndef HM_SANITIZE
    /* While a coroutine runs, the loop's own stack is idle below the point
     * where the scheduler switched away (sched_sp): deep work that does not
     * suspend runs there, so it touches the thread's stack pages, shared by
     * every coroutine, instead of each coroutine's own. (Under the
     * sanitizers, which track stack bounds, it just runs here.) */
    if (loop && loop->current && !loop->on_loop_stack) {
        loop->on_loop_stack = true;
        uintptr_t sp = ((uintptr_t)loop->sched_sp - 256) & ~(uintptr_t)15;
        hm__call_on_stack((void *)sp, fn, arg);
        loop->on_loop_stack = false;
        return;
    }
#endif
    (void)loop;
    fn(arg);
}

size_t hm_coro_stack_left(void)
{
    hm_coro *co = hm_coro_self();
    if (!co) return 0;
    char here;
    return (size_t)(&here - ((char *)co->stack + page_size()));
}
