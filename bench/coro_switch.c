/* Coroutine switch cost.
 *   raw:   two contexts ping-pong through hm__ctx_switch only (the asm);
 *   yield: two coroutines alternate with hm_coro_yield(), which is what
 *          scenarios pay: coroutine -> loop -> next coroutine (2 switches
 *          plus the run queue).
 * Reported per switch, median and range over rounds. */
#include "bench_util.h"
#include "engine/engine.h"

#include <stdint.h>
#include <sys/mman.h>

void hm__ctx_switch(void **from_sp, void *to_sp);
void hm__ctx_start(void);

#define ROUNDS 11
#define RAW_ITERS 20000000L
#define YIELD_ITERS 5000000L

static void *main_sp, *co_sp;
static volatile long counter;

static void raw_entry(void *arg)
{
    for (;;) {
        counter++;
        hm__ctx_switch(&co_sp, main_sp);
    }
}

/* Mirrors the layout hm__ctx_make builds in coro.c (x86-64 only here). */
static void *make_stack(void (*fn)(void *))
{
    size_t size = 64 * 1024;
    char *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uintptr_t sp = ((uintptr_t)(mem + size)) & ~(uintptr_t)15;
#if defined(__x86_64__)
    void **frame = (void **)(sp - 7 * sizeof(void *));
    frame[0] = frame[1] = frame[4] = frame[5] = NULL;
    frame[2] = (void *)fn;
    frame[3] = NULL;
    frame[6] = (void *)hm__ctx_start;
    return frame;
#elif defined(__aarch64__)
    void **frame = (void **)(sp - 160);
    for (int i = 0; i < 20; i++)
        frame[i] = NULL;
    frame[1] = (void *)fn;
    frame[11] = (void *)hm__ctx_start;
    return frame;
#endif
}

static void yielder(void *arg)
{
    long n = (long)(intptr_t)arg;
    for (long i = 0; i < n; i++)
        hm_coro_yield();
}

int main(void)
{
    double raw[ROUNDS], yield[ROUNDS];
    co_sp = make_stack(raw_entry);
    for (int r = 0; r < ROUNDS; r++) {
        int64_t t0 = hm_now_ns();
        for (long i = 0; i < RAW_ITERS; i++)
            hm__ctx_switch(&main_sp, co_sp);
        int64_t t1 = hm_now_ns();
        raw[r] = (double)(t1 - t0) / (RAW_ITERS * 2.0); /* two switches per iteration */

        hm_loop *loop;
        hm_loop_options lo = {.backend = HM_BACKEND_EPOLL};
        hm_loop_create(&loop, &lo);
        hm_coro_spawn(loop, yielder, (void *)(intptr_t)YIELD_ITERS, NULL);
        hm_coro_spawn(loop, yielder, (void *)(intptr_t)YIELD_ITERS, NULL);
        t0 = hm_now_ns();
        hm_loop_run(loop);
        t1 = hm_now_ns();
        uint64_t switches = hm_loop_get_stats(loop)->switches;
        hm_loop_destroy(loop);
        /* Each resume is one switch in and one out. */
        yield[r] = (double)(t1 - t0) / ((double)switches * 2.0);
    }
    print_median("raw context switch", raw, ROUNDS, "ns/switch");
    print_median("hm_coro_yield (via the loop)", yield, ROUNDS, "ns/switch");
    return 0;
}
