/* resources.h — what the server's processes used over a run (the figures
 * src/cli/server_resources.h samples into the server watch's fields each
 * interval) and the leak verdict on them.
 *
 * The leak rule (docs/output.md, "Server resources"): after a warm-up of
 * the first 20% of the run or 30 s, whichever is less, a least-squares
 * line (stats/trend.h) is fitted to the samples against time; the slope
 * per hour is said with its 95% confidence interval (Student's t). A
 * WARNING only when the interval's lower bound is above zero and the
 * growth is material: more than a floor per hour (1 MiB for RSS, 1 for
 * fds and contexts) and, over the fitted span, more than 1% of the mean,
 * and the fitted span is at least 30 s.
 * Everything here reads caller-owned data and keeps nothing. */
#ifndef HM_STATS_RESOURCES_H
#define HM_STATS_RESOURCES_H

#include "stats/results.h"
#include "stats/trend.h"

/* Where the figures come from. Each source has fields and a verdict of its
 * own, never summed with the other's: an exporter may well count the same
 * processes as --server-pid, and its figures are the exporter's choice. */
typedef enum hm_res_source {
    HM_RES_PIDS,     /* this machine's processes by pid, from /proc (--server-pid,
                        the embedded bench_app, the matrix's servers) */
    HM_RES_EXPORTER, /* a Prometheus endpoint (--server-metrics) */
    HM_RES__SOURCES
} hm_res_source;

/* The server watch's field names the resource sampler publishes, per source. */
#define HM_RES_RSS "process_resident_bytes"
#define HM_RES_CPU "process_cpu_seconds_total" /* only grows: a counter (docs/metrics.md) */
#define HM_RES_FDS "process_open_fds"
#define HM_RES_THREADS "process_threads"
#define HM_RES_EXPORTER_RSS "exporter_resident_bytes"
#define HM_RES_EXPORTER_CPU "exporter_cpu_seconds_total"
#define HM_RES_EXPORTER_FDS "exporter_open_fds"
#define HM_RES_EXPORTER_THREADS "exporter_threads"

/* What names a source: its fields, its key in the JSON document, its words. */
typedef struct hm_res_names {
    const char *rss, *cpu, *fds, *threads;
    const char *json_key; /* "server_resources", "server_exporter" */
    const char *heading;  /* the summary's label: "Server resources", "Server exporter" */
    const char *prefix;   /* of its trend labels: "Server", "Exporter" */
    const char *by;       /* "" or " by --server-metrics": after "server RSS" in a verdict */
} hm_res_names;

/* The names of src (static storage). */
const hm_res_names *hm_res_names_of(hm_res_source src);

#define HM_LEAK_WARMUP_SHARE 0.2
#define HM_LEAK_WARMUP_MAX_S 30.0
#define HM_LEAK_MATERIAL_SHARE 0.01 /* of the mean, over the fitted span */
/* A WARNING needs this long a fit: over a shorter span a server's warm-up
 * (pools, caches, a sanitizer's quarantine) grows as a leak would. */
#define HM_LEAK_MIN_SPAN_S 30.0
/* Open fds and contexts are counts: a WARNING needs the fitted line to add
 * more than this over its span. A count that steps up once and stays (a
 * connection or a context the server has not let go of yet: a reconnect,
 * a reload) is a new level, not a leak, yet a line fitted to a step of h
 * adds up to 1.5 h; a step of two, 3. */
#define HM_LEAK_MIN_COUNT_GROWTH 3.0

/* What is fitted: the floor per hour below which growth is not material. */
typedef enum hm_leak_kind {
    HM_LEAK_RSS,
    HM_LEAK_FDS,
    HM_LEAK_CONTEXTS,
    HM_LEAK__COUNT
} hm_leak_kind;

typedef struct hm_leak {
    bool known;      /* enough samples after the warm-up to fit */
    hm_trend fit;    /* slope per second */
    double warmup_s; /* samples before this (seconds since the run began) were left out */
    double slope_h;  /* per hour */
    double half_h;   /* the 95% interval's half width, per hour */
    double growth;   /* slope * fitted span: what the line says the run added */
    bool warning;    /* the rule above holds */
} hm_leak;

/* The warm-up of a run of run_s seconds. */
double hm_leak_warmup_s(double run_s);
/* Fits y against t (seconds since the run began, n samples, NAN: none)
 * after the warm-up of a run of run_s seconds and judges it. */
void hm_leak_judge(hm_leak_kind kind, const double *t, const double *y, int n, double run_s,
                   hm_leak *out);
/* "RSS", "open fds", "contexts". */
const char *hm_leak_kind_name(hm_leak_kind kind);
/* "resident_bytes", "open_fds", "contexts": the JSON's keys. */
const char *hm_leak_kind_key(hm_leak_kind kind);
/* "+3.61 MiB/h ± 0.04 MiB/h" (bytes for RSS, counts otherwise). */
void hm_leak_slope_text(hm_leak_kind kind, const hm_leak *l, char *buf, size_t len);

/* The verdict in words, without a label: "server RSS grows +3.52 GiB/h ±
 * 42 KiB/h (95% CI, 568 samples after a 30 s warm-up): a leak?" ("server
 * RSS by --server-metrics grows" for the exporter) or "trend ...: no leak
 * seen" (the summary's, the JSON's "text", the HTML's). */
void hm_leak_text(hm_leak_kind kind, hm_res_source src, const hm_leak *l, char *buf, size_t len);
/* Whether a server watch field is one of the resource sampler's (either source). */
bool hm_resources_is_field(const char *name);

/* The run's server resources of one source, from its interval series. The
 * contexts' trend (from /_health, not a source's) is the first known
 * source's only, so it is said once. */
typedef struct hm_resources {
    bool known;               /* the series has the resource fields */
    double rss_last, rss_max; /* bytes */
    double fds_last, threads_last;
    double cpu_s;                 /* CPU seconds from the first sample to the last */
    uint64_t actions;             /* sent in the same span */
    double cpu_per_action_s;      /* NAN when no action */
    double contexts_max;          /* /_health's contexts, NAN when unknown */
    double rss_per_context;       /* RSS growth / contexts_max, NAN when unknown */
    hm_leak leak[HM_LEAK__COUNT]; /* known: false when the field is missing */
} hm_resources;

void hm_resources_of(const hm_results *r, hm_res_source src, hm_resources *out);
/* The summary's lines ("Server resources", "Server exporter", the leak
 * verdicts), one block per source the run sampled; none without. */
void hm_resources_print(FILE *f, const hm_results *r);
/* The JSON document's object of one source (its json_key), or NULL when the
 * run did not sample it. */
struct json_t *hm_resources_json(const hm_results *r, hm_res_source src);

#endif
