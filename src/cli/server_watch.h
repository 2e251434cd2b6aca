/* server_watch.h — samples the target's /_health (php-via's, and
 * bench_app's) during a pass and after it, for soaks.
 *
 * Before the pass: one GET /_health is the baseline. Its numeric fields
 * (objects flattened to "connections_contexts", arrays of objects summed
 * per field to "workers_sse", booleans as 0/1, identifiers such as "id"
 * and "worker" left out; at most HM_SERVER_FIELDS) are published to the
 * run's gauges, where the interval reporter and the metrics endpoint read
 * them. Then the interval reporter takes one sample at each interval's
 * end, before it writes that interval's line (hm_server_watch_sample as
 * its before_tick), so a line and its JSON describe the interval they
 * close; each sample on a connection of its own from an epoll loop of its
 * own, so the run's connections, loops and request counts never see it.
 * After the pass, when asked (-d or --watch-grace), it samples until the
 * held fields (contexts, sse) are back at the baseline, or what is left is
 * held by SSE streams hammer closed that the server still counts (php-via
 * notices those only at its next write: no wait helps), or the grace
 * period is over; while it waits it says so. The verdict (results.h,
 * hm_server_verdict) weighs what is left against what hammer's own clients
 * opened.
 *
 * Failure never touches the run: a /_health that is missing, answers
 * other than 200, or sends no JSON object with numbers is said once (on
 * stderr and in the report) and the watch stops; a sample that could not
 * connect or timed out (a server restarting) is skipped. Ctrl-C ends the
 * grace period at once.
 *
 * Ownership: one watch per process at a time (begin, then end). The
 * options' target and gauges must outlive the watch; the report is the
 * caller's and is written by begin and end only. */
#ifndef HM_CLI_SERVER_WATCH_H
#define HM_CLI_SERVER_WATCH_H

#include "scenarios/scenario.h"

typedef struct hm_server_watch_options {
    const hm_http_target *target;
    int64_t interval_ns;    /* the reporter's: a sample during the pass waits at most this */
    int64_t timeout_ns;     /* of one sample */
    hm_live_gauges *gauges; /* where samples are published */
} hm_server_watch_options;

/* Contexts and SSE streams (a field whose last `_` part is "contexts" or
 * "sse"): what a server holds for clients, so what should come back once
 * they left. */
bool hm_server_watch_is_held(const char *name);

/* Takes the baseline into rep. 0, or a negative error with rep->stopped
 * saying why (the watch is then off; nothing to end). */
int hm_server_watch_begin(const hm_server_watch_options *o, hm_server_report *rep);

/* Takes one sample and publishes it to the gauges (a no-op when the watch
 * is off or stopped). Between begin and end, from one thread at a time:
 * the interval reporter's hm_progress_options.before_tick. */
void hm_server_watch_sample(void *unused);

typedef struct hm_server_watch_end_options {
    bool check;       /* compare after the pass (-d or --watch-grace) */
    int64_t grace_ns; /* how long it may wait */
    /* What hammer's clients opened during the pass (page loads, SSE
     * streams) and closed by its end: what the server may still hold. */
    uint64_t own_contexts, own_streams;
    /* Where the wait is said on stdout: a line refreshed on a terminal, or
     * one line; neither with -q. */
    bool live_line, lines;
} hm_server_watch_end_options;

/* Ends the watch; when e->check, samples after the pass (rep->after,
 * after_t/after_v, verdict, waited_s). A no-op when begin failed. */
void hm_server_watch_end(hm_server_report *rep, const hm_server_watch_end_options *e);

#endif
