/* via_hammer_internal.h — what the hammer model's two files share:
 * via_hammer.c (contexts, set-up, observers, the reloader, the finisher,
 * the verdict) and via_hammer_senders.c (the senders, as coroutines or
 * state machines). No other file includes it; its functions are prefixed
 * vh_. */
#ifndef HM_LOAD_VIA_HAMMER_INTERNAL_H
#define HM_LOAD_VIA_HAMMER_INTERNAL_H

#include "load/sender_pool.h"
#include "proto/via_client.h"

#include "proto/h2_client.h"
#include "load/workload.h"

#define SEND_RING (1u << 20)

typedef struct observer observer;

/* One context of the run: the page load's, and one per reload. */
typedef struct ctx_gen {
    struct ctx_gen *prev;
    hm_via_page page;
    char *cookie; /* the session's Cookie header value, sized to the jar */
    char *body;   /* the action body, identical for every action */
    char *req;    /* the whole action request (state-machine senders) */
    size_t req_len;
    int64_t ready_by;            /* senders wait for its baseline until then */
    int64_t seq_base;            /* the action sequence number its senders started at */
    _Atomic uint64_t ok;         /* OK actions sent to it */
    _Atomic uint64_t unanswered; /* sent to it, the connection broke before the answer */
    atomic_bool dead;            /* the server lost it */
    atomic_bool ready;           /* the main observer has its baseline (or gave up): fire */
    atomic_bool had_ok;          /* an action on it was OK: a reload that recovered */
    hm_watch watch;              /* the main observer's view of it, once the observer left it */
    bool watched;
    /* For coroutines of any thread that wait on this context: each gate
     * opens once, when its flag is set, and all of them when the run ends
     * (gens_open), so no waiter sleeps in a polling loop. */
    hm_latch ready_gate;    /* ready, or dead */
    hm_latch dead_gate;     /* dead */
    hm_latch replaced_gate; /* a newer context was published, or the reloader ended */
} ctx_gen;

typedef struct counter_run {
    const hm_options *o;
    hm_results *r;
    hm_thread_stats *stats; /* one per thread */
    hm_cookie_jar jar;      /* thread 0 only, once the run started */
    hm_via_page page;       /* set-up's page load, moved into the first generation */
    char fatal[512];
    _Atomic(ctx_gen *) cur; /* the newest context; older ones through prev */
    json_t *signals;        /* the page's first signals, for rebuilding the body */
    /* Since when every request failed (0: the last one went well), and
     * whether a reload happened since: the recovery time. */
    _Atomic int64_t trouble_ns;
    atomic_bool reloaded;
    /* The server answered but served no page for --timeout: senders stop
     * waiting for a new context and the check fails with why. */
    atomic_bool reload_gave_up;
    char reload_why[256];
    /* Until when the reloader holds off after reloads that did not recover
     * (several workers that do not share contexts lose every new one too):
     * meanwhile senders go on at the dead context, as --no-reload does. */
    _Atomic int64_t holdoff_until;
    atomic_bool reloader_gone; /* no newer context will come */

    _Atomic int64_t next_seq;
    _Atomic int64_t ok_total;
    atomic_int workers_left;
    atomic_bool go;        /* baseline taken (or given up): start firing */
    hm_latch go_gate;      /* opened with go: senders of every thread wait on it */
    hm_latch senders;      /* one per sender: the finisher waits for zero */
    hm_event progress;     /* thread 0: a patch came, or an observer ended */
    _Atomic int start_err; /* a coroutine could not be started: the run fails */
    int64_t *send_ns;      /* SEND_RING slots, by action sequence */
    int64_t t_start, t_end;
    _Atomic int64_t t_go; /* when the senders were released (for -d) */
    hm_liveness live;

    observer *obs; /* thread 0 only */
} counter_run;

struct observer {
    counter_run *run;
    int index;
    hm_via_page page; /* extra observers load their own page */
    hm_http_conn conn;
    hm_watch watch;
    hm_task task;
    bool connected, streaming, empty;
    int64_t matched; /* actions whose patch latency is recorded */
    int status;
    ctx_gen *gen;          /* the main observer's context */
    uint64_t patches_done; /* patches seen on contexts it left */
    uint64_t extra_done;   /* and the events there that answered no action */
    char where[48];        /* "SSE GET /_sse, observer N" */
};

/* One of the -c connections: over HTTP/2 the one its --streams senders
 * share (freed by the last of them); over HTTP/1.1 each sender's own. */
typedef struct sender_conn {
    hm_h2_conn *h2;
    int users;
} sender_conn;

typedef struct sender {
    counter_run *run;
    int thread;
    int index; /* connection number over all threads */
    sender_conn *sc;
} sender;

/* Plain HTTP: a thread's senders as state machines (load/sender_pool.h) behind one
 * coroutine, which waits for the gate, runs them and counts them done. They
 * follow the contexts as sender_coro does: each connection's token is the
 * context it fires at. */
typedef struct sender_thread {
    counter_run *run;
    int thread, first, n;
} sender_thread;

/* via_hammer.c: a request failed (trouble since now, if not already). */
void vh_note_trouble(counter_run *run);
/* via_hammer.c: a request went well; ends trouble, recording the recovery. */
void vh_note_ok(counter_run *run, hm_thread_stats *st, int64_t now);
/* via_hammer.c: opens the contexts' gates, all of them or the replaced ones. */
void vh_gens_open(counter_run *run, bool all);
/* via_hammer.c: the server lost g (counted once); wakes its waiters. */
void vh_mark_lost(counter_run *run, ctx_gen *g, hm_thread_stats *st);
/* via_hammer.c: Ctrl-C, the target dead, or every sender done. */
bool vh_run_over(counter_run *run);
/* via_hammer_senders.c: one sender ended; the last opens every gate. */
void vh_sender_done(counter_run *run);
/* via_hammer_senders.c: a coroutine sender (TLS, HTTP/2); p is its sender. */
void vh_sender_coro(void *p);
/* via_hammer_senders.c: a thread's state-machine senders; p is a sender_thread. */
void vh_senders_driver(void *p);

#endif
