/* metrics.h — --metrics-listen HOST:PORT: the run's live counters for
 * Prometheus while it goes (a soak watched in Grafana rather than in a
 * terminal).
 *
 * One plain thread with its own listening socket answers GET /metrics:
 * OpenMetrics 1.0.0 text when the scraper asks for it (Prometheus does),
 * the Prometheus text format 0.0.4 otherwise (curl, promtool). Everything
 * it serves is read through hm_progress_live_totals and the run's
 * hm_live_gauges, so it never stops an engine thread. Counters count since
 * hammer started, over every pass; docs/metrics.md lists the metrics.
 *
 * The thread polls every scraper connection on its own (at most 16 at
 * once; one more is answered 503), each with a whole-exchange deadline of
 * 10 s from accept, so a slow or stuck scraper never holds another one or
 * the end of the run: hm_metrics_stop closes whoever is still connected.
 *
 * Ownership: the server copies what hm_metrics_options points to, except
 * gauges, which must outlive hm_metrics_stop. */
#ifndef HM_CLI_METRICS_H
#define HM_CLI_METRICS_H

#include "stats/results.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct hm_metrics_options {
    const char *listen;     /* HOST:PORT ([::1]:PORT for IPv6; port 0: any free one) */
    const char *scenario;   /* for hammer_run_info */
    const char *target;     /* likewise */
    hm_live_gauges *gauges; /* the run's gauges and server watch */
    int shard_index;        /* --shard I/N; with N > 1, run_info gets shard="I/N" */
    int shard_count;
    const char *run_id; /* and run_id (shard.h), with N > 1 */
} hm_metrics_options;

/* Checks the form of HOST:PORT without resolving it; 0 or -EINVAL. */
int hm_metrics_parse_listen(const char *listen);

/* Binds and starts serving. On success *port is the port bound (useful
 * with port 0). -errno (and why) when the address cannot be used. */
int hm_metrics_start(const hm_metrics_options *o, int *port, char *why, size_t whylen);

/* Writes the metrics as they are now; OpenMetrics when openmetrics, else
 * the Prometheus text format. 0 or -EIO. */
int hm_metrics_write(FILE *f, bool openmetrics);

/* --metrics-linger: keeps serving for ns more (the run is over, its
 * counters final), so a last scrape gets them; says so on stderr unless
 * quiet (stdout, the summary, flushed first); returns early once
 * cut_short() (Ctrl-C) says so. At once when the server never started. */
void hm_metrics_linger(int64_t ns, bool quiet, bool (*cut_short)(void));

/* Stops the server and closes every scraper connection still open (one
 * dripping its request is not waited for); safe when it never started. */
void hm_metrics_stop(void);

#endif
