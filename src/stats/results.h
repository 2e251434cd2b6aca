/* results.h — what a run measured, and how it is reported.
 *
 * Each engine thread fills its own hm_thread_stats (no sharing, no atomics);
 * hm_thread_stats_merge() adds them up after the threads are joined. The
 * report functions read a hm_results and the run's description; they own
 * nothing and write only to the FILE or path given. */
#ifndef HM_STATS_RESULTS_H
#define HM_STATS_RESULTS_H

#include "base/hm_base.h"
#include "base/hm_fail.h"
#include "stats/hdr.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#define HM_STATUS_MAX 600

typedef struct hm_thread_stats {
    hm_hdr action_us;  /* request sent -> response complete (with -R: from the
                        * intended send time, i.e. corrected for coordinated
                        * omission) */
    hm_hdr service_us; /* with -R: from the actual send (uncorrected) */
    hm_hdr patch_us;   /* action sent -> the patch carrying its effect */
    hm_hdr connect_us; /* TCP connect */
    hm_hdr page_us;    /* page load (GET of the route) */
    hm_hdr tls_us;     /* TLS handshake */
    uint64_t tls_full, tls_resumed;
    uint64_t tls_fail[HM_TLS__COUNT]; /* by hm_tls_fail */
    char tls_first_reason[160];       /* OpenSSL's words for the first failure */
    uint64_t sent, ok, failed;
    uint64_t by_status[HM_STATUS_MAX];
    uint64_t by_fail[HM_FAIL__COUNT];
    uint64_t connects, reconnects, retries;
    /* The live view the interval reporter reads from another thread: the
     * counters are written only by the owning thread; interval_us is
     * swapped out by the reporter under interval_lock. */
    _Atomic uint64_t live_sent, live_ok;
    hm_hdr interval_us;
    atomic_flag interval_lock;
} hm_thread_stats;

/* Allocates the histograms (1 µs .. 1 h, 3 significant digits). */
int hm_thread_stats_init(hm_thread_stats *s);
void hm_thread_stats_destroy(hm_thread_stats *s);
/* dst += src. */
void hm_thread_stats_merge(hm_thread_stats *dst, const hm_thread_stats *src);
/* Records an action's (request's) latency, also for the interval reporter. */
void hm_thread_stats_record_action(hm_thread_stats *s, int64_t us);
/* With -R: records the corrected (from the intended send time) and the
 * service (from the actual send) latency of one action. */
void hm_thread_stats_record_scheduled(hm_thread_stats *s, int64_t corrected_us, int64_t service_us);
/* Counts one finished request: status (0 when it failed) or the failure kind. */
void hm_thread_stats_count(hm_thread_stats *s, int status, hm_fail_kind fail);

#define HM_MAX_WORKERS 64

/* One variant of a scenario that compares several (sticky). */
typedef struct hm_variant_result {
    const char *name;
    hm_thread_stats stats;
    uint64_t workers[HM_MAX_WORKERS]; /* responses by X-Via-Worker */
    uint64_t sse_ok, sse_failed;
    double wall_seconds;
} hm_variant_result;

/* A pass/fail condition on the results, e.g. "p99<50ms", "ok>=100%",
 * "rps>=1000", "patch_p99<200ms". */
typedef struct hm_threshold {
    const char *text;
    char metric[16];
    char op[3];
    double limit; /* µs for latencies, percent for ok, per second for rps */
    double value; /* measured, after evaluation */
    bool passed;
} hm_threshold;

/* Parses text (kept by pointer); -EINVAL with a reason when malformed. */
int hm_threshold_parse(const char *text, hm_threshold *out, char *why, size_t whylen);

#define HM_MAX_THRESHOLDS 16

