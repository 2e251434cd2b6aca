/* metrics.h — --metrics-listen HOST:PORT: the run's live counters for
 * Prometheus while it goes (a soak watched in Grafana rather than in a
 * terminal).
 *
 * One plain thread with its own listening socket answers GET /metrics:
 * OpenMetrics 1.0.0 text when the scraper asks for it (Prometheus does),
 * the Prometheus text format 0.0.4 otherwise (curl, promtool). Everything
 * it serves is read through hm_progress_live_totals and the run's
 * hm_live_gauges, so it never stops an engine thread. Counters count since
 * hammer started, over every pass; docs/output.md lists the metrics.
 *
 * Ownership: the server copies what hm_metrics_options points to, except
 * gauges, which must outlive hm_metrics_stop. */
#ifndef HM_CLI_METRICS_H
#define HM_CLI_METRICS_H

#include "stats/results.h"

#include <stddef.h>

typedef struct hm_metrics_options {
    const char *listen;     /* HOST:PORT ([::1]:PORT for IPv6; port 0: any free one) */
    const char *scenario;   /* for hammer_run_info */
    const char *target;     /* likewise */
    hm_live_gauges *gauges; /* the run's gauges and server watch */
} hm_metrics_options;

/* Checks the form of HOST:PORT without resolving it; 0 or -EINVAL. */
int hm_metrics_parse_listen(const char *listen);

/* Binds and starts serving. On success *port is the port bound (useful
 * with port 0). -errno (and why) when the address cannot be used. */
int hm_metrics_start(const hm_metrics_options *o, int *port, char *why, size_t whylen);

/* Writes the metrics as they are now; OpenMetrics when openmetrics, else
 * the Prometheus text format. 0 or -EIO. */
int hm_metrics_write(FILE *f, bool openmetrics);

/* Stops the server (a scrape in progress finishes first); safe when it
 * never started. */
void hm_metrics_stop(void);

#endif
