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
#include "stats/interval_recorder.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#define HM_STATUS_MAX 600
#define HM_STATUS_EXAMPLES 8

/* What a run times. Each phase has a histogram in hm_thread_stats and
 * fixed live buckets (--metrics-listen); the names are the JSON keys under
 * latency_us and the metrics' phase label. */
typedef enum hm_phase {
    HM_PHASE_ACTION,  /* request sent -> response (corrected with -R) */
    HM_PHASE_SERVICE, /* with -R: from the actual send */
    HM_PHASE_PATCH,   /* action sent -> the patch carrying its effect */
    HM_PHASE_PAGE,    /* page load */
    HM_PHASE_CONNECT, /* TCP connect */
    HM_PHASE_TLS,     /* TLS handshake */
    HM_PHASE__COUNT
} hm_phase;

/* "action", "service", "patch", "page", "connect", "tls_handshake". */
const char *hm_phase_name(hm_phase p);

/* Upper bounds (µs) of the live buckets; one more bucket holds the rest. */
#define HM_LIVE_BUCKETS 19
extern const int64_t hm_live_bucket_le_us[HM_LIVE_BUCKETS];

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
    uint64_t tls_unfinished; /* connected, then cut or timed out before the handshake ended */
    uint64_t tls_fail[HM_TLS__COUNT]; /* by hm_tls_fail */
    char tls_first_reason[160];       /* OpenSSL's words for the first failure */
    uint64_t sent, ok, failed;
    /* Written only by the owning thread (relaxed stores), read live by the
     * reporter and the metrics endpoint. */
    _Atomic uint64_t by_status[HM_STATUS_MAX];
    _Atomic uint64_t by_fail[HM_FAIL__COUNT];
    uint64_t connects, reconnects, retries;
    /* Connect attempts that failed (refused, unreachable, timed out): not
     * actions, which wait and go out once a connect succeeds
     * (hm_thread_stats_connect_failed). */
    uint64_t connect_failed;
    uint64_t bytes_read, bytes_written; /* on the wire, TLS records included */
    /* Bodies that came with a Content-Encoding hammer decoded: their bytes
     * as received, and what they decoded to. */
    uint64_t coded_wire, coded_decoded;
    /* The first example of each failure kind, and of each non-2xx status
     * (up to HM_STATUS_EXAMPLES distinct ones). */
    hm_fail_example fail_first[HM_FAIL__COUNT];
    int status_first_code[HM_STATUS_EXAMPLES];
    hm_fail_example status_first[HM_STATUS_EXAMPLES];
    /* SSE streams: opened (200 and headers), failures by kind, the first. */
    uint64_t sse_opened;
    uint64_t sse_fail[HM_SSE_FAIL__COUNT];
    hm_sse_fail sse_first_kind;
    hm_fail_example sse_first;
    /* Streams the run ended itself while they held an unfinished line or
     * event (hm_sse_note_cut), and the most bytes one held. */
    uint64_t sse_cut, sse_cut_bytes;
    /* Streams the run ended after only comments (heartbeats) for longer
     * than --timeout. */
    uint64_t sse_comments_only;
    /* The live view the interval reporter reads from another thread: the
     * counters are written only by the owning thread; the reporter takes
     * the action latencies of each interval from `interval`. */
    _Atomic uint64_t live_sent, live_ok;
    _Atomic uint64_t live_bytes_read, live_bytes_written;
    _Atomic int64_t live_in_flight; /* requests sent and not yet answered */
    /* Per phase: counts in the fixed buckets (the last one past every
     * bound) and the sum of the samples, for --metrics-listen. */
    _Atomic uint64_t live_bucket[HM_PHASE__COUNT][HM_LIVE_BUCKETS + 1];
    _Atomic uint64_t live_sum_us[HM_PHASE__COUNT];
    hm_interval_recorder interval;
    /* Disruption (a server restart, a worker that lost the context): the
     * first and last failure of any kind (request or SSE stream), as
     * hm_now_ns() values, 0 when none; contexts found dead (400 Invalid
     * context, php-via's reload script, an empty 200 on /_sse); pages
     * reloaded to get a new one, and reload attempts that failed; OK
     * actions whose effect a dead context swallowed; and, per recovered
     * episode, the time from its first failure to the first OK action on
     * the new context. */
    int64_t fail_first_ns, fail_last_ns;
    uint64_t ctx_lost, reloads, reload_failed, swallowed;
    hm_hdr recovery_us;
    /* The latest failure's reason for the live view, kept at most every
     * HM_LATEST_EVERY_NS (hm_thread_stats_latest_due) so a failure storm
     * formats few; written by the owning thread under latest_lock. */
    atomic_flag latest_lock;
    int64_t latest_ns; /* hm_now_ns() when kept; 0: none */
    char latest[160];
} hm_thread_stats;