/* The run as a whole: the merged stats plus what the scenario checked. */
typedef struct hm_results {
    hm_thread_stats total;
    const char *scenario;
    const char *pass;        /* --passes name, or "run" */
    const char *target;      /* URL */
    const char *target_note; /* e.g. "embedded bench_app", or NULL */
    const char *engine;
    int threads, concurrency;
    const char *unit; /* "actions" or "requests" */
    double wall_seconds;
    bool interrupted; /* stopped by SIGINT/SIGTERM */
    /* The workload's check. */
    bool has_check;
    const char *check_name;
    bool check_passed;
    char check_detail[256];
    const char *mode; /* "hammer" or "browser" (php-via scenarios) */
    /* Signal check (counter-like scenarios). */
    bool has_signal;
    const char *signal_name;
    bool baseline_known, final_known;
    int64_t baseline, final_value;
    bool matches_ok;
    /* SSE observation. */
    bool has_patches;
    uint64_t patches_observed;
    int observers, observers_connected;
    /* Connection accounting. */
    uint64_t conns_requested;
    /* Variants (sticky), reported as a table. */
    hm_variant_result variants[4];
    int n_variants;
    bool total_is_informational; /* failures in the totals are expected */
    bool tls, tls_insecure;
    /* Open-loop rate (-R). */
    double rate_target;    /* actions/s, 0 when closed-loop */
    double client_cpu_pct; /* hammer's CPU over the run, % of its threads */
    hm_threshold thresholds[HM_MAX_THRESHOLDS];
    int n_thresholds;
    /* Why the run failed before or outside the requests, or NULL. */
    const char *fatal;
    char fatal_buf[512];    /* storage fatal may point to */
    bool fatal_usage;       /* fatal is the input's fault (a flow that does not fit the
                             * app), whatever was sent before: exit 2 */
    struct hm_steps *steps; /* a scenario's named rows and checks (stats/steps.h), or
                             * NULL; owned, hm_steps_free */
} hm_results;

/* Prints the human summary. */
void hm_report_print(FILE *f, const hm_results *r);
/* The JSON document of one run (see docs/output.md); the caller owns it. */
struct json_t;
struct json_t *hm_report_json(const hm_results *r);
/* Writes any JSON document to path atomically (temporary file, rename). */
int hm_json_write_atomic(const char *path, struct json_t *root);
/* Writes the JSON document (see docs/output.md) to path atomically
 * (temporary file, then rename). Returns 0 or a negative errno. */
int hm_report_write_json(const char *path, const hm_results *r);
/* Measures every threshold against the results (sets value and passed). */
void hm_thresholds_evaluate(hm_results *r);
/* Measures one threshold: latencies from action (or patch, for patch_*),
 * ok as ok/sent %, rps as sent/wall_seconds (hammer merge uses it on
 * merged histograms). */
void hm_threshold_evaluate(hm_threshold *th, const hm_hdr *action, const hm_hdr *patch, uint64_t ok,
                           uint64_t sent, double wall_seconds);
/* Several passes of one scenario (--passes): the change from each pass to
 * the next, printed and as one JSON document {"passes":[...],"changes":[...]}. */
void hm_report_print_passes(FILE *f, const hm_results *runs, int n);
struct json_t *hm_report_passes_json(const hm_results *runs, int n);
/* True when every request succeeded and every check held. */
bool hm_results_passed(const hm_results *r);

/* ---- the interval reporter --------------------------------------------- */

/* Gauges the scenarios keep for the live line. The run owns one (the CLI,
 * for all its passes) and hands its address to the scenario (hm_options)
 * and to the reporter; any thread may update them. */
typedef struct hm_live_gauges {
    _Atomic int64_t sse_open;   /* SSE streams open now */
    _Atomic int64_t reconnects; /* SSE streams reopened so far */
} hm_live_gauges;

typedef struct hm_progress_options {
    int64_t interval_ns;          /* how often to report */
    bool live_line;               /* a refreshing line on a terminal, not one per interval */
    bool quiet;                   /* no lines on stdout (-q) */
    FILE *json;                   /* JSON lines, one per interval, or NULL */
    struct hm_hlog *hlog;         /* HdrHistogram interval log, or NULL; with the
                                   * last partial interval written at stop */
    const char *hlog_tag;         /* tag of its lines (the pass), or NULL */
    const char *unit;             /* "actions" or "requests" */
    const hm_live_gauges *gauges; /* read every interval; NULL shows zeros */
} hm_progress_options;

/* Starts the reporter thread. Returns 0 or a negative errno. */
int hm_progress_start(const hm_progress_options *o);
/* Stops it (printing nothing more). */
void hm_progress_stop(void);
/* The per-thread stats the reporter reads: n records `stride` bytes apart,
 * each starting with (or being) a hm_thread_stats. Detach before freeing. */
void hm_progress_attach(void *stats, int n, size_t stride);
void hm_progress_detach(void);

#endif
