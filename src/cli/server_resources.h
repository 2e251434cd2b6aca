/* server_resources.h — samples what the server's processes use (RSS, CPU
 * time, open file descriptors, threads) once per interval, for soaks that
 * look for leaks (docs/output.md, "Server resources").
 *
 * Two sources, each published under its own fields and judged on its own
 * (stats/resources.h, hm_res_source), never summed: processes on this machine by
 * pid (--server-pid, the embedded bench_app, the matrix's servers), each
 * with all its descendants (worker processes), read from /proc; and a
 * Prometheus text exposition endpoint (--server-metrics URL:
 * process-exporter's namedprocess_namegroup_* families, or the client
 * libraries' process_* ones), one GET per sample with hammer's HTTP client
 * on an epoll loop of its own. The figures are published as server watch
 * fields (stats/resources.h names them), so interval lines, JSON, the
 * series, the metrics endpoint and the reports carry them; the leak
 * verdict is stats/resources.h's.
 *
 * Failure never touches the run: a process that is gone is said once on
 * stderr and counts no more (its CPU time stays in the sum); an endpoint
 * that does not answer is said once and sampled again next interval.
 *
 * Ownership: one sampler per process (begin, samples, end); begin copies
 * the options (the gauges must outlive the sampler). */
#ifndef HM_CLI_SERVER_RESOURCES_H
#define HM_CLI_SERVER_RESOURCES_H

#include "stats/resources.h"

#include <sys/types.h>

#define HM_SERVER_PIDS_MAX 16

typedef struct hm_server_resources_options {
    pid_t pids[HM_SERVER_PIDS_MAX];
    int n_pids;
    const char *metrics_url; /* or NULL */
    int64_t timeout_ns;      /* of one GET */
    int64_t duration_ns;     /* -d, for the live verdict's warm-up; 0: the time so far */
    hm_live_gauges *gauges;
} hm_server_resources_options;

/* Takes the first sample and publishes it. 0, or -EINVAL with why (a bad
 * --server-metrics URL: a usage error). Nothing to sample (no pid, no
 * URL): 0, and the sampler stays off. */
int hm_server_resources_begin(const hm_server_resources_options *o, char *why, size_t whylen);
/* One sample, published (a no-op when off). From one thread at a time:
 * the interval reporter's before_tick. */
void hm_server_resources_sample(void);
/* Ends the sampler (a no-op when off). */
void hm_server_resources_end(void);
/* The leak verdict on one source's samples so far (RSS and fds; known
 * false when too few), for the metrics endpoint; false when the last run
 * did not sample that source. Any thread. */
bool hm_server_resources_live(hm_res_source src, hm_leak *rss, hm_leak *fds);

#endif