#define HM_LATEST_EVERY_NS 200000000LL
/* Whether a failure now should replace the latest example (cheap). */
bool hm_thread_stats_latest_due(const hm_thread_stats *s);
/* Keeps reason as the latest failure's, with the time. */
void hm_thread_stats_latest(hm_thread_stats *s, const char *reason);

/* Allocates the histograms (1 µs .. 1 h, 3 significant digits). */
int hm_thread_stats_init(hm_thread_stats *s);
void hm_thread_stats_destroy(hm_thread_stats *s);
/* dst += src. */
void hm_thread_stats_merge(hm_thread_stats *dst, const hm_thread_stats *src);
/* Records an action's (request's) latency, also for the interval reporter. */
void hm_thread_stats_record_action(hm_thread_stats *s, int64_t us);
/* Records one sample of a phase (HM_PHASE_ACTION goes through
 * hm_thread_stats_record_action) into its histogram and live buckets. */
void hm_thread_stats_record(hm_thread_stats *s, hm_phase p, int64_t us);
/* The histogram of a phase. */
hm_hdr *hm_thread_stats_hist(hm_thread_stats *s, hm_phase p);
const hm_hdr *hm_thread_stats_hist_c(const hm_thread_stats *s, hm_phase p);
/* Adds wire bytes (read, written) to the run's counts. */
void hm_thread_stats_add_bytes(hm_thread_stats *s, uint64_t read, uint64_t written);
/* Adds coded body bytes as received (wire) and as decoded. */
static inline void hm_thread_stats_add_coded(hm_thread_stats *s, uint64_t wire, uint64_t decoded)
{
    s->coded_wire += wire;
    s->coded_decoded += decoded;
}
/* A request went out (+1) or came back or failed (-1): the in-flight gauge. */
static inline void hm_thread_stats_in_flight(hm_thread_stats *s, int delta)
{
    atomic_store_explicit(&s->live_in_flight,
                          atomic_load_explicit(&s->live_in_flight, memory_order_relaxed) + delta,
                          memory_order_relaxed);
}
/* With -R: records the corrected (from the intended send time) and the
 * service (from the actual send) latency of one action. */
void hm_thread_stats_record_scheduled(hm_thread_stats *s, int64_t corrected_us, int64_t service_us);
/* Counts one finished request: status (0 when it failed) or the failure kind. */
void hm_thread_stats_count(hm_thread_stats *s, int status, hm_fail_kind fail);
/* Keeps the first example of a failure kind (reason, where, escaped bytes). */
void hm_thread_stats_fail_example(hm_thread_stats *s, hm_fail_kind kind, const char *reason,
                                  const char *where, const char *bytes);
/* Keeps the first example of a non-2xx status, while fewer than
 * HM_STATUS_EXAMPLES statuses have one. */
void hm_thread_stats_status_example(hm_thread_stats *s, int status, const char *reason,
                                    const char *where, const char *bytes);
/* Counts one SSE stream failure of `kind`, keeping the first example. */
void hm_thread_stats_sse_fail(hm_thread_stats *s, hm_sse_fail kind, const char *reason,
                              const char *where, const char *bytes);
