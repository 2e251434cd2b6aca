/* via_hammer_internal.h — what the hammer model's two files share:
 * via_hammer.c (set-up, the action request of each context, the finisher,
 * the results; the session itself is an hm_via_user) and
 * via_hammer_senders.c (the senders, as coroutines or state machines). No other file includes it;
 * its functions are prefixed vh_. */
#ifndef HM_LOAD_VIA_HAMMER_INTERNAL_H
#define HM_LOAD_VIA_HAMMER_INTERNAL_H

#include "load/sender_pool.h"
#include "load/via_user.h"
#include "proto/via_client.h"

#include "proto/h2_client.h"
#include "load/workload.h"

/* A context's action, serialized once for every sender of every thread:
 * every action of the hammer model is the same request (ctx_gen.data). */
typedef struct vh_req {
    char *body; /* the action body */
    char *req;  /* the whole request; it lives as long as the run, so it may go detached */
    size_t len;
} vh_req;

typedef struct counter_run {
    const hm_options *o;
    hm_results *r;
    hm_thread_stats *stats; /* one per thread */
    hm_cookie_jar jar;      /* thread 0 only, once the run started */
    hm_via_page page;       /* set-up's page load, moved into the first context */
    char fatal[512];
    hm_via_user user; /* the session: its contexts, observers and reloader */
    json_t *signals;  /* the page's first signals, for rebuilding the body */

    _Atomic int64_t next_seq;
    atomic_int workers_left;
    atomic_bool go;        /* baseline taken (or given up): start firing */
    hm_latch go_gate;      /* opened with go: senders of every thread wait on it */
    hm_latch senders;      /* one per sender: the finisher waits for zero */
    hm_event progress;     /* thread 0: a patch came, or an observer ended */
    _Atomic int start_err; /* a coroutine could not be started: the run fails */
    int64_t t_start, t_end;
    _Atomic int64_t t_go; /* when the senders were released (for -d) */
    hm_liveness live;
} counter_run;

/* A thread's senders as state machines (load/sender_pool.h) behind one
 * coroutine, which waits for the gate, runs them and counts them done; n
 * counts senders (over HTTP/2, stream slots). Each sender's token is the
 * context it fires at. */
typedef struct sender_thread {
    counter_run *run;
    int thread, first, n;
} sender_thread;

/* via_hammer.c: Ctrl-C, the target dead, or every sender done. */
bool vh_run_over(counter_run *run);
/* via_hammer_senders.c: one sender ended; the last opens every gate. */
void vh_sender_done(counter_run *run);
/* via_hammer_senders.c: a thread's state-machine senders; p is a sender_thread. */
void vh_senders_driver(void *p);

#endif
