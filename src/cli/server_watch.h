/* server_watch.h — samples the target's /_health (php-via's, and
 * bench_app's) during a pass and after it, for soaks.
 *
 * Before the pass: one GET /_health is the baseline. Its numeric fields
 * (objects flattened to "connections_contexts", arrays of objects summed
 * per field to "workers_sse", booleans as 0/1, identifiers such as "id"
 * and "worker" left out; at most HM_SERVER_FIELDS) are published to the
 * run's gauges, where the interval reporter and the metrics endpoint read
 * them. A thread of its own then samples every interval, each time on a
 * connection of its own from an epoll loop of its own, so the run's
 * connections, loops and request counts never see it. After the pass,
 * when asked (-d or --watch-grace), it samples until every held field
 * (contexts, sse) is back at its baseline or the grace period is over.
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
    int64_t interval_ns;    /* between samples during the pass */
    int64_t timeout_ns;     /* of one sample */
    hm_live_gauges *gauges; /* where samples are published */
} hm_server_watch_options;

/* Contexts and SSE streams (a field whose last `_` part is "contexts" or
 * "sse"): what a server holds for clients, so what should come back once
 * they left. */
bool hm_server_watch_is_held(const char *name);

/* Takes the baseline into rep and starts sampling. 0, or a negative error
 * with rep->stopped saying why (the watch is then off; nothing to end). */
int hm_server_watch_begin(const hm_server_watch_options *o, hm_server_report *rep);

/* Stops sampling; when check, samples after the pass until the held
 * fields came back or grace_ns passed (rep->after, came_back, waited_s).
 * A no-op when begin failed. */
void hm_server_watch_end(hm_server_report *rep, bool check, int64_t grace_ns);

#endif
