/* Channels (blocking, timeout, close) and wait groups. */
#include "engine_test_util.h"

static hm_chan *ch;
static int got[8], ngot;

static void producer(void *arg)
{
    for (intptr_t i = 1; i <= 5; i++)
        ASSERT_EQ(hm_chan_push(ch, (void *)i, 0), 0);
    hm_chan_close(ch);
    ASSERT_EQ(hm_chan_push(ch, (void *)9, 0), -EPIPE);
}

static void consumer(void *arg)
{
    void *item;
    int rc;
    while ((rc = hm_chan_pop(ch, &item, 0)) == 0)
        got[ngot++] = (int)(intptr_t)item;
    ASSERT_EQ(rc, -EPIPE);
}

static void pop_timeout(void *arg)
{
    hm_chan *c;
    ASSERT_EQ(hm_chan_create(&c, 1), 0);
    void *item;
    int64_t t0 = hm_now_ns();
    ASSERT_EQ(hm_chan_pop(c, &item, t0 + 20 * 1000000), -ETIMEDOUT);
    ASSERT_GE(hm_now_ns() - t0, 20 * 1000000);
    ASSERT_EQ(hm_chan_try_push(c, (void *)1), 0);
    ASSERT_EQ(hm_chan_try_push(c, (void *)2), -EAGAIN);
    t0 = hm_now_ns();
    ASSERT_EQ(hm_chan_push(c, (void *)2, t0 + 20 * 1000000), -ETIMEDOUT);
    ASSERT_EQ(hm_chan_len(c), 1);
    hm_chan_destroy(c);
}

static hm_waitgroup wg;
static int finished;
static void worker(void *arg)
{
    hm_coro_sleep((int64_t)(intptr_t)arg * 1000000);
    finished++;
    hm_wg_done(&wg);
}

static void waiter_fn(void *arg)
{
    hm_wg_init(&wg);
    for (intptr_t i = 1; i <= 10; i++) {
        hm_wg_add(&wg, 1);
        hm_coro_spawn(NULL, worker, (void *)i, NULL);
    }
    ASSERT_EQ(hm_wg_wait(&wg, hm_now_ns() + 1000000), -ETIMEDOUT);
    ASSERT_EQ(hm_wg_wait(&wg, 0), 0);
    ASSERT_EQ(finished, 10);
    ASSERT_EQ(hm_wg_wait(&wg, 0), 0); /* already zero: returns at once */
}

/* A blocked pusher resumes when a pop frees a slot, in FIFO order. */
static hm_chan *small;
static void blocked_pusher(void *arg)
{
    ASSERT_EQ(hm_chan_push(small, arg, 0), 0);
}
static void drain(void *arg)
{
    hm_coro_yield(); /* let both pushers block */
    void *item;
    for (intptr_t want = 1; want <= 3; want++) {
        ASSERT_EQ(hm_chan_pop(small, &item, 0), 0);
        ASSERT_EQ((intptr_t)item, want);
    }
}

int main(int argc, char **argv)
{
    hm_loop_options o = test_loop_options(argc, argv);
    hm_loop *loop;
    ASSERT_EQ(hm_loop_create(&loop, &o), 0);
    ASSERT_EQ(hm_chan_create(&ch, 2), 0);
    hm_coro_spawn(loop, consumer, NULL, NULL);
    hm_coro_spawn(loop, producer, NULL, NULL);
    ASSERT_EQ(hm_loop_run(loop), 0);
    ASSERT_EQ(ngot, 5);
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(got[i], i + 1);
    hm_chan_destroy(ch);

    hm_coro_spawn(loop, pop_timeout, NULL, NULL);
    hm_coro_spawn(loop, waiter_fn, NULL, NULL);
    ASSERT_EQ(hm_loop_run(loop), 0);

    ASSERT_EQ(hm_chan_create(&small, 1), 0);
    ASSERT_EQ(hm_chan_try_push(small, (void *)1), 0);
    hm_coro_spawn(loop, blocked_pusher, (void *)2, NULL);
    hm_coro_spawn(loop, blocked_pusher, (void *)3, NULL);
    hm_coro_spawn(loop, drain, NULL, NULL);
    ASSERT_EQ(hm_loop_run(loop), 0);
    hm_chan_destroy(small);
    hm_loop_destroy(loop);
    printf("sync tests passed\n");
    return 0;
}
