/* An example hammer scenario plugin: "double-click".
 *
 * Each virtual user loads the counter page, opens its SSE stream, and
 * clicks twice in a row before waiting for the screen, like an impatient
 * user. Since Datastar sends the signals the tab last saw, the second
 * click can carry a stale count; php-via then overwrites the server's value
 * with it. The check counts how often the count the tab ends up seeing is
 * lower than its OK clicks would make it, and reports it (informational,
 * or a failure with --opt strict=1).
 *
 * Build: cc -shared -fPIC -I include examples/plugin_double_click.c -o dc.so
 * Run:   hammer --plugin ./dc.so -c 20 -n 400 scenario double-click */
#include <hammer/scenario.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dc_state {
    bool strict;
    atomic_long vus, lost_vus, clicks_ok;
} dc_state;

static int dc_setup(const char *const *opts, int n, void **state, char *why, size_t whylen)
{
    dc_state *s = calloc(1, sizeof(*s));
    if (!s) return -12;
    for (int i = 0; i < n; i++) {
        if (!strcmp(opts[i], "strict=1"))
            s->strict = true;
        else if (strcmp(opts[i], "strict=0")) {
            snprintf(why, whylen, "double-click: unknown option '%s' (strict=0|1)", opts[i]);
            free(s);
            return -22;
        }
    }
    *state = s;
    return 0;
}

static int dc_vu(hammer_vu *vu, void *state)
{
    dc_state *s = state;
    if (hammer_vu_load_page(vu, hammer_vu_route(vu)) != 200) return -1;
    if (hammer_vu_open_sse(vu, 5000) < 0) hammer_vu_fail(vu, "no SSE state within 5 s");
    int64_t before = 0, after = 0;
    hammer_vu_signal_int(vu, hammer_vu_signal_name(vu), &before);
    long ok = 0;
    while (hammer_vu_next(vu)) {
        int64_t seen = 0;
        hammer_vu_signal_int(vu, hammer_vu_signal_name(vu), &seen);
        int status = hammer_vu_action(vu, NULL, NULL);
        if (status >= 200 && status < 300) ok++;
        if (!hammer_vu_next(vu)) break;
        /* The second click of a double click leaves before the first one's
         * patch can reach the screen: it carries the count both clicks saw. */
        char stale[96];
        snprintf(stale, sizeof(stale), "{\"%s\": %lld}", hammer_vu_signal_name(vu),
                 (long long)seen);
        status = hammer_vu_action(vu, NULL, stale);
        if (status >= 200 && status < 300) ok++;
        hammer_vu_wait_patch(vu, 5000);
        hammer_vu_wait_patch(vu, 1000);
    }
    hammer_vu_sleep_ms(vu, 250); /* let the last patch land */
    hammer_vu_signal_int(vu, hammer_vu_signal_name(vu), &after);
    atomic_fetch_add(&s->vus, 1);
    atomic_fetch_add(&s->clicks_ok, ok);
    if (after - before < ok) atomic_fetch_add(&s->lost_vus, 1);
    return 0;
}

static bool dc_check(void *state, char *why, size_t whylen)
{
    dc_state *s = state;
    snprintf(why, whylen, "%ld of %ld tabs lost increments to stale double clicks (%ld OK clicks)",
             atomic_load(&s->lost_vus), atomic_load(&s->vus), atomic_load(&s->clicks_ok));
    return !s->strict || atomic_load(&s->lost_vus) == 0;
}

static void dc_teardown(void *state)
{
    free(state);
}

static const hammer_scenario double_click = {
    HAMMER_SCENARIO_ABI,
    .name = "double-click",
    .help = "example plugin: tabs that click twice before the screen updates",
    .route = "/bench/counter",
    .action = "increment",
    .signal = "count",
    .setup = dc_setup,
    .vu_body = dc_vu,
    .check = dc_check,
    .teardown = dc_teardown,
};

const hammer_scenario *const hammer_plugin_scenarios[] = {&double_click, NULL};
