/* Coroutine switching, yield order, sleep order and cancellation. */
#include "engine_test_util.h"

static char trace[64];
static size_t trace_len;
static void mark(char c) { trace[trace_len++] = c; }

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
    ASSERT_LT(hm_now_ns() - t0, 1000000000); /* woke long before 10 s */
}

static void canceller(void *arg)
{
    hm_coro *victim = arg;
    hm_coro_sleep(5 * 1000000);
    ASSERT_EQ(hm_coro_cancel(victim), 0);
}

static int deep(int n) /* uses stack to check the 64 KiB default is usable */
{
    volatile char pad[1024];
    pad[0] = (char)n;
    return n == 0 ? pad[0] : deep(n - 1) + 1;
}

static void stack_user(void *arg)
{
    size_t before = hm_coro_stack_left();
    ASSERT_GT(before, 60 * 1024);
    ASSERT_EQ(deep(40), 40);
    *(int *)arg = 1;
}

static int spawned_inside;
static void child(void *arg) { spawned_inside++; }
static void parent(void *arg)
{
    for (int i = 0; i < 1000; i++) ASSERT_EQ(hm_coro_spawn(NULL, child, NULL, NULL), 0);
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
    for (int i = 0; i < 3; i++) hm_coro_spawn(loop, sleeper, &ms[i], NULL);
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

    /* Stacks are recycled: 100k short coroutines must not need 100k stacks. */
    spawned_inside = 0;
    for (int round = 0; round < 1000; round++) {
        for (int i = 0; i < 100; i++) hm_coro_spawn(loop, child, NULL, NULL);
        ASSERT_EQ(hm_loop_run(loop), 0);
    }
    ASSERT_EQ(spawned_inside, 100000);
    hm_loop_destroy(loop);
    printf("coroutine tests passed\n");
    return 0;
}
