/* via_user.h — one php-via user of the hammer load model: a session (one
 * cookie jar) on one page route whose context the server may lose (a
 * restart). The built-in scenarios' hammer model (via_hammer.c) runs one;
 * a flow in the hammer model (flow/flow_hammer.c) one per flow of its file.
 * A user has:
 *  - its contexts, as generations: the page load's, and one per reload.
 *    Senders of any thread fire at the newest (hm_via_user_target), and
 *    account each outcome against the one it went to (hm_via_user_account);
 *  - its observers, each an EventSource (event_source.h) on thread 0:
 *    the main one follows the newest context (reconnecting with the
 *    reload back-off, at once when a reload publishes one), takes its
 *    baseline, completes action->patch latencies from the send-time ring,
 *    and finds a context lost (php-via's reload script, an empty 200, a
 *    400); extra ones (--observers) are other tabs of the session, each on
 *    a page of its own;
 *  - its reloader (thread 0): once the newest context is lost, loads the
 *    route again with the same cookies, as php-via's reload script makes a
 *    browser do, retrying with HM_BACKOFF_RELOAD while the server is away,
 *    and publishes the new context (the model builds its requests from it);
 *  - the end of the run: the caught-up rule the finisher waits on
 *    (hm_watch_caught_up) and the check over every generation (the newest
 *    exactly, a lost one leniently).
 *
 * Ownership: the user owns its generations (until hm_via_user_free; senders
 * on other threads may hold an older one until the run ends), its
 * observers and their pages; it borrows cfg's pointers, which must outlive
 * it. Threads share only its atomics, the generations' and the send-time
 * ring (a stale slot only skews one latency sample). */
#ifndef HM_LOAD_VIA_USER_H
#define HM_LOAD_VIA_USER_H

#include "load/event_source.h"
#include "load/request.h"
#include "load/run.h"
#include "load/workload.h"
#include "proto/via_client.h"

#define HM_VIA_USER_RING (1u << 20) /* send-time slots, by the user's action number */

/* One context of a user: the first page load's, and one per reload. */
typedef struct hm_ctx_gen {
    struct hm_ctx_gen *prev;
    hm_via_page page;
    char *cookie;        /* the session's Cookie header value, sized to the jar */
    void *data;          /* the model's requests for it (cfg.make), freed by cfg.free_data */
    int64_t ready_by;    /* senders wait for its baseline until then */
    int64_t seq_base;    /* the user's action number when it was published */
    _Atomic uint64_t ok; /* OK actions sent to it */
    _Atomic uint64_t unanswered; /* sent to it, the connection broke before the answer */
    atomic_bool dead;            /* the server lost it */
    atomic_bool ready;           /* the main observer has its baseline (or gave up): fire */
    atomic_bool had_ok;          /* an action on it was OK: a reload that recovered */
    hm_watch watch;              /* the main observer's view of it, once the observer left it */
    bool watched;
    /* Each gate opens once, when its flag is set, and all of them when the
     * run ends (hm_via_user_open_all), so no waiter sleeps in a loop. */
    hm_latch ready_gate;    /* ready, or dead */
    hm_latch dead_gate;     /* dead */
    hm_latch replaced_gate; /* a newer context was published, or the reloader ended */
} hm_ctx_gen;

typedef struct hm_via_user hm_via_user;

typedef struct hm_via_user_cfg {
    const hm_options *o;
    const hm_workload *workload; /* the check the main stream is watched for */
    const char *signal;          /* its signal ("" for none) */
    hm_thread_stats *st;         /* thread 0's: streams, losses, reloads, patch latency */
    hm_liveness *live;
    hm_cookie_jar *jar;   /* the session's; thread 0 only once the run started */
    const char *action;   /* a reloaded page must offer it (NULL: cfg.make checks) */
    _Atomic int64_t *seq; /* the user's actions claimed so far (send-time ring index) */
    hm_event *progress;   /* thread 0: notified on each patch and an observer's end */
    hm_latch *run_end;    /* opens when every sender is done */
    int observers;        /* SSE streams: 0 (none), 1 (the main one), more: extra tabs */
    /* The model reads nothing of the streams but the watched signal's
     * values once the baseline is in (hm_watch.value_only): the built-in
     * hammer model; a flow reads the signals its steps name. */
    bool values_only;
    /* The model's hooks (user: cfg.user). make: fills g->data from g->page
     * and g->cookie; false (with why) when the page cannot serve the model.
     * on_baseline (may be NULL): the main stream showed a context's first
     * state (signals: what it showed), or ended: senders may go. over:
     * the run is over for anyone waiting on a context. make gets the reloaded
     * page's body (html, len) too. */
    bool (*make)(void *user, hm_ctx_gen *g, const char *html, size_t len, char *why, size_t whylen);
    void (*free_data)(void *data);
    void (*on_baseline)(void *user, json_t *signals);
    bool (*over)(void *user);
    void *user;
} hm_via_user_cfg;

typedef struct hm_via_observer {
    hm_via_user *u;
    int index;          /* 0: the main observer */
    hm_via_page page;   /* extra observers load their own page */
    hm_event_source es; /* its stream, and its view of it (es.watch) */
    hm_sse_end end;     /* why the source last stopped */
    hm_task task;
    hm_event ev; /* its stream's bytes arrived, or it ended */
    bool connected;
    int64_t matched;       /* the user's actions whose patch latency is recorded */
    hm_ctx_gen *gen;       /* the main observer's context */
    uint64_t patches_done; /* patches seen on contexts it left */
    uint64_t extra_done;   /* and the events there that answered no action */
    char where[48];        /* "SSE GET /_sse, observer N" */
} hm_via_observer;

