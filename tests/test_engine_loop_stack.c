/* hm_call_on_loop_stack: work far deeper than a coroutine's stack runs on
 * the thread's own stack and returns to the coroutine, which can still
 * suspend afterwards; nested calls and calls outside coroutines just run;
 * on the main thread and on an engine thread. With 8 KiB coroutine
 * stacks, the same work called directly would hit the guard page. (Under
 * the sanitizers the call runs in place: a shallower job, bigger stacks.)
 * argv[1]: the backend. */
#include "engine_test_util.h"

#ifdef HM_SANITIZE
#define DEPTH 20
#define STACK (64 * 1024)
#else
#define DEPTH 200
#define STACK (8 * 1024)
#endif

__attribute__((noinline)) static long deep(int n)
{
    volatile char pad[1024];
    pad[n % 1024] = (char)n;
    if (n == 0) return 0;
    long r = deep(n - 1);
    return r + 1 + (pad[n % 1024] != (char)n);
}

typedef struct job {
    int depth;
    long result;
    bool nested_ran;
} job;

static void nested(void *p)
{
    ((job *)p)->nested_ran = true;
}

static void deep_job(void *p)
{
    job *j = p;
    j->result = deep(j->depth);       /* ~depth KiB of stack */
    hm_call_on_loop_stack(nested, j); /* already there: runs directly */
}

static int done;
static void coro(void *p)
{
    for (int i = 0; i < 3; i++) {
        job j = {.depth = DEPTH};
        hm_call_on_loop_stack(deep_job, &j);
        ASSERT_EQ(j.result, DEPTH);
        ASSERT(j.nested_ran);
        ASSERT_EQ(hm_coro_sleep(1000000), 0); /* still a working coroutine */
    }
    done++;
}

static void thread_main(hm_loop *loop, int idx, void *arg)
{
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(hm_coro_spawn(loop, coro, NULL, NULL), 0);
}

int main(int argc, char **argv)
{
    hm_loop_options o = test_loop_options(argc, argv);
    o.stack_size = STACK;
    hm_loop *loop;
    ASSERT_EQ(hm_loop_create(&loop, &o), 0);
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(hm_coro_spawn(loop, coro, NULL, NULL), 0);
    ASSERT_EQ(hm_loop_run(loop), 0);
    ASSERT_EQ(done, 10);
    job j = {.depth = DEPTH / 4};
    hm_call_on_loop_stack(deep_job, &j); /* outside a coroutine: runs directly */
    ASSERT_EQ(j.result, DEPTH / 4);
    hm_loop_destroy(loop);
    printf("%d KiB deep calls from %d KiB coroutines, main thread: ok\n", DEPTH, STACK / 1024);

    done = 0;
    ASSERT_EQ(hm_engine_run(1, &o, thread_main, NULL), 0);
    ASSERT_EQ(done, 10);
    printf("the same on an engine thread: ok\n");
    return 0;
}
