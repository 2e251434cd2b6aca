/* routes.c — the pages of php-via's tests/Load/bench_app.php, in TAB scope
 * (one worker): each has a `count` signal starting at 0 and an action named
 * `increment`, whose view is one button posting to /_action/increment.
 *
 * Only /bench/counter exists so far. A new page is one more table entry: its
 * route, its TAB signals (in patch order), its view HTML and its actions.
 * Actions run in the connection's coroutine, so /bench/io's usleep(2000)
 * would be hm_coro_sleep(2 ms); they change signals with
 * hm__ba_signal_set() and queue the patch with hm__ba_sync_signals(). */
#include "bench_app/internal.h"

/* count+1, then syncSignals(). PHP would turn an overflowing int into a
 * float; we stop at INT64_MAX (only reachable with a client-sent value). */
static int counter_increment(ba_ctx *ctx)
{
    int64_t v;
    if (__builtin_add_overflow(hm__ba_signal_get(ctx, 0), 1, &v)) v = INT64_MAX;
    hm__ba_signal_set(ctx, 0, v);
    return hm__ba_sync_signals(ctx);
}

static const ba_signal_def counter_signals[] = {{"count", 0}};
static const ba_action_def counter_actions[] = {{"increment", counter_increment}};

const ba_route_def hm__ba_routes[] = {
    {
        .path = "/bench/counter",
        .view = "<button data-on:click=\"@post('/_action/increment')\">+1</button>",
        .signals = counter_signals,
        .n_signals = HM_ARRAY_LEN(counter_signals),
        .actions = counter_actions,
        .n_actions = HM_ARRAY_LEN(counter_actions),
    },
};
const size_t hm__ba_n_routes = HM_ARRAY_LEN(hm__ba_routes);
