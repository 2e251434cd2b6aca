/* Coroutine stacks: packed in slabs, so 1000 coroutines alive at once cost
 * a few dozen mappings, not two each (when the kernel installs guard pages
 * with MADV_GUARD_INSTALL, 6.13+; else each stack's guard is an mprotect'd
 * page, which splits the mapping); an overflow still faults on the guard
 * page instead of running into the neighbour's stack; and a loop's stack
 * limit (hm_loop_options.max_stacks, or HAMMER_MAX_STACKS) makes a spawn
 * fail cleanly and recovers once coroutines end. argv[1]: the backend. */
#include "engine_test_util.h"

#include <sys/wait.h>
#include <unistd.h>

static int count_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    ASSERT(f);
    int n = 0, c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

static hm_event hold;
static void parked(void *p)
{
    hm_event_wait(&hold, 0);
}

static int maps_with_1000;
static void many(void *p)
{
    hm_event_init(&hold);
    for (int i = 0; i < 1000; i++)
        ASSERT_EQ(hm_coro_spawn(NULL, parked, NULL, NULL), 0);
    hm_coro_yield(); /* all of them alive and waiting */
    maps_with_1000 = count_maps();
    hm_event_notify(&hold);
}

/* Recursion the compiler cannot turn into a loop: each frame's pad is
 * read after the call returns. */
__attribute__((noinline)) static int deep(int n)
{
    volatile char pad[1024];
    pad[n % 1024] = (char)n;
    if (n == 0) return 0;
    int r = deep(n - 1);
    return r + 1 + (pad[n % 1024] != (char)n);
}
static void overflow(void *p)
{
    printf("recursed %d\n", deep(1000)); /* ~1 MiB on a 64 KiB stack */
}

static void limited(void *p)
{
    hm_loop *loop = hm_loop_current();
    /* this coroutine holds one of the 4 stacks */
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(hm_coro_spawn(loop, parked, NULL, NULL), 0);
    ASSERT_EQ(hm_coro_spawn(loop, parked, NULL, NULL), -ENOMEM);
    hm_event_notify(&hold); /* (none waits yet: they have not run) */
    hm_coro_yield();        /* now they wait */
    hm_event_notify(&hold);
    hm_coro_yield(); /* they end; their stacks are free again */
    ASSERT_EQ(hm_coro_spawn(loop, parked, NULL, NULL), 0);
    hm_coro_yield();
    hm_event_notify(&hold);
}

/* Under ThreadSanitizer every coroutine is a TSan fiber, whose records
 * TSan maps on first use and keeps: a throwaway loop of 1000 coroutines
 * maps them first, so the count below is the stacks' own mappings. */
static void warm_tsan_fibers(const hm_loop_options *o)
{
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
    hm_loop *warm;
    ASSERT_EQ(hm_loop_create(&warm, o), 0);
    hm_coro_spawn(warm, many, NULL, NULL);
    ASSERT_EQ(hm_loop_run(warm), 0);
    hm_loop_destroy(warm);
#endif
#endif
    (void)o;
}

int main(int argc, char **argv)
{
    hm_loop_options o = test_loop_options(argc, argv);
    warm_tsan_fibers(&o);
    hm_loop *loop;
    ASSERT_EQ(hm_loop_create(&loop, &o), 0);
    int before = count_maps();
    hm_coro_spawn(loop, many, NULL, NULL);
    ASSERT_EQ(hm_loop_run(loop), 0);
    bool packed = strstr(hm_loop_features(loop), "guard_madvise") != NULL;
    int added = maps_with_1000 - before;
    printf("1000 coroutines alive: %d more mappings (guards %s)\n", added,
           packed ? "madvise'd: one mapping per slab" : "mprotect'd: two per stack");
    int stacks = (int)hm_loop_get_stats(loop)->stacks_mapped;
    ASSERT_GE(stacks, 1000);
    if (packed)
        ASSERT_LE(added, stacks / 32 + 16);
    else
        ASSERT_LE(added, 2 * stacks + 16);

    /* An overflow hits the guard page: the child dies of a signal (or,
     * under AddressSanitizer, is reported and exits non-zero). */
    fflush(stdout);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        hm_coro_spawn(loop, overflow, NULL, NULL);
        hm_loop_run(loop);
        _exit(0); /* not reached when the guard works */
    }
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));
    printf("overflow: %s %d: ok\n", WIFSIGNALED(status) ? "signal" : "exit",
           WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    hm_loop_destroy(loop);

    o.max_stacks = 4;
    ASSERT_EQ(hm_loop_create(&loop, &o), 0);
    hm_event_init(&hold);
    hm_coro_spawn(loop, limited, NULL, NULL);
    ASSERT_EQ(hm_loop_run(loop), 0);
    hm_loop_destroy(loop);
    printf("a stack limit fails spawns with -ENOMEM, and frees up: ok\n");
    return 0;
}