/* Notes a failure (request, connect or page load attempt, SSE stream) at
 * hm_now_ns() for the outage window; the counting calls here call it. */
void hm_thread_stats_note_failure(hm_thread_stats *s);
/* Every SSE failure counted. */
uint64_t hm_thread_stats_sse_failures(const hm_thread_stats *s);
/* Counts one failed connect attempt (not an action: no latency, not sent)
 * and notes it for the outage window. */
void hm_thread_stats_connect_failed(hm_thread_stats *s);
/* A page load for a new context (a reload, or a tab's page the server never
 * answered) that failed; the attempt is made again after a back-off. */
void hm_thread_stats_reload_failed(hm_thread_stats *s);

#define HM_MAX_WORKERS 64

/* What a request for /_sse got (sticky's probe): php-via answers a context
 * this worker does not know with 200 and a reload script, and a repeat
 * with an empty 200; only a live stream means the worker has the context. */
typedef enum hm_sse_outcome {
    HM_SSE_OUTCOME_LIVE,   /* 200 event stream that delivered an event or stayed open */
    HM_SSE_OUTCOME_RELOAD, /* 200 whose events hold window.location.reload() */
    HM_SSE_OUTCOME_EMPTY,  /* 200 with Content-Length: 0 (or no body at all) */
    HM_SSE_OUTCOME_403,
    HM_SSE_OUTCOME_400,
    HM_SSE_OUTCOME_OTHER, /* any other status, or no response */
    HM_SSE_OUTCOME__COUNT
} hm_sse_outcome;

/* "live", "reload_script", "empty_200", "status_403", "status_400", "other". */
const char *hm_sse_outcome_name(hm_sse_outcome k);

