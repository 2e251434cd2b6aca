/* Coroutine switching, yield order, sleep order and cancellation, stack
 * use, and stack recycling: 100k short coroutines map no more stacks than
 * the 100 that run at once (the loop's count of mapped stacks; how they are
 * mapped is test_engine_stacks.c's). */
#include "engine_test_util.h"

#include <unistd.h>

static char trace[64];
static size_t trace_len;
static void mark(char c)
{
    trace[trace_len++] = c;
}

static void yielder(void *arg)
{
    char c = *(char *)arg;
    for (int i = 0; i < 3; i++) {
        mark(c);
        hm_coro_yield();
    }
}

static void sleeper(void *arg)
{
    int ms = *(int *)arg;
    int64_t t0 = hm_now_ns();
    ASSERT_EQ(hm_coro_sleep((int64_t)ms * 1000000), 0);
    ASSERT_GE(hm_now_ns() - t0, (int64_t)ms * 1000000);
    mark((char)('0' + ms / 10));
}

static int cancelled_result = 1;
static void long_sleeper(void *arg)
{
    int64_t t0 = hm_now_ns();
    cancelled_result = hm_coro_sleep(10LL * 1000000000);
    ASSERT_LT(hm_now_ns() - t0, 10LL * 1000000000); /* woke by the cancel, before the 10 s */
}

static void canceller(void *arg)
{
    hm_coro *victim = arg;
    hm_coro_sleep(5 * 1000000);
    ASSERT_EQ(hm_coro_cancel(victim), 0);
}

/* Uses stack to check the 64 KiB default is usable; each frame's pad is
 * read after the call, so the compiler cannot make a loop of it. */
__attribute__((noinline)) static int deep(int n)
{
    volatile char pad[1024];
    pad[n % 1024] = (char)n;
    if (n == 0) return 0;
    int r = deep(n - 1);
    return r + 1 + (pad[n % 1024] != (char)n);
}

static void stack_user(void *arg)
{
    size_t before = hm_coro_stack_left();
    ASSERT_GT(before, 60 * 1024);
    ASSERT_EQ(deep(40), 40);
    *(int *)arg = 1;
}

static int spawned_inside;
static void child(void *arg)
{
    spawned_inside++;
}
static void parent(void *arg)
{
    for (int i = 0; i < 1000; i++)
        ASSERT_EQ(hm_coro_spawn(NULL, child, NULL, NULL), 0);
    ASSERT_EQ(spawned_inside, 0); /* children start at the next turn */
    hm_coro_yield();
    ASSERT_EQ(spawned_inside, 1000);
}

int main(int argc, char **argv)
{
    hm_loop_options o = test_loop_options(argc, argv);
    hm_loop *loop;
    ASSERT_EQ(hm_loop_create(&loop, &o), 0);
    ASSERT_EQ(hm_loop_backend(loop), o.backend);

    /* Round-robin: each yield lets every other ready coroutine run once. */
    char a = 'a', b = 'b', c = 'c';
    hm_coro_spawn(loop, yielder, &a, NULL);
    hm_coro_spawn(loop, yielder, &b, NULL);
    hm_coro_spawn(loop, yielder, &c, NULL);
    ASSERT_EQ(hm_loop_run(loop), 0);
    trace[trace_len] = 0;
    ASSERT_STREQ(trace, "abcabcabc");

    /* Sleeps wake in deadline order, not spawn order. */
    trace_len = 0;
    int ms[] = {30, 10, 20};
    for (int i = 0; i < 3; i++)
        hm_coro_spawn(loop, sleeper, &ms[i], NULL);
    ASSERT_EQ(hm_loop_run(loop), 0);
    trace[trace_len] = 0;
    ASSERT_STREQ(trace, "123");

    /* A cancelled sleep returns -ECANCELED at once. */
    hm_coro *victim;
    hm_coro_spawn(loop, long_sleeper, NULL, &victim);
    hm_coro_spawn(loop, canceller, victim, NULL);
    ASSERT_EQ(hm_loop_run(loop), 0);
    ASSERT_EQ(cancelled_result, -ECANCELED);

    int ok = 0;
    hm_coro_spawn(loop, stack_user, &ok, NULL);
    hm_coro_spawn(loop, parent, NULL, NULL);
    ASSERT_EQ(hm_loop_run(loop), 0);
    ASSERT_EQ(ok, 1);
    ASSERT_EQ(spawned_inside, 1000);

    /* Stacks are recycled: after a first round of 100 at once, 100k more
     * (100 at a time) map no new stacks. */
    spawned_inside = 0;
    uint64_t spawned0 = hm_loop_get_stats(loop)->coros_spawned;
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(hm_coro_spawn(loop, child, NULL, NULL), 0);
    ASSERT_EQ(hm_loop_run(loop), 0);
    int stacks = (int)hm_loop_get_stats(loop)->stacks_mapped;
    ASSERT_GE(stacks, 100); /* the count sees them: 100 ran at once */
    for (int round = 0; round < 1000; round++) {
        for (int i = 0; i < 100; i++)
            ASSERT_EQ(hm_coro_spawn(loop, child, NULL, NULL), 0);
        ASSERT_EQ(hm_loop_run(loop), 0);
    }
    ASSERT_EQ(spawned_inside, 100100);
    ASSERT_EQ(hm_loop_get_stats(loop)->coros_spawned - spawned0, 100100);
    int after = (int)hm_loop_get_stats(loop)->stacks_mapped;
    printf("stacks mapped: %d after 100 coroutines, %d after 100k more\n", stacks, after);
    ASSERT_LE(after, stacks);
    hm_loop_destroy(loop);
    printf("coroutine tests passed\n");
    return 0;
}
