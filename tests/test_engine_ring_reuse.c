/* A loop made on one thread after another thread's loop is gone, with
 * nothing between the two threads that orders them (a relaxed flag: as
 * hammer's engine threads, one done before the next has started): the
 * second ring is mapped where the first one was. Under ThreadSanitizer the
 * new ring must not inherit the old ring's accesses (liburing maps rings
 * with raw system calls TSan does not see; backend_uring.c tells it), or
 * every such run reports a race that never was. Elsewhere: both loops
 * work. argv[1]: the backend. */
#include "engine_test_util.h"

#include <pthread.h>
#include <stdatomic.h>

static atomic_bool first_gone, second_done;
static hm_loop_options opts;
static int woke[2];

static void nap(void *p)
{
    /* A sleep: a timeout that completes through the ring's CQ. */
    ASSERT_EQ(hm_coro_sleep(1000000), 0);
    (*(int *)p)++;
}

static void one_loop(int i)
{
    hm_loop *loop;
    ASSERT_EQ(hm_loop_create(&loop, &opts), 0);
    for (int k = 0; k < 3; k++)
        ASSERT_EQ(hm_coro_spawn(loop, nap, &woke[i], NULL), 0);
    ASSERT_EQ(hm_loop_run(loop), 0);
    hm_loop_destroy(loop);
}

static void *first(void *p)
{
    one_loop(0);
    atomic_store_explicit(&first_gone, true, memory_order_relaxed);
    /* Alive until the second loop is done, as an engine thread whose
     * neighbour is still at work (TSan then keeps the two apart). */
    while (!atomic_load_explicit(&second_done, memory_order_relaxed))
        sched_yield();
    return NULL;
}

static void *second(void *p)
{
    while (!atomic_load_explicit(&first_gone, memory_order_relaxed))
        sched_yield();
    one_loop(1);
    atomic_store_explicit(&second_done, true, memory_order_relaxed);
    return NULL;
}

int main(int argc, char **argv)
{
    opts = test_loop_options(argc, argv);
    pthread_t a, b;
    ASSERT_EQ(pthread_create(&b, NULL, second, NULL), 0);
    ASSERT_EQ(pthread_create(&a, NULL, first, NULL), 0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    ASSERT_EQ(woke[0], 3);
    ASSERT_EQ(woke[1], 3);
    printf("a loop after another thread's loop is gone: ok\n");
    return 0;
}
