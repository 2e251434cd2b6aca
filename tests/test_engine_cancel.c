/* Cancelling and joining: a cancel that reaches a coroutine while it is
 * ready to run (not suspended) sticks and ends its next blocking operation
 * at once, instead of being lost (-ESRCH as it was); one cancel ends one
 * operation; hm_task joins a coroutine that may already have finished and
 * cancels it safely either way; hm_event wakes every waiter, with a
 * deadline. argv[1]: the backend. */
#include "engine_test_util.h"

static int sticky_first = 1, sticky_second = 1;
static void victim_fn(void *p)
{
    /* Ready, not suspended, when the cancel comes. */
    sticky_first = hm_coro_sleep(10LL * 1000000000);
    sticky_second = hm_coro_sleep(1000000); /* one cancel, one operation */
}
static void sticky_test(void *p)
{
    hm_task t = {0};
    ASSERT_EQ(hm_task_spawn(&t, NULL, victim_fn, NULL), 0);
    ASSERT_EQ(hm_task_cancel(&t), 0); /* it has not run yet */
    int64_t t0 = hm_now_ns();
    ASSERT_EQ(hm_task_join(&t, t0 + 5000000000LL), 0);
    ASSERT_LT(hm_now_ns() - t0, 5000000000LL); /* not the 10 s sleep */
    ASSERT_EQ(sticky_first, -ECANCELED);
    ASSERT_EQ(sticky_second, 0);
    ASSERT(t.done);
    ASSERT(!t.co);
    ASSERT_EQ(hm_task_cancel(&t), 0);                /* finished: nothing to do */
    ASSERT_EQ(hm_task_join(&t, hm_now_ns() + 1), 0); /* and joins at once */
    *(int *)p = 1;
}

/* A coroutine cancels one that became ready because its operation just
 * completed: the result it got stands, and the cancel ends the next one. */
static hm_event ev;
static int woken_rc = 1, after_rc = 1;
static void waiter_fn(void *p)
{
    woken_rc = hm_event_wait(&ev, 0);
    after_rc = hm_event_wait(&ev, hm_now_ns() + 5000000000LL);
}
static void ready_cancel_test(void *p)
{
    hm_event_init(&ev);
    hm_task t = {0};
    ASSERT_EQ(hm_task_spawn(&t, NULL, waiter_fn, NULL), 0);
    hm_coro_yield(); /* it waits now */
    hm_event_notify(&ev);
    ASSERT_EQ(hm_task_cancel(&t), 0); /* it is ready: the cancel sticks */
    ASSERT_EQ(hm_task_join(&t, 0), 0);
    ASSERT_EQ(woken_rc, 0);
    ASSERT_EQ(after_rc, -ECANCELED);
    *(int *)p = 1;
}

/* hm_event: notify wakes all, a deadline ends one wait. */
static hm_event ev2;
static int woken;
static void ev_waiter(void *p)
{
    if (hm_event_wait(&ev2, hm_now_ns() + 5000000000LL) == 0) woken++;
}
static void event_test(void *p)
{
    hm_event_init(&ev2);
    hm_task ts[5] = {{0}};
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(hm_task_spawn(&ts[i], NULL, ev_waiter, NULL), 0);
    hm_coro_yield();
    ASSERT_EQ(woken, 0);
    hm_event_notify(&ev2);
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(hm_task_join(&ts[i], 0), 0);
    ASSERT_EQ(woken, 5);
    int64_t t0 = hm_now_ns();
    ASSERT_EQ(hm_event_wait(&ev2, t0 + 20 * 1000000), -ETIMEDOUT);
    ASSERT_GE(hm_now_ns() - t0, 20 * 1000000);
    *(int *)p = 1;
}

/* Joining with a deadline that passes first. */
static void sleeper(void *p)
{
    hm_coro_sleep(200 * 1000000);
}
static void join_timeout_test(void *p)
{
    hm_task t = {0};
    ASSERT_EQ(hm_task_spawn(&t, NULL, sleeper, NULL), 0);
    ASSERT_EQ(hm_task_join(&t, hm_now_ns() + 10 * 1000000), -ETIMEDOUT);
    ASSERT(!t.done);
    ASSERT_EQ(hm_task_cancel(&t), 0); /* suspended in its sleep: ends it */
    ASSERT_EQ(hm_task_join(&t, hm_now_ns() + 5000000000LL), 0);
    *(int *)p = 1;
}

int main(int argc, char **argv)
{
    hm_loop_options o = test_loop_options(argc, argv);
    hm_loop *loop;
    ASSERT_EQ(hm_loop_create(&loop, &o), 0);
    static int done[4];
    hm_coro_spawn(loop, sticky_test, &done[0], NULL);
    hm_coro_spawn(loop, ready_cancel_test, &done[1], NULL);
    hm_coro_spawn(loop, event_test, &done[2], NULL);
    hm_coro_spawn(loop, join_timeout_test, &done[3], NULL);
    ASSERT_EQ(hm_loop_run(loop), 0);
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(done[i], 1);
    printf("sticky cancel, cancel of a ready coroutine, join, events: ok\n");
    hm_loop_destroy(loop);
    return 0;
}