/* One variant of a scenario that compares several (sticky). */
typedef struct hm_variant_result {
    const char *name;
    hm_thread_stats stats;
    uint64_t workers[HM_MAX_WORKERS]; /* responses by X-Via-Worker */
    uint64_t sse_ok, sse_failed;      /* sse_ok: live streams only; sse_failed: the rest */
    /* The SSE probe's outcomes by kind (hm_sse_outcome_name): a live
     * stream, php-via's reload script, an empty 200, 403, 400, other. */
    uint64_t sse_outcome[HM_SSE_OUTCOME__COUNT];
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

/* ---- the interval series ------------------------------------------------ */

#define HM_SERVER_FIELDS 16 /* /_health's and the resource sampler's */
#define HM_SERVER_NAME_MAX 32

/* One point of the run's time series (the JSON document's "intervals"):
 * what happened between t - dt and t, seconds since the pass began. */
typedef struct hm_interval_point {
    double t, dt;
    uint64_t sent, ok;                            /* in this interval */
    uint64_t errors[HM_FAIL__COUNT];              /* failures without a response, by kind */
    uint64_t bytes_read;                          /* in this interval */
    int64_t count;                                /* latency samples in this interval */
    int64_t p50_us, p90_us, p99_us, max_us;       /* of them; 0 when none */
    int64_t sse_open, reconnects, in_flight, vus; /* gauges at t */
    int64_t reloads;                              /* gauge at t: pages reloaded so far */
    double server[HM_SERVER_FIELDS];              /* the server watch at t (NAN: not sampled) */
} hm_interval_point;

/* The series of a pass. Points get longer as the run does (the step
 * doubles every HM_SERIES_STEP_POINTS points), so a day-long soak stays a
 * few thousand points; every point is exact for its own span. */
#define HM_SERIES_STEP_POINTS 1000
typedef struct hm_interval_series {
    hm_interval_point *points; /* owned; hm_interval_series_free */
    size_t n, cap;
    double interval_s; /* the reporter's tick */
    /* The server watch's field names (issue 12's /_health sampler); 0 when
     * the run had no watch. */
    int n_server;
    char server_names[HM_SERVER_FIELDS][HM_SERVER_NAME_MAX];
} hm_interval_series;

void hm_interval_series_free(hm_interval_series *s);

/* What the server watch concluded after the run (docs/output.md, "Server
 * watch"): what a user must act on, and what not. */
typedef enum hm_server_verdict {
    HM_SERVER_UNCHECKED,    /* no end check, or no sample after the run */
    HM_SERVER_CAME_BACK,    /* every held field back at its baseline */
    HM_SERVER_OPEN_STREAMS, /* what is left is SSE streams hammer closed that the
                             * server still counts (php-via notices a vanished
                             * client at its next write), and their contexts: a note */
    HM_SERVER_KEPT,         /* contexts left after the grace, no more than hammer
                             * opened: the server keeps them after the clients left: a note */
    HM_SERVER_GREW,         /* more left than hammer's own clients explain: a warning */
} hm_server_verdict;

#define HM_SERVER_AFTER_MAX 64 /* samples kept after the run (the last always) */

/* What the server watch (src/cli/server_watch.h) found over one pass:
 * /_health's numeric fields before the run and after it. */
typedef struct hm_server_report {
    bool sampled;      /* a baseline was taken: the watch ran */
    char stopped[200]; /* why the watch never ran or stopped early; "" when it did not */
    int n;
    char names[HM_SERVER_FIELDS][HM_SERVER_NAME_MAX];
    double before[HM_SERVER_FIELDS]; /* the baseline, before the first request */
    double after[HM_SERVER_FIELDS];  /* the last sample after the run; NAN when none */
    bool held[HM_SERVER_FIELDS];     /* what the server holds for clients (contexts,
                                      * SSE streams): it should come back */
    bool checked;                    /* the end comparison ran (-d or --watch-grace) */
    double grace_s;                  /* how long it could wait */
    double waited_s;                 /* from the run's end to the last sample */
    bool came_back;                  /* every held field at or below its baseline */
    bool waited;                     /* it said it waits, and waited (not at once) */
    bool skipped;                    /* Ctrl-C ended the wait */
    /* What hammer's own clients opened during the pass and closed by its
     * end: contexts (page loads) and SSE streams; what is left may be these. */
    uint64_t own_contexts, own_streams;
    hm_server_verdict verdict;
    /* The samples after the run: seconds after its end, and the fields by
     * names[] (NAN: missing). */
    int n_after;
    double after_t[HM_SERVER_AFTER_MAX];
    double after_v[HM_SERVER_AFTER_MAX][HM_SERVER_FIELDS];
} hm_server_report;

/* What is left after the run of a leaf (contexts, sse): the last sample
 * minus the baseline, by hm_server_leaf_max; 0 when the server has none. */
double hm_server_report_left(const hm_server_report *w, const char *leaf);
/* The verdict in words, one sentence without a label ("" when unchecked):
 * the summary's Note or WARNING line, the JSON's and the HTML's. */
void hm_server_verdict_text(const hm_server_report *w, char *buf, size_t len);
/* "note", "warning" or NULL: how the verdict is said. */
const char *hm_server_verdict_level(hm_server_verdict v);
/* "came_back", "open_streams", "kept", "grew", or NULL when unchecked. */
const char *hm_server_verdict_name(hm_server_verdict v);

/* The largest value among fields whose last name part is `leaf`
 * ("contexts": connections_contexts, workers_contexts), or NAN. */
double hm_server_leaf_max(int n, const char names[][HM_SERVER_NAME_MAX], const double values[],
                          const char *leaf);

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
    bool interrupted;        /* stopped by SIGINT/SIGTERM */
    double interrupted_at_s; /* seconds since hammer started when the first signal came */
    bool interrupted_twice;  /* a second signal abandoned what was in flight */
    /* The workload's check. check_not_evaluated: the scenario could not
     * judge it (check_detail says why; check_passed is then false);
     * hm_results_check_state applies the rest of the rule. */
    bool has_check;
    const char *check_name;
    bool check_passed;
    bool check_not_evaluated;
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
    uint64_t patches_observed; /* patches that answered an action */
    /* Events apart from them: those on streams that opened and had no
     * action to answer yet (nothing watched: a flow without a check), and
     * those that answered no action (the watched value did not change, or
     * more events came than actions were sent). */
    uint64_t patches_opening, patches_extra;
    int observers, observers_connected;
    /* Connection accounting. */
    uint64_t conns_requested;
    /* Why a run establishes more connections than it requested, beyond
     * reconnects ("the set-up page load and reloads"), or NULL. */
    const char *conns_extra_why;
    const char *protocol; /* "http/1.1", "h2" or "h2c"; NULL: http/1.1 */
    int streams;          /* concurrent streams per connection (HTTP/2 --streams), 0: 1 */
    /* Variants (sticky), reported as a table. */
    hm_variant_result variants[4];
    int n_variants;
    /* What the variants' failures mean and what fixes them, one sentence
     * (sticky: contexts held per worker), or "" when they show no pattern. */
    char variants_diagnosis[400];
    bool total_is_informational; /* failures in the totals are expected */
    bool tls, tls_insecure;
    /* Open-loop rate (-R). */
    double rate_target;    /* actions/s, 0 when closed-loop */
    double client_cpu_pct; /* hammer's CPU over the run, % of its threads */
    hm_threshold thresholds[HM_MAX_THRESHOLDS];
    int n_thresholds;
    /* Why the run failed before or outside the requests, or NULL. */
    const char *fatal;
    char fatal_buf[512];     /* storage fatal may point to */
    hm_server_report server; /* the server watch, when it ran */
    bool fatal_usage;        /* fatal is the input's fault (a flow that does not fit the
                              * app), whatever was sent before: exit 2 */
    struct hm_steps *steps;  /* a scenario's named rows and checks (stats/steps.h), or
                              * NULL; owned, hm_steps_free */
    /* Set by the CLI for the reports: when the pass began (wall clock, for
     * the JSON's "started" only), the command line, the resolved options
     * (a JSON object the caller owns), the run's -n and -d. */
    struct timespec started;
    int argc;
    char *const *argv;
    struct json_t *options;
    /* The time series the interval reporter recorded (owned). */
    hm_interval_series intervals;
    /* hm_now_ns() when the pass (and its interval reporter) began: the
     * outage window is reported in seconds from it. 0: not known. */
    int64_t t0_ns;
    /* A workload whose count was checked across lost contexts: the OK
     * count its net increment is compared with (browser: all OK less what
     * lost contexts swallowed, plus unanswered actions they applied;
     * hammer: the OK actions on the newest context). */
    bool ok_checked_known;
    uint64_t ok_checked;
} hm_results;