struct hm_via_user {
    hm_via_user_cfg cfg;
    char *route;               /* what a reload loads */
    _Atomic(hm_ctx_gen *) cur; /* the newest context; older ones through prev */
    /* Since when every request failed (0: the last one went well), and
     * whether a reload happened since: the recovery time. */
    _Atomic int64_t trouble_ns;
    atomic_bool reloaded;
    /* The server answered but served no usable page for --timeout: senders
     * stop waiting for a new context and the check fails with why. */
    atomic_bool reload_gave_up;
    char reload_why[256];
    /* Until when the reloader holds off after reloads that did not recover
     * (workers that do not share contexts lose every new one too):
     * meanwhile senders go on at the dead context, as --no-reload does. */
    _Atomic int64_t holdoff_until;
    atomic_bool reloader_gone; /* no newer context will come */
    int64_t *send_ns;          /* HM_VIA_USER_RING slots */
    hm_via_observer *obs;      /* cfg.observers of them */
    hm_task reloader;
};

/* Loads path (the page of action, when not NULL) into *page with the
 * jar's cookies, as a user pressing reload does: while the server is away
 * or answers an error, tries again with HM_BACKOFF_RELOAD; each failed try
 * counts in st->reload_failed and reaches the liveness watch. Returns 0
 * (loaded: its page load recorded in st), -ECANCELED when the run ended
 * first (Ctrl-C, the target dead, or go_on(arg) false before a try), or
 * -ETIMEDOUT when the server answered but served no page for --timeout.
 * why: the last failed try's reason (also on -ECANCELED), empty when no
 * try failed. The one reload loop of both load models. */
int hm_via_reload_page(hm_http_conn *c, hm_cookie_jar *jar, const char *path, const char *action,
                       const hm_options *o, hm_thread_stats *st, hm_liveness *live,
                       bool (*go_on)(void *arg), void *arg, hm_via_page *page, char *why,
                       size_t whylen);

/* Sets u up (no generation yet). -ENOMEM. */
int hm_via_user_init(hm_via_user *u, const hm_via_user_cfg *cfg);
/* Frees the generations, observers and ring; after the run. */
void hm_via_user_free(hm_via_user *u);
/* Publishes page (moved from *page), loaded from route by the model
 * itself (not a reload), as the newest context, with data (the model's
 * requests for it, owned by the context from here; NULL: the model fills
 * g->data before any sender fires at it). Its cookie comes from the jar.
 * Thread 0, or before the run. NULL when out of memory (data and *page
 * are then still the caller's). */
hm_ctx_gen *hm_via_user_publish(hm_via_user *u, const char *route, hm_via_page *page, void *data);

/* Thread 0: spawns the observers and the reloader on loop. 0 or -errno. */
int hm_via_user_spawn(hm_via_user *u, hm_loop *loop);
/* Thread 0: waits, until the absolute deadline until, for the main stream
 * to show the effect of every OK action on the newest context (each
 * patch, and the observer's end, wakes it); then ends the streams. */
void hm_via_user_finish(hm_via_user *u, int64_t until);
/* Thread 0: ends the streams and the reloader without waiting. */
void hm_via_user_cancel(hm_via_user *u);

/* A sender's context for its next action, given the one it fired at last
 * (NULL at first): the newest, once its baseline is known (or --timeout
 * passed), else *g. Returns 1 to fire at *g, 0 to wait (for the newest's
 * baseline, or while the reloader gets a new context: *gate is the latch
 * to wait on until *until, 0 for no deadline), -1 when the run is over for
 * the sender. t_go: when the senders started (for -d). The one rule of
 * every sender, state machine or coroutine. */
int hm_via_user_target(hm_via_user *u, hm_ctx_gen **g, int64_t t_go, hm_latch **gate,
                       int64_t *until);
/* Stamps the send time of the user's action number k into the ring. */
void hm_via_user_stamp(hm_via_user *u, int64_t k, int64_t ns);
/* An action's outcome on g (status 0: no answer; c: its connection). */
void hm_via_user_account(hm_via_user *u, hm_ctx_gen *g, hm_thread_stats *st, const hm_http_conn *c,
                         int status);
/* A request failed before it was sent (the server went away). */
void hm_via_user_note_trouble(hm_via_user *u);
/* Opens every context's gates: the run is over for whoever waits. */
void hm_via_user_open_all(hm_via_user *u);

/* The user's check at the end, over every context its main observer watched. */
typedef struct hm_via_user_verdict {
    bool passed;
    bool seen;              /* some context showed its state (a baseline) */
    bool baseline_known;    /* the newest did */
    bool reloaded;          /* more than one context */
    uint64_t last_ok;       /* OK actions on the newest context */
    uint64_t swallowed;     /* OK actions lost contexts swallowed */
    int64_t baseline, last; /* the newest context's signal, first and last */
    uint64_t patches, opening, extra;
    int connected; /* observers whose stream opened */
    char why[200];
} hm_via_user_verdict;
void hm_via_user_judge(hm_via_user *u, hm_via_user_verdict *v);
/* The check's detail as the summary words it: why it failed, and after a
 * reload the OK actions of the newest context and those lost ones
 * swallowed. */
void hm_via_user_detail(const hm_via_user_verdict *v, char *buf, size_t len);

#endif
