/* hammer/scenario.h — the scenario plugin API, version 2.
 *
 * A plugin is a shared object that exports
 *
 *     const hammer_scenario *const hammer_plugin_scenarios[];  (NULL-terminated)
 *
 * and is loaded with `hammer --plugin ./my.so scenario NAME`. Each scenario
 * runs in hammer's browser model: -c virtual users (VUs), each a coroutine
 * with its own cookie jar, keep-alive connection and SSE stream, calling
 * the scenario's vu_body. hammer's built-in browser-mode VU is written with
 * these same functions (src/load/via_browser.c).
 *
 * Threading: vu_body runs on one of hammer's engine threads, concurrently
 * with other VUs on other threads; `state` is shared by all of them, so a
 * plugin that writes to it must use atomics. Every hammer_vu_* call may
 * suspend the coroutine (never block the thread yourself: no sleep(), no
 * blocking sockets; use hammer_vu_sleep_ms).
 *
 * Ownership: strings returned by hammer_vu_* belong to the VU and stay
 * valid until the next call on that VU. The hammer_scenario struct and its
 * strings must live as long as the plugin is loaded.
 *
 * Errors: functions return 0 (or a non-negative value) on success and a
 * negative errno-style code on failure.
 *
 * Versions: a plugin states the API version it was built against and,
 * from version 2 on, the size of its hammer_scenario (HAMMER_SCENARIO_ABI
 * sets both). A version only ever adds fields at the end of the struct and
 * functions, so hammer loads a plugin of its own version or any older one,
 * reading only the fields that plugin's struct holds (the rest count as
 * NULL); it refuses, saying which versions it supports, a plugin of a
 * newer version.
 *   1  the fields up to teardown.
 *   2  struct_size; hammer_vu_sleep_ms returns whether the VU was
 *      cancelled (in version 1 it returned nothing: old plugins that ignore
 *      the result keep working). */
#ifndef HAMMER_SCENARIO_H
#define HAMMER_SCENARIO_H

#include <errno.h> /* ECANCELED */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HAMMER_SCENARIO_API_VERSION 2

typedef struct hammer_vu hammer_vu;

typedef struct hammer_scenario {
    int api_version;    /* HAMMER_SCENARIO_API_VERSION as the plugin was built */
    const char *name;   /* the NAME in `hammer scenario NAME` */
    const char *help;   /* one line for `hammer list` */
    const char *route;  /* default --route (what hammer_vu_load_page loads) */
    const char *action; /* default --action */
    const char *signal; /* default --signal */
    /* Optional: called once before the VUs start, with the --opt KEY=VALUE
     * pairs given on the command line. Return 0, or a negative code and a
     * one-line reason in why (hammer exits 2 with it). */
    int (*setup)(const char *const *opts, int n_opts, void **state, char *why, size_t whylen);
    /* Required: the life of one VU. Return 0 when it ended normally. */
    int (*vu_body)(hammer_vu *vu, void *state);
    /* Optional: the end-of-run verdict. Return true when the scenario's
     * promise held; otherwise write why. */
    bool (*check)(void *state, char *why, size_t whylen);
    /* Optional: release state. */
    void (*teardown)(void *state);
    /* Version 2: sizeof(hammer_scenario) as the plugin was built. */
    size_t struct_size;
} hammer_scenario;

/* The first members of every scenario definition:
 *     static const hammer_scenario s = {HAMMER_SCENARIO_ABI, .name = ...};  */
#define HAMMER_SCENARIO_ABI                                                                        \
    .api_version = HAMMER_SCENARIO_API_VERSION, .struct_size = sizeof(hammer_scenario)

/* The run's options, as the user gave them (or the scenario's defaults). */
const char *hammer_vu_route(const hammer_vu *vu);
const char *hammer_vu_action_name(const hammer_vu *vu);
const char *hammer_vu_signal_name(const hammer_vu *vu);
/* This VU's number, 0 .. -c minus 1. */
int hammer_vu_id(const hammer_vu *vu);

/* Claims one action from the run's -n budget. False when the budget is
 * spent or the run is stopping: the VU should finish. */
bool hammer_vu_next(hammer_vu *vu);

/* GETs path with the VU's cookies, keeps Set-Cookie, and scrapes the php-via
 * context id and the URL of the run's --action. Returns the HTTP status, or
 * a negative code (the reason is counted and reported). */
int hammer_vu_load_page(hammer_vu *vu, const char *path);
/* The context id of the last page load, or NULL. */
const char *hammer_vu_ctx(const hammer_vu *vu);

/* Opens the VU's SSE stream for its context (reconnecting with backoff
 * while the VU lives) and waits up to timeout_ms for its first state. */
int hammer_vu_open_sse(hammer_vu *vu, int timeout_ms);

/* POSTs the action `name` (NULL: the run's --action) the way Datastar
 * does: the last-seen signals, via_ctx and extra_json's fields (may be
 * NULL) as the JSON body, with the cookie and Origin. A field of
 * extra_json named as a signal the tab has (`count`) replaces that
 * signal under its wire id (`count__bench_counter__1a2b`). Records its
 * latency and counts its outcome. Returns the HTTP status or a negative
 * code. */
int hammer_vu_action(hammer_vu *vu, const char *name, const char *extra_json);

/* Waits up to timeout_ms for a patch after the last action; records the
 * action -> patch latency. 0 when one arrived, -ETIMEDOUT otherwise. */
int hammer_vu_wait_patch(hammer_vu *vu, int timeout_ms);

/* The last-seen integer value of a signal (matched as php-via names it:
 * exact, TAB or scoped form). 0, or -ENOENT. */
int hammer_vu_signal_int(hammer_vu *vu, const char *name, int64_t *out);

/* GETs path (not counted as an action). Returns the status or a negative code. */
int hammer_vu_get(hammer_vu *vu, const char *path);

/* Suspends this VU for ms milliseconds (other VUs keep running). Returns 0
 * after the whole pause, or -ECANCELED when the run is stopping (Ctrl-C,
 * the target stopped answering) or the VU was cancelled, before or during
 * the pause: the VU should wrap up and return. The end of the -n or -d
 * budget is not a cancellation (hammer_vu_next says so), so a VU may still
 * pause to let its last patch land. */
int hammer_vu_sleep_ms(hammer_vu *vu, int ms);

/* Marks this VU as failed its check, with a reason (the first one shows). */
void hammer_vu_fail(hammer_vu *vu, const char *why);

#endif