/* The JSON document's "schema": raised when a key changes meaning or goes
 * away (new keys do not raise it). */
#define HM_JSON_SCHEMA 1

/* Prints the human summary. */
void hm_report_print(FILE *f, const hm_results *r);
/* The JSON document of one run (see docs/output.md); the caller owns it. */
struct json_t;
struct json_t *hm_report_json(const hm_results *r);
/* Writes any JSON document to path atomically (hm_file_replace). 0 or
 * the negative errno the system gave. */
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
/* A threshold's measured value in its unit: "61.20ms", "98.571%", "812.000/s". */
void hm_threshold_measured(const hm_threshold *th, char *buf, size_t len);
/* Several passes of one scenario (--passes): the change from each pass to
 * the next, printed and as one JSON document {"passes":[...],"changes":[...]}. */
void hm_report_print_passes(FILE *f, const hm_results *runs, int n);
struct json_t *hm_report_passes_json(const hm_results *runs, int n);
/* The scenario's check, as the verdict reads it (docs/output.md, "How to
 * read the verdict"): PASS only when it held and was evaluated on enough
 * successful work — the OK actions whose effect it saw (OK less those lost
 * contexts swallowed) are at least one and at least half of the actions
 * sent; a check that held on less is NOT_EVALUATED. */
typedef enum hm_check_state {
    HM_CHECK_STATE_NONE, /* the scenario has no check */
    HM_CHECK_STATE_PASS,
    HM_CHECK_STATE_FAIL,
    HM_CHECK_STATE_NOT_EVALUATED,
} hm_check_state;

