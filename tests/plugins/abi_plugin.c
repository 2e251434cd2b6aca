/* Test plugins for the plugin ABI (tests/test_plugin_abi.c), one source
 * built four ways:
 *   ABI_V1       a plugin built against version 1 of hammer/scenario.h: its
 *                struct ends at teardown (no struct_size), and what follows
 *                it in memory is 0xff bytes, so a loader that read past it
 *                would see garbage;
 *   ABI_FUTURE   a plugin of a version newer than hammer's;
 *   ABI_BADSIZE  a version 2 plugin whose struct_size is impossible;
 *   ABI_CANCEL   VUs that pause until hammer_vu_sleep_ms says cancelled. */
#include <hammer/scenario.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#if defined(ABI_V1)

/* hammer_scenario as version 1 of the header declared it. */
typedef struct scenario_v1 {
    int api_version;
    const char *name, *help, *route, *action, *signal;
    int (*setup)(const char *const *opts, int n_opts, void **state, char *why, size_t whylen);
    int (*vu_body)(hammer_vu *vu, void *state);
    bool (*check)(void *state, char *why, size_t whylen);
    void (*teardown)(void *state);
} scenario_v1;

static atomic_long ok_actions;

static int v1_vu(hammer_vu *vu, void *state)
{
    if (hammer_vu_load_page(vu, hammer_vu_route(vu)) != 200) return -1;
    while (hammer_vu_next(vu)) {
        int status = hammer_vu_action(vu, NULL, NULL);
        if (status >= 200 && status < 300) atomic_fetch_add(&ok_actions, 1);
    }
    hammer_vu_sleep_ms(vu, 1); /* a version 1 plugin ignores what it returns */
    return 0;
}

static bool v1_check(void *state, char *why, size_t whylen)
{
    snprintf(why, whylen, "v1 plugin: %ld OK actions", atomic_load(&ok_actions));
    return true;
}

static const struct {
    scenario_v1 sc;
    unsigned char after[64];
} v1 = {
    .sc = {.api_version = 1,
           .name = "abi-v1",
           .help = "test: a plugin built against API version 1",
           .route = "/bench/counter",
           .action = "increment",
           .signal = "count",
           .vu_body = v1_vu,
           .check = v1_check},
    .after = {[0 ... 63] = 0xff},
};

const void *const hammer_plugin_scenarios[] = {&v1.sc, NULL};

#elif defined(ABI_FUTURE)

static int future_vu(hammer_vu *vu, void *state)
{
    return 0;
}

/* A later version appends fields. */
typedef struct scenario_future {
    hammer_scenario base;
    int (*something_new)(void);
} scenario_future;

static const scenario_future future = {
    .base = {.api_version = HAMMER_SCENARIO_API_VERSION + 1,
             .struct_size = sizeof(scenario_future),
             .name = "abi-future",
             .vu_body = future_vu},
};

const void *const hammer_plugin_scenarios[] = {&future, NULL};

#elif defined(ABI_BADSIZE)

static int badsize_vu(hammer_vu *vu, void *state)
{
    return 0;
}

static const hammer_scenario badsize = {
    .api_version = 2, .struct_size = 4, .name = "abi-badsize", .vu_body = badsize_vu};

const hammer_scenario *const hammer_plugin_scenarios[] = {&badsize, NULL};

#elif defined(ABI_CANCEL)

static atomic_long vus, cancelled;

static int cancel_vu(hammer_vu *vu, void *state)
{
    atomic_fetch_add(&vus, 1);
    if (hammer_vu_id(vu) == 0) {
        /* The test interrupts hammer once it sees this line. */
        printf("abi-cancel: pausing\n");
        fflush(stdout);
    }
    int rc;
    while ((rc = hammer_vu_sleep_ms(vu, 50)) == 0) {
    }
    if (rc == -ECANCELED) atomic_fetch_add(&cancelled, 1);
    return 0;
}

static bool cancel_check(void *state, char *why, size_t whylen)
{
    snprintf(why, whylen, "%ld of %ld VUs saw their pause cancelled", atomic_load(&cancelled),
             atomic_load(&vus));
    return atomic_load(&cancelled) == atomic_load(&vus);
}

static const hammer_scenario cancel = {
    HAMMER_SCENARIO_ABI,
    .name = "abi-cancel",
    .help = "test: VUs pause until hammer_vu_sleep_ms reports the run is stopping",
    .route = "/bench/counter",
    .vu_body = cancel_vu,
    .check = cancel_check,
};

const hammer_scenario *const hammer_plugin_scenarios[] = {&cancel, NULL};

#else
#error "build with one of ABI_V1, ABI_FUTURE, ABI_BADSIZE, ABI_CANCEL"
#endif
