/* A loop that ends right after running a post from another thread: the
 * loop's only coroutine yields (so the loop takes its inbox each turn,
 * without waiting for the eventfd) until the post has run, then ends, and
 * the loop is destroyed while the poster may still be inside
 * hm_loop_post, between making the post visible and writing the loop's
 * wake_fd. The destroy must wait for that write: otherwise the poster
 * reads a freed loop and writes an eventfd that is closed, or already
 * another socket (ThreadSanitizer names it, as a race on the fd's close;
 * AddressSanitizer as a use after free). Many rounds, since the window is
 * a few instructions wide. argv[1]: the backend. */
#include "engine_test_util.h"

#include <pthread.h>
#include <stdatomic.h>

enum { ROUNDS = 300 };

typedef struct round_state {
    hm_post post;
    _Atomic(hm_loop *) loop;
    atomic_bool post_ran;
    long turns; /* yields the loop took before the post ran */
} round_state;

static void post_ran(hm_post *p)
{
    round_state *r = HM_CONTAINER_OF(p, round_state, post);
    atomic_store(&r->post_ran, true);
}

static void spinner(void *arg)
{
    round_state *r = arg;
    while (!atomic_load(&r->post_ran)) {
        r->turns++;
        hm_coro_yield();
    }
}

static void thread_main(hm_loop *loop, int idx, void *arg)
{
    (void)idx;
    round_state *r = arg;
    ASSERT_EQ(hm_coro_spawn(loop, spinner, r, NULL), 0);
    atomic_store(&r->loop, loop);
}

static void *poster(void *arg)
{
    round_state *r = arg;
    hm_loop *loop;
    while (!(loop = atomic_load(&r->loop)))
        sched_yield();
    hm_loop_post(loop, &r->post);
    return NULL;
}

int main(int argc, char **argv)
{
    hm_loop_options o = test_loop_options(argc, argv);
    long turns = 0;
    for (int i = 0; i < ROUNDS; i++) {
        round_state r = {.post.fn = post_ran};
        pthread_t pt;
        ASSERT_EQ(pthread_create(&pt, NULL, poster, &r), 0);
        ASSERT_EQ(hm_engine_run(1, &o, thread_main, &r), 0);
        pthread_join(pt, NULL);
        ASSERT(atomic_load(&r.post_ran));
        turns += r.turns;
    }
    printf("%d loops ended right after a post from another thread (%ld busy turns "
           "before the posts ran): ok\n",
           ROUNDS, turns);
    return 0;
}
