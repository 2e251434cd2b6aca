/* leak.c — --leak-rate: a deliberate, steady memory leak, a test aid for
 * hammer's leak verdict (docs/php-via.md). Worker 0's ticker calls
 * ba_leak_tick; each call allocates what the rate owes since the last one,
 * writes every page of it (so it is resident, not just reserved), and
 * never unmaps it: RSS grows by the rate, as a PHP worker that keeps
 * references in a static array does. Whole pages from mmap, not malloc:
 * a heap's bookkeeping and partly used pages would add to the rate. */
#include "bench_app/internal.h"

#include <string.h>
#include <sys/mman.h>

#define LEAK_CHUNK_MIN (64 * 1024) /* pages per mapping: few mappings, still steady */

static int64_t leak_from_ns; /* what has been paid for up to here */
static double leak_owed;     /* bytes owed, less than LEAK_CHUNK_MIN after a call */

void ba_leak_tick(const ba_app *app, int64_t now)
{
    if (app->opt.leak_rate <= 0 || app->worker != 0) return;
    if (leak_from_ns == 0) {
        leak_from_ns = now;
        return;
    }
    leak_owed += (double)app->opt.leak_rate * (double)(now - leak_from_ns) / 1e9;
    leak_from_ns = now;
    if (leak_owed < LEAK_CHUNK_MIN) return;
    size_t n = (size_t)leak_owed / LEAK_CHUNK_MIN * LEAK_CHUNK_MIN;
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return; /* out of memory: the leak stops growing, the server goes on */
    memset(p, 0xa5, n);
    leak_owed -= (double)n;
}
