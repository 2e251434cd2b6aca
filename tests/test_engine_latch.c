/* Waking across threads: coroutines on four engine threads wait on a gate
 * (a latch of 1) that a coroutine on thread 0 opens; then every thread's
 * coroutines count a second latch down and thread 0 waits for it to reach
 * zero. The waits are blocked in their polls (no sleeping loops), so only
 * the cross-thread wake-up (hm_loop_post and the loop's eventfd) can end
 * them; a waiter whose deadline passes first times out (the gate waits
 * for those to end, so a thread that starts late cannot pass it); hm_loop_post runs
 * a call on another loop's thread. argv[1]: the backend. */
#include "engine_test_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

enum { THREADS = 4, PER_THREAD = 10 };

static hm_latch gate, finished, impatient_done;
static atomic_int passed_gate, timed_out;
static hm_loop *loops[THREADS];
static pthread_t tids[THREADS];
static atomic_int posts_run;
static atomic_bool post_on_right_thread = true;

static void worker(void *p)
{
    ASSERT_EQ(hm_latch_wait(&gate, hm_now_ns() + 20000000000LL), 0);
    atomic_fetch_add(&passed_gate, 1);
    hm_coro_sleep(1000000);
    hm_latch_count_down(&finished, 1);
}

static void impatient(void *p)
{
    /* gate opens after ~100 ms: this one gives up at 10 ms */
    if (hm_latch_wait(&gate, hm_now_ns() + 10 * 1000000) == -ETIMEDOUT)
        atomic_fetch_add(&timed_out, 1);
    hm_latch_count_down(&impatient_done, 1);
}

typedef struct my_post {
    hm_post post;
    int thread;
} my_post;
static my_post posts[THREADS];
static void posted(hm_post *p)
{
    my_post *mp = HM_CONTAINER_OF(p, my_post, post);
    if (!pthread_equal(pthread_self(), tids[mp->thread]))
        atomic_store(&post_on_right_thread, false);
    atomic_fetch_add(&posts_run, 1);
    hm_latch_count_down(&finished, 1);
}

static void opener(void *p)
{
    hm_coro_sleep(100 * 1000000); /* everyone is blocked in its poll by now */
    /* A busy machine may start a thread late: the gate opens only once each
     * impatient waiter has given up (or passed: that fails the count). */
    ASSERT_EQ(hm_latch_wait(&impatient_done, hm_now_ns() + 20000000000LL), 0);
    hm_latch_count_down(&gate, 1);
    ASSERT_EQ(hm_latch_wait(&finished, hm_now_ns() + 20000000000LL), 0);
    ASSERT_EQ(atomic_load(&passed_gate), THREADS * PER_THREAD);
}

static void keep_alive(void *p)
{
    /* keeps each loop running until the posts reached it */
    hm_latch_wait(&finished, hm_now_ns() + 20000000000LL);
}

static void thread_main(hm_loop *loop, int idx, void *arg)
{
    tids[idx] = pthread_self();
    __atomic_store_n(&loops[idx], loop, __ATOMIC_RELEASE);
    for (int i = 0; i < PER_THREAD; i++)
        ASSERT_EQ(hm_coro_spawn(loop, worker, NULL, NULL), 0);
    ASSERT_EQ(hm_coro_spawn(loop, impatient, NULL, NULL), 0);
    ASSERT_EQ(hm_coro_spawn(loop, keep_alive, NULL, NULL), 0);
    if (idx == 0) ASSERT_EQ(hm_coro_spawn(loop, opener, NULL, NULL), 0);
}

static void *poster(void *p)
{
    /* from a thread that is no engine thread */
    for (;;) {
        bool all = true;
        for (int i = 0; i < THREADS; i++)
            all = all && __atomic_load_n(&loops[i], __ATOMIC_ACQUIRE);
        if (all) break;
        usleep(1000);
    }
    usleep(50 * 1000);
    for (int i = 0; i < THREADS; i++) {
        posts[i] = (my_post){.post.fn = posted, .thread = i};
        hm_loop_post(loops[i], &posts[i].post);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    hm_loop_options o = test_loop_options(argc, argv);
    hm_latch_init(&gate, 1);
    hm_latch_init(&finished, THREADS * PER_THREAD + THREADS);
    hm_latch_init(&impatient_done, THREADS);
    pthread_t pt;
    ASSERT_EQ(pthread_create(&pt, NULL, poster, NULL), 0);
    int64_t t0 = hm_now_ns();
    ASSERT_EQ(hm_engine_run(THREADS, &o, thread_main, NULL), 0);
    pthread_join(pt, NULL);
    ASSERT_EQ(atomic_load(&passed_gate), THREADS * PER_THREAD);
    ASSERT_EQ(atomic_load(&timed_out), THREADS);
    ASSERT_EQ(atomic_load(&posts_run), THREADS);
    ASSERT(atomic_load(&post_on_right_thread));
    ASSERT_LT(hm_now_ns() - t0, 15000000000LL); /* far below the 20 s deadlines */
    printf("a gate and a latch across %d threads, posts from outside: ok\n", THREADS);
    return 0;
}