/* The check's state; when NOT_EVALUATED, why (in words) into why. */
hm_check_state hm_results_check_state(const hm_results *r, char *why, size_t whylen);

/* The run's verdict and every criterion that failed, in words ("1.43% of
 * actions failed (71 of 5000)"), in the order the summary lists them. */
#define HM_VERDICT_REASONS 24
#define HM_VERDICT_REASON_LEN 320
typedef struct hm_verdict {
    bool passed;
    int n;         /* reasons kept */
    int n_dropped; /* reasons beyond HM_VERDICT_REASONS (counted, not kept) */
    char reasons[HM_VERDICT_REASONS][HM_VERDICT_REASON_LEN];
} hm_verdict;

/* The one verdict of a run, for the summary, the JSON and the HTML report.
 * An interrupted run passes when what it did passed. */
void hm_results_verdict(const hm_results *r, hm_verdict *v);
/* Appends one reason (printf-style); past HM_VERDICT_REASONS it is
 * counted in n_dropped. Any reason makes the verdict FAIL. */
void hm_verdict_add(hm_verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* hm_results_verdict's passed. */
bool hm_results_passed(const hm_results *r);

/* ---- the interval reporter --------------------------------------------- */

/* What a watcher of the server last read (issue 12 samples php-via's
 * /_health into it): up to HM_SERVER_FIELDS numeric fields by name. The
 * interval reporter copies it into each point, the metrics endpoint serves
 * it; whoever samples publishes with hm_server_watch_publish. */
typedef struct hm_server_watch {
    atomic_flag lock;
    int n; /* 0: nothing sampled yet */
    char names[HM_SERVER_FIELDS][HM_SERVER_NAME_MAX];
    double values[HM_SERVER_FIELDS];
} hm_server_watch;

/* Gauges the scenarios keep for the live line. The run owns one (the CLI,
 * for all its passes) and hands its address to the scenario (hm_options)
 * and to the reporter; any thread may update them. */
typedef struct hm_live_gauges {
    _Atomic int64_t sse_open;   /* SSE streams open now */
    _Atomic int64_t reconnects; /* SSE streams reopened so far */
    _Atomic int64_t vus;        /* virtual users (senders) running now */
    _Atomic int64_t reloads;    /* pages reloaded after a context was lost, so far */
    _Atomic int64_t sse_opened; /* SSE streams opened so far: what the server watch
                                 * weighs the streams left after a pass against */
    hm_server_watch server;
} hm_live_gauges;

/* Sets the server watch's fields by name (names of at most
 * HM_SERVER_NAME_MAX - 1 characters): a name not seen yet is added, one
 * past HM_SERVER_FIELDS dropped; fields not named keep their values (two
 * samplers publish apart). Any thread. */
void hm_server_watch_publish(hm_live_gauges *g, int n, const char *const names[],
                             const double values[]);
/* Copies the watch out; returns how many fields it has (0: none). */
int hm_server_watch_read(hm_live_gauges *g, char names[][HM_SERVER_NAME_MAX], double values[]);

/* Everything counted so far, summed over the engine threads (for the
 * metrics endpoint): threads that already finished included. */
typedef struct hm_live_totals {
    uint64_t sent, ok;
    uint64_t by_status[HM_STATUS_MAX];
    uint64_t by_fail[HM_FAIL__COUNT];
    uint64_t bucket[HM_PHASE__COUNT][HM_LIVE_BUCKETS + 1];
    uint64_t sum_us[HM_PHASE__COUNT];
    uint64_t bytes_read, bytes_written;
    int64_t in_flight;
} hm_live_totals;

/* Since the process began, over every pass (counters never go down). */
void hm_progress_live_totals(hm_live_totals *out);

/* What the live line and the live view show at one moment: the reporter
 * (progress.c) computes it, both only format it. Latencies in µs. */
typedef struct hm_live_figures {
    const char *unit; /* "actions" or "requests" */
    double at;        /* seconds since the pass began */
    bool last;        /* the pass's last, partial interval */
    /* The last interval (ended at a tick, not at `at`). */
    double dt, rate;            /* its length (s), sent per second */
    uint64_t d_sent, d_ok;      /* in it */
    double ok_pct;              /* of d_sent; NAN when none */
    int64_t count;              /* its latency samples */
    int64_t p50, p90, p99, max; /* of them; 0 when none */
    /* The pass so far. */
    int64_t run_count, run_p50, run_p90, run_p99, run_max;
    hm_live_totals totals;
    int64_t vus, sse_open, reconnects, reloads;
    double idle_s;     /* whole seconds since a request last completed */
    char progress[96]; /* "  4000/5000  ETA 3s", "  12s/30s  ETA 18s" or "" */
    double done_frac;  /* how much of -n or -d is done, 0..1; -1: no end */
    char stopping[96]; /* "  stopping: waiting for 4 in flight (up to 9 s)" or "" */
    int n_server;      /* the server watch's latest sample */
    char server_names[HM_SERVER_FIELDS][HM_SERVER_NAME_MAX];
    double server[HM_SERVER_FIELDS];
    char latest[160];    /* the latest failure's reason, "" when none */
    double latest_ago_s; /* how long ago */
} hm_live_figures;

typedef struct hm_progress_options {
    int64_t interval_ns;    /* how often to report */
    bool live_line;         /* a refreshing line on a terminal, not one per interval */
    bool lines;             /* one line per interval on stdout (--interval) */
    bool quiet;             /* no lines on stdout (-q) */
    FILE *json;             /* JSON lines, one per interval, or NULL */
    struct hm_hlog *hlog;   /* HdrHistogram interval log, or NULL; with the
                             * last partial interval written at stop */
    const char *hlog_tag;   /* tag of its lines (the pass), or NULL */
    const char *unit;       /* "actions" or "requests" */
    hm_live_gauges *gauges; /* read every interval; NULL shows zeros */
    int64_t total;          /* -n, for "done/total" and the ETA; 0 when none */
    int64_t duration_ns;    /* -d, likewise; 0 when none */
    /* Called on the reporter's thread at each interval's end (and the
     * last one's), right after its counters are read and before its line
     * is written: the server watch takes its sample there, so the line
     * shows the server as the interval ends. NULL: none. */
    void (*before_tick)(void *arg);
    void *before_tick_arg;
    /* When the first Ctrl-C came (hm_now_ns), 0 until then; NULL: never
     * asked. From then on the lines say what the run waits for: requests
     * in flight, each for at most timeout_ns (--timeout). */
    const _Atomic int64_t *stop_ns;
    int64_t timeout_ns;
    /* A full-screen view (src/cli/live_view.c), or NULL: called on the
     * reporter's thread every view_ns and at each tick with the figures;
     * the last call (f->last) closes it. false: it could not open, the
     * live line takes over. Instead of live_line and lines. */
    bool (*view)(const hm_live_figures *f, void *arg);
    void *view_arg;
    int64_t view_ns;
} hm_progress_options;

/* Starts the reporter thread for one pass. Returns 0 or a negative errno. */
int hm_progress_start(const hm_progress_options *o);
/* Stops it after writing the last, partial interval (to every output the
 * options name), and hands the pass's series to *series (the caller frees
 * it with hm_interval_series_free; NULL drops it). */
void hm_progress_stop(hm_interval_series *series);

/* Writes a latency in the unit that reads best, as wrk does: "812µs",
 * "4.34ms", "1.20s"; right-aligned to width columns (µ counts as one). */
void hm_format_us(char *buf, size_t len, double us, int width);
/* Writes a byte count: "812 B", "4.10 KiB", "12.34 MiB". */
void hm_format_bytes(char *buf, size_t len, double bytes);
/* The per-thread stats the reporter reads: n records `stride` bytes apart,
 * each starting with (or being) a hm_thread_stats. Detach before freeing. */
void hm_progress_attach(void *stats, int n, size_t stride);
void hm_progress_detach(void);

#endif
