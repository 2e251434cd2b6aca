/* Per-thread counters, their merge, and the text summary (the JSON report
 * is results_json.c). */
#include "stats/results.h"
#include "stats/resources.h"
#include "stats/results_internal.h"

#include "stats/hdr_json.h"
#include "stats/steps.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int hm_thread_stats_init(hm_thread_stats *s)
{
    memset(s, 0, sizeof(*s));
    hm_hdr *h[] = {&s->action_us, &s->patch_us,   &s->connect_us, &s->page_us,
                   &s->tls_us,    &s->service_us, &s->recovery_us};
    for (size_t i = 0; i < HM_ARRAY_LEN(h); i++) {
        int rc = hm_hdr_init(h[i], 1, HM_HDR_HIGHEST_US, 3);
        if (rc < 0) {
            hm_thread_stats_destroy(s);
            return rc;
        }
    }
    int rc = hm_interval_recorder_init(&s->interval);
    if (rc < 0) hm_thread_stats_destroy(s);
    return rc;
}

void hm_thread_stats_destroy(hm_thread_stats *s)
{
    hm_hdr_destroy(&s->action_us);
    hm_hdr_destroy(&s->patch_us);
    hm_hdr_destroy(&s->connect_us);
    hm_hdr_destroy(&s->page_us);
    hm_hdr_destroy(&s->tls_us);
    hm_interval_recorder_destroy(&s->interval);
    hm_hdr_destroy(&s->service_us);
    hm_hdr_destroy(&s->recovery_us);
}

static const char *const phase_names[HM_PHASE__COUNT] = {
    "action", "service", "patch", "page", "connect", "tls_handshake",
};

const char *hm_phase_name(hm_phase p)
{
    return (unsigned)p < HM_PHASE__COUNT ? phase_names[p] : "other";
}

/* From a loopback GET flood (tens of µs) to a stalled soak (a minute). */
const int64_t hm_live_bucket_le_us[HM_LIVE_BUCKETS] = {
    50,     100,    250,    500,     1000,    2500,    5000,     10000,    25000,    50000,
    100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000, 30000000, 60000000,
};

hm_hdr *hm_thread_stats_hist(hm_thread_stats *s, hm_phase p)
{
    switch (p) {
    case HM_PHASE_SERVICE:
        return &s->service_us;
    case HM_PHASE_PATCH:
        return &s->patch_us;
    case HM_PHASE_PAGE:
        return &s->page_us;
    case HM_PHASE_CONNECT:
        return &s->connect_us;
    case HM_PHASE_TLS:
        return &s->tls_us;
    default:
        return &s->action_us;
    }
}

const hm_hdr *hm_thread_stats_hist_c(const hm_thread_stats *s, hm_phase p)
{
    return hm_thread_stats_hist((hm_thread_stats *)s, p);
}

/* Only the owning thread writes: a relaxed load and store, no locked add. */
static inline void bump(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

static void record_live(hm_thread_stats *s, hm_phase p, int64_t us)
{
    int b = 0;
    while (b < HM_LIVE_BUCKETS && us > hm_live_bucket_le_us[b])
        b++;
    bump(&s->live_bucket[p][b], 1);
    bump(&s->live_sum_us[p], us > 0 ? (uint64_t)us : 0);
}

void hm_thread_stats_record(hm_thread_stats *s, hm_phase p, int64_t us)
{
    if (p == HM_PHASE_ACTION) {
        hm_thread_stats_record_action(s, us);
        return;
    }
    hm_hdr_record(hm_thread_stats_hist(s, p), us);
    record_live(s, p, us);
}

void hm_thread_stats_add_bytes(hm_thread_stats *s, uint64_t read, uint64_t written)
{
    s->bytes_read += read;
    s->bytes_written += written;
    atomic_store_explicit(&s->live_bytes_read, s->bytes_read, memory_order_relaxed);
    atomic_store_explicit(&s->live_bytes_written, s->bytes_written, memory_order_relaxed);
}

void hm_thread_stats_record_scheduled(hm_thread_stats *s, int64_t corrected_us, int64_t service_us)
{
    hm_thread_stats_record_action(s, corrected_us);
    hm_thread_stats_record(s, HM_PHASE_SERVICE, service_us);
}

void hm_thread_stats_record_action(hm_thread_stats *s, int64_t us)
{
    hm_hdr_record(&s->action_us, us);
    record_live(s, HM_PHASE_ACTION, us);
    hm_interval_recorder_record(&s->interval, us);
}

void hm_thread_stats_merge(hm_thread_stats *dst, const hm_thread_stats *src)
{
    hm_hdr_add(&dst->action_us, &src->action_us);
    hm_hdr_add(&dst->service_us, &src->service_us);
    hm_hdr_add(&dst->patch_us, &src->patch_us);
    hm_hdr_add(&dst->connect_us, &src->connect_us);
    hm_hdr_add(&dst->page_us, &src->page_us);
    hm_hdr_add(&dst->tls_us, &src->tls_us);
    dst->tls_full += src->tls_full;
    dst->tls_resumed += src->tls_resumed;
    dst->tls_unfinished += src->tls_unfinished;
    for (size_t i = 0; i < HM_ARRAY_LEN(dst->tls_fail); i++)
        dst->tls_fail[i] += src->tls_fail[i];
    if (!dst->tls_first_reason[0])
        memcpy(dst->tls_first_reason, src->tls_first_reason, sizeof(dst->tls_first_reason));
    dst->sent += src->sent;
    dst->ok += src->ok;
    dst->failed += src->failed;
    for (int i = 0; i < HM_STATUS_MAX; i++)
        dst->by_status[i] += src->by_status[i];
    for (int i = 0; i < HM_FAIL__COUNT; i++)
        dst->by_fail[i] += src->by_fail[i];
    dst->connects += src->connects;
    dst->reconnects += src->reconnects;
    dst->retries += src->retries;
    dst->connect_failed += src->connect_failed;
    dst->bytes_read += src->bytes_read;
    dst->bytes_written += src->bytes_written;
    dst->coded_wire += src->coded_wire;
    dst->coded_decoded += src->coded_decoded;
    for (int k = 0; k < HM_FAIL__COUNT; k++)
        if (src->fail_first[k].reason[0] && !dst->fail_first[k].reason[0])
            dst->fail_first[k] = src->fail_first[k];
    for (int i = 0; i < HM_STATUS_EXAMPLES && src->status_first_code[i]; i++)
        hm_thread_stats_status_example(dst, src->status_first_code[i], src->status_first[i].reason,
                                       src->status_first[i].where, src->status_first[i].bytes);
    dst->sse_opened += src->sse_opened;
    dst->sse_cut += src->sse_cut;
    dst->sse_comments_only += src->sse_comments_only;
    if (src->sse_cut_bytes > dst->sse_cut_bytes) dst->sse_cut_bytes = src->sse_cut_bytes;
    for (int k = 0; k < HM_SSE_FAIL__COUNT; k++)
        dst->sse_fail[k] += src->sse_fail[k];
    if (src->sse_first.reason[0] && !dst->sse_first.reason[0]) {
        dst->sse_first = src->sse_first;
        dst->sse_first_kind = src->sse_first_kind;
    }
    if (src->fail_first_ns && (!dst->fail_first_ns || src->fail_first_ns < dst->fail_first_ns))
        dst->fail_first_ns = src->fail_first_ns;
    if (src->fail_last_ns > dst->fail_last_ns) dst->fail_last_ns = src->fail_last_ns;
    dst->ctx_lost += src->ctx_lost;
    dst->reloads += src->reloads;
    dst->reload_failed += src->reload_failed;
    dst->swallowed += src->swallowed;
    hm_hdr_add(&dst->recovery_us, &src->recovery_us);
}

void hm_thread_stats_note_failure(hm_thread_stats *s)
{
    int64_t now = hm_now_ns();
    if (!s->fail_first_ns) s->fail_first_ns = now;
    s->fail_last_ns = now;
}

static const char *const sse_outcome_names[HM_SSE_OUTCOME__COUNT] = {
    "live", "reload_script", "empty_200", "status_403", "status_400", "other",
};

const char *hm_sse_outcome_name(hm_sse_outcome k)
{
    return (unsigned)k < HM_SSE_OUTCOME__COUNT ? sse_outcome_names[k] : "other";
}

void hm_thread_stats_fail_example(hm_thread_stats *s, hm_fail_kind kind, const char *reason,
                                  const char *where, const char *bytes)
{
    if ((unsigned)kind >= HM_FAIL__COUNT) kind = HM_FAIL_OTHER;
    hm_fail_example_keep(&s->fail_first[kind], reason, where, bytes);
}

bool hm_thread_stats_latest_due(const hm_thread_stats *s)
{
    return !s->latest_ns || hm_now_ns() - s->latest_ns >= HM_LATEST_EVERY_NS;
}

void hm_thread_stats_latest(hm_thread_stats *s, const char *reason)
{
    while (atomic_flag_test_and_set_explicit(&s->latest_lock, memory_order_acquire)) {
    }
    s->latest_ns = hm_now_ns();
    snprintf(s->latest, sizeof(s->latest), "%s", reason ? reason : "");
    atomic_flag_clear_explicit(&s->latest_lock, memory_order_release);
}

void hm_thread_stats_status_example(hm_thread_stats *s, int status, const char *reason,
                                    const char *where, const char *bytes)
{
    for (int i = 0; i < HM_STATUS_EXAMPLES; i++) {
        if (s->status_first_code[i] == status) return;
        if (!s->status_first_code[i]) {
            s->status_first_code[i] = status;
            memset(&s->status_first[i], 0, sizeof(s->status_first[i]));
            hm_fail_example_keep(&s->status_first[i], reason, where, bytes);
            return;
        }
    }
}

void hm_thread_stats_sse_fail(hm_thread_stats *s, hm_sse_fail kind, const char *reason,
                              const char *where, const char *bytes)
{
    if ((unsigned)kind >= HM_SSE_FAIL__COUNT || kind == HM_SSE_FAIL_NONE) kind = HM_SSE_FAIL_OTHER;
    s->sse_fail[kind]++;
    hm_thread_stats_note_failure(s);
    if (hm_fail_example_keep(&s->sse_first, reason, where, bytes)) s->sse_first_kind = kind;
}

uint64_t hm_thread_stats_sse_failures(const hm_thread_stats *s)
{
    uint64_t n = 0;
    for (int k = 1; k < HM_SSE_FAIL__COUNT; k++)
        n += s->sse_fail[k];
    return n;
}

void hm_thread_stats_connect_failed(hm_thread_stats *s)
{
    s->connect_failed++;
    hm_thread_stats_note_failure(s);
}

void hm_thread_stats_reload_failed(hm_thread_stats *s)
{
    s->reload_failed++;
    hm_thread_stats_note_failure(s);
}

void hm_thread_stats_count(hm_thread_stats *s, int status, hm_fail_kind fail)
{
    s->sent++;
    atomic_store_explicit(&s->live_sent, s->sent, memory_order_relaxed);
    if (status >= 200 && status < 300) {
        s->ok++;
        atomic_store_explicit(&s->live_ok, s->ok, memory_order_relaxed);
    } else {
        s->failed++;
        hm_thread_stats_note_failure(s);
    }
    if (status > 0 && status < HM_STATUS_MAX)
        bump(&s->by_status[status], 1);
    else
        bump(&s->by_fail[fail ? fail : HM_FAIL_OTHER], 1);
}

void hm_server_watch_publish(hm_live_gauges *g, int n, const char *const names[],
                             const double values[])
{
    if (n > HM_SERVER_FIELDS) n = HM_SERVER_FIELDS;
    hm_server_watch *w = &g->server;
    while (atomic_flag_test_and_set_explicit(&w->lock, memory_order_acquire)) {
    }
    /* By name: /_health's sampler and the resource sampler publish apart. */
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < w->n && strcmp(w->names[k], names[i]))
            k++;
        if (k == HM_SERVER_FIELDS) continue;
        if (k == w->n) snprintf(w->names[w->n++], sizeof(w->names[k]), "%s", names[i]);
        w->values[k] = values[i];
    }
    atomic_flag_clear_explicit(&w->lock, memory_order_release);
}

int hm_server_watch_read(hm_live_gauges *g, char names[][HM_SERVER_NAME_MAX], double values[])
{
    hm_server_watch *w = &g->server;
    while (atomic_flag_test_and_set_explicit(&w->lock, memory_order_acquire)) {
    }
    int n = w->n;
    memcpy(names, w->names, sizeof(w->names));
    memcpy(values, w->values, sizeof(w->values));
    atomic_flag_clear_explicit(&w->lock, memory_order_release);
    return n;
}

double hm_server_leaf_max(int n, const char names[][HM_SERVER_NAME_MAX], const double values[],
                          const char *leaf)
{
    double m = NAN;
    size_t ll = strlen(leaf);
    for (int i = 0; i < n; i++) {
        size_t nl = strlen(names[i]);
        bool match = nl >= ll && !strcmp(names[i] + nl - ll, leaf) &&
                     (nl == ll || names[i][nl - ll - 1] == '_');
        if (match && !isnan(values[i]) && (isnan(m) || values[i] > m)) m = values[i];
    }
    return m;
}

/* The distinct last name parts of the held fields, in order ("contexts", "sse"). */
static int held_leaves(const hm_server_report *w, const char *leaves[])
{
    int n = 0;
    for (int i = 0; i < w->n; i++) {
        if (!w->held[i]) continue;
        const char *us = strrchr(w->names[i], '_');
        const char *leaf = us ? us + 1 : w->names[i];
        bool seen = false;
        for (int k = 0; k < n; k++)
            seen = seen || !strcmp(leaves[k], leaf);
        if (!seen) leaves[n++] = leaf;
    }
    return n;
}

static void print_server_watch(FILE *f, const hm_server_report *w)
{
    if (!w->sampled) return;
    if (w->stopped[0] && !w->checked) {
        fprintf(f, "Server watch      stopped: %s\n", w->stopped);
        return;
    }
    if (!w->checked) return; /* sampled every interval only: see the JSON */
    if (w->n_after == 0) {
        fprintf(f, "Server watch      no sample after the run: %s\n", w->stopped);
        return;
    }
    const char *leaves[HM_SERVER_FIELDS];
    int nl = held_leaves(w, leaves);
    char list[400] = "";
    size_t used = 0;
    for (int k = 0; k < nl; k++) {
        double b = hm_server_leaf_max(w->n, w->names, w->before, leaves[k]);
        double a = hm_server_leaf_max(w->n, w->names, w->after, leaves[k]);
        if (isnan(a))
            used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s %.0f -> ?",
                                     k ? ", " : "", leaves[k], b);
        else
            used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s %.0f -> %.0f",
                                     k ? ", " : "", leaves[k], b, a);
        if (used >= sizeof(list)) used = sizeof(list) - 1;
    }
    char text[600];
    hm_server_verdict_text(w, text, sizeof(text));
    if (w->verdict == HM_SERVER_CAME_BACK) {
        fprintf(f, "Server watch      %s: %s\n", text, list);
        return;
    }
    if (w->waited && !w->skipped && w->verdict != HM_SERVER_OPEN_STREAMS)
        fprintf(f, "Server watch      /_health after a %.1f s grace: %s", w->grace_s, list);
    else
        fprintf(f, "Server watch      /_health %.1f s after the run: %s", w->waited_s, list);
    fprintf(f, "%s%s\n", w->stopped[0] ? "; " : "", w->stopped);
    const char *level = hm_server_verdict_level(w->verdict);
    if (level) fprintf(f, "%-18s%s\n", !strcmp(level, "warning") ? "WARNING" : "Note", text);
}
void hm_interval_series_free(hm_interval_series *s)
{
    hm_free(s->points);
    s->points = NULL;
    s->n = s->cap = 0;
}

void hm_format_us(char *buf, size_t len, double us, int width)
{
    char v[32];
    if (us < 1000)
        snprintf(v, sizeof(v), "%.0fµs", us);
    else if (us < 1e6)
        snprintf(v, sizeof(v), "%.2fms", us / 1e3);
    else
        snprintf(v, sizeof(v), "%.2fs", us / 1e6);
    /* "µ" is two bytes and one column. */
    int cols = (int)strlen(v) - (strstr(v, "µ") ? 1 : 0);
    int pad = width > cols ? width - cols : 0;
    snprintf(buf, len, "%*s%s", pad, "", v);
}

int hm_threshold_parse(const char *text, hm_threshold *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof(*out));
    out->text = text;
    size_t m = strspn(text, "abcdefghijklmnopqrstuvwxyz_0123456789");
    if (m == 0 || m >= sizeof(out->metric)) goto bad;
    memcpy(out->metric, text, m);
    const char *p = text + m;
    size_t oplen = strspn(p, "<>=");
    if (oplen == 0 || oplen > 2) goto bad;
    memcpy(out->op, p, oplen);
    if (strcmp(out->op, "<") && strcmp(out->op, "<=") && strcmp(out->op, ">") &&
        strcmp(out->op, ">="))
        goto bad;
    p += oplen;
    char *end;
    double v = strtod(p, &end);
    if (end == p) goto bad;
    bool latency = !strcmp(out->metric, "max") || !strcmp(out->metric, "mean") ||
                   (out->metric[0] == 'p' &&
                    strspn(out->metric + 1, "0123456789") == strlen(out->metric + 1)) ||
                   !strncmp(out->metric, "patch_", 6);
    if (latency) {
        if (!strcmp(end, "ms"))
            v *= 1000;
        else if (!strcmp(end, "s"))
            v *= 1e6;
        else if (strcmp(end, "us"))
            goto bad;
    } else if (!strcmp(out->metric, "ok")) {
        if (strcmp(end, "%")) goto bad;
    } else if (!strcmp(out->metric, "rps")) {
        if (*end) goto bad;
    } else {
        goto bad;
    }
    out->limit = v;
    return 0;
bad:
    snprintf(why, whylen,
             "bad --threshold '%s' (e.g. p99<50ms, patch_p99<200ms, max<1s, mean<5ms, "
             "ok>=100%%, rps>=1000)",
             text);
    return -EINVAL;
}

static double latency_metric(const hm_hdr *h, const char *m)
{
    if (!strcmp(m, "max")) return (double)hm_hdr_max(h);
    if (!strcmp(m, "mean")) return hm_hdr_mean(h);
    /* pNN: p50, p90, p99, p999 (99.9), p9999 (99.99) */
    const char *d = m + 1;
    double pct = strlen(d) <= 2 ? atof(d) : atof(d) / pow(10, (double)strlen(d) - 2);
    return (double)hm_hdr_value_at_percentile(h, pct);
}

void hm_threshold_evaluate(hm_threshold *th, const hm_hdr *action, const hm_hdr *patch, uint64_t ok,
                           uint64_t sent, double wall_seconds)
{
    const char *m = th->metric;
    if (!strcmp(m, "ok"))
        th->value = pct(ok, sent);
    else if (!strcmp(m, "rps"))
        th->value = wall_seconds > 0 ? (double)sent / wall_seconds : 0;
    else if (!strncmp(m, "patch_", 6))
        th->value = latency_metric(patch, m + 6);
    else
        th->value = latency_metric(action, m);
    double v = th->value, l = th->limit;
    th->passed = !strcmp(th->op, "<")    ? v < l
                 : !strcmp(th->op, "<=") ? v <= l
                 : !strcmp(th->op, ">")  ? v > l
                                         : v >= l;
}

void hm_thresholds_evaluate(hm_results *r)
{
    const hm_thread_stats *t = &r->total;
    for (int i = 0; i < r->n_thresholds; i++)
        hm_threshold_evaluate(&r->thresholds[i], &t->action_us, &t->patch_us, t->ok, t->sent,
                              r->wall_seconds);
}

void hm_threshold_measured(const hm_threshold *th, char *buf, size_t len)
{
    bool lat = strcmp(th->metric, "ok") && strcmp(th->metric, "rps");
    if (lat)
        hm_format_us(buf, len, th->value, 0);
    else
        snprintf(buf, len, "%.3f%s", th->value, !strcmp(th->metric, "ok") ? "%" : "/s");
}

void hm_verdict_add(hm_verdict *v, const char *fmt, ...)
{
    v->passed = false;
    if (v->n >= HM_VERDICT_REASONS) {
        v->n_dropped++;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->reasons[v->n++], HM_VERDICT_REASON_LEN, fmt, ap);
    va_end(ap);
}

hm_check_state hm_results_check_state(const hm_results *r, char *why, size_t whylen)
{
    if (why && whylen) why[0] = 0;
    if (!r->has_check) return HM_CHECK_STATE_NONE;
    if (r->check_not_evaluated) {
        if (why) snprintf(why, whylen, "%s", r->check_detail);
        return HM_CHECK_STATE_NOT_EVALUATED;
    }
    if (!r->check_passed) return HM_CHECK_STATE_FAIL;
    /* Sticky's totals hold variants that fail by design: its check judges
     * its own variant (which must have sent and be all OK). */
    if (r->total_is_informational) return HM_CHECK_STATE_PASS;
    const hm_thread_stats *t = &r->total;
    uint64_t seen = t->ok > t->swallowed ? t->ok - t->swallowed : 0;
    if (seen == 0) {
        if (why)
            snprintf(why, whylen, "%s",
                     t->ok ? "every OK action was swallowed by a lost context" : "no OK action");
        return HM_CHECK_STATE_NOT_EVALUATED;
    }
    if (2 * seen < t->sent) {
        if (why)
            snprintf(why, whylen,
                     "it saw the effect of %llu of %llu %s (%.2f%%), less than half of them",
                     (unsigned long long)seen, (unsigned long long)t->sent,
                     r->unit ? r->unit : "requests", pct(seen, t->sent));
        return HM_CHECK_STATE_NOT_EVALUATED;
    }
    return HM_CHECK_STATE_PASS;
}

void hm_results_verdict(const hm_results *r, hm_verdict *v)
{
    memset(v, 0, sizeof(*v));
    v->passed = true;
    const hm_thread_stats *t = &r->total;
    const char *unit = r->unit ? r->unit : "requests";
    if (r->fatal) hm_verdict_add(v, "the run did not complete: %s", r->fatal);
    if (t->sent == 0) hm_verdict_add(v, "no %s were sent", unit);
    if (t->failed > 0 && !r->total_is_informational)
        hm_verdict_add(v, "%.2f%% of %s failed (%llu of %llu)", pct(t->failed, t->sent), unit,
                       (unsigned long long)t->failed, (unsigned long long)t->sent);
    if (t->connect_failed > 0 && !r->total_is_informational)
        hm_verdict_add(v, "%llu connect attempt%s failed (see Disruption)",
                       (unsigned long long)t->connect_failed, t->connect_failed == 1 ? "" : "s");
    if (t->reload_failed > 0 && !r->total_is_informational)
        hm_verdict_add(v, "%llu page load attempt%s for a new context failed (see Disruption)",
                       (unsigned long long)t->reload_failed, t->reload_failed == 1 ? "" : "s");
    uint64_t sse_failed = hm_thread_stats_sse_failures(t);
    if (sse_failed)
        hm_verdict_add(v, "%llu SSE stream%s failed", (unsigned long long)sse_failed,
                       sse_failed == 1 ? "" : "s");
    char why[300];
    hm_check_state cs = hm_results_check_state(r, why, sizeof(why));
    if (r->has_signal && !r->matches_ok) {
        uint64_t compared = r->ok_checked_known ? r->ok_checked : t->ok;
        int64_t net = r->final_value - r->baseline;
        if (!r->baseline_known || !r->final_known)
            hm_verdict_add(v, "net increment unknown: %s was never observed",
                           r->signal_name ? r->signal_name : "the signal");
        else if (net != (int64_t)compared)
            hm_verdict_add(v, "net increment %lld does not match %llu OK", (long long)net,
                           (unsigned long long)compared);
        /* else it matches, but the check did not pass: its reason below */
    }
    if (cs == HM_CHECK_STATE_FAIL)
        hm_verdict_add(v, "check failed: %s%s%s", r->check_name ? r->check_name : "check",
                       r->check_detail[0] ? " — " : "", r->check_detail);
    else if (cs == HM_CHECK_STATE_NOT_EVALUATED)
        hm_verdict_add(v, "check not evaluated: %s", why);
    for (int i = 0; i < r->n_thresholds; i++) {
        const hm_threshold *th = &r->thresholds[i];
        if (th->passed) continue;
        char measured[32];
        hm_threshold_measured(th, measured, sizeof(measured));
        hm_verdict_add(v, "threshold %s failed (measured %s)", th->text, measured);
    }
    hm_steps_verdict(r->steps, v);
}

bool hm_results_passed(const hm_results *r)
{
    hm_verdict v;
    hm_results_verdict(r, &v);
    return v.passed;
}

static void print_latency_row(FILE *f, const char *name, const hm_hdr *h)
{
    if (hm_hdr_count(h) == 0) {
        fprintf(f, "  %-14s %9s\n", name, "-");
        return;
    }
    double q[] = {50, 90, 99, 99.9};
    char cell[32];
    fprintf(f, "  %-14s", name);
    for (size_t i = 0; i < HM_ARRAY_LEN(q); i++) {
        hm_format_us(cell, sizeof(cell), (double)hm_hdr_value_at_percentile(h, q[i]), 10);
        fputs(cell, f);
    }
    hm_format_us(cell, sizeof(cell), (double)hm_hdr_max(h), 10);
    fputs(cell, f);
    hm_format_us(cell, sizeof(cell), hm_hdr_mean(h), 10);
    fputs(cell, f);
    fprintf(f, " %9lld\n", (long long)hm_hdr_count(h));
}

void hm_format_bytes(char *buf, size_t len, double b)
{
    const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    size_t u = 0;
    while (b >= 1024 && u + 1 < HM_ARRAY_LEN(units)) {
        b /= 1024;
        u++;
    }
    snprintf(buf, len, u ? "%.2f %s" : "%.0f %s", b, units[u]);
}

/* One failure's first example: the reason and where on one line, the
 * bytes that showed it on the next. */
static void print_example(FILE *f, const char *name, const hm_fail_example *ex)
{
    fprintf(f, "  %-15s %s%s%s\n", name, ex->reason, ex->where[0] ? " — " : "", ex->where);
    if (ex->bytes[0]) fprintf(f, "  %-15s \"%s\"\n", "", ex->bytes);
}

static void print_variants(FILE *f, const hm_results *r)
{
    fprintf(f, "\n%-10s %8s %8s %8s %9s %9s %9s  %-22s %s\n", "variant", "sent", "OK", "OK %",
            "actions/s", "p50", "p99", "failures", "per worker (X-Via-Worker)");
    for (int i = 0; i < r->n_variants; i++) {
        const hm_variant_result *v = &r->variants[i];
        const hm_thread_stats *t = &v->stats;
        char fails[128] = "", workers[256] = "";
        size_t n = 0;
        for (int s = 0; s < HM_STATUS_MAX && n < sizeof(fails) - 24; s++)
            if (t->by_status[s] && (s < 200 || s >= 300))
                n += (size_t)snprintf(fails + n, sizeof(fails) - n, "%s%d×%llu", n ? " " : "", s,
                                      (unsigned long long)t->by_status[s]);
        for (int k = 1; k < HM_FAIL__COUNT && n < sizeof(fails) - 24; k++)
            if (t->by_fail[k])
                n += (size_t)snprintf(fails + n, sizeof(fails) - n, "%s%s×%llu", n ? " " : "",
                                      hm_fail_kind_name((hm_fail_kind)k),
                                      (unsigned long long)t->by_fail[k]);
        n = 0;
        for (int w = 0; w < HM_MAX_WORKERS && n < sizeof(workers) - 24; w++)
            if (v->workers[w])
                n += (size_t)snprintf(workers + n, sizeof(workers) - n, "%s%d:%llu", n ? " " : "",
                                      w, (unsigned long long)v->workers[w]);
        char p50[32], p99[32];
        hm_format_us(p50, sizeof(p50), (double)hm_hdr_value_at_percentile(&t->action_us, 50), 9);
        hm_format_us(p99, sizeof(p99), (double)hm_hdr_value_at_percentile(&t->action_us, 99), 9);
        fprintf(f, "%-10s %8llu %8llu %7.2f%% %9.0f %s %s  %-22s %s\n", v->name,
                (unsigned long long)t->sent, (unsigned long long)t->ok, pct(t->ok, t->sent),
                v->wall_seconds > 0 ? (double)t->sent / v->wall_seconds : 0.0, p50, p99,
                fails[0] ? fails : "none",
                workers[0] ? workers
                           : "- (no X-Via-Worker header: php-via sends none; bench_app "
                             "does)");
    }
    fputc('\n', f);
}

/* Patches that answered actions, and beside them every other event
 * counted and why the action->patch count differs, on one line. */
static void print_patches(FILE *f, const hm_results *r)
{
    const hm_thread_stats *t = &r->total;
    fprintf(f, "Patches observed  %llu (%.2f%% of OK; %d/%d observers connected)",
            (unsigned long long)r->patches_observed, pct(r->patches_observed, t->ok),
            r->observers_connected, r->observers);
    if (r->patches_opening)
        fprintf(f, " + %llu on opening streams", (unsigned long long)r->patches_opening);
    if (r->patches_extra)
        fprintf(f,
                " + %llu that answered no action (the value did not change, or more events "
                "than actions)",
                (unsigned long long)r->patches_extra);
    uint64_t timed = (uint64_t)hm_hdr_count(&t->patch_us);
    if (timed > r->patches_observed)
        fprintf(f,
                "; action->patch times %llu: a patch carrying several actions' effect times "
                "each of them",
                (unsigned long long)timed);
    else if (timed < r->patches_observed)
        fprintf(f,
                "; action->patch times %llu: patches no wait timed, or whose action's send "
                "time was not known",
                (unsigned long long)timed);
    fputc('\n', f);
}

/* Requested and established connections; what makes them differ beyond
 * reconnects is said on the line. */
static void print_connections(FILE *f, const hm_results *r)
{
    const hm_thread_stats *t = &r->total;
    fprintf(f, "Connections       %llu requested, %llu established",
            (unsigned long long)r->conns_requested, (unsigned long long)t->connects);
    uint64_t first = t->connects > t->reconnects ? t->connects - t->reconnects : 0;
    if (first > r->conns_requested)
        fprintf(f, " (%llu for %s)", (unsigned long long)(first - r->conns_requested),
                r->conns_extra_why ? r->conns_extra_why : "set-up and tear-down");
    else if (first < r->conns_requested)
        fprintf(f, " (%llu requested never connected: %s)",
                (unsigned long long)(r->conns_requested - first),
                t->connect_failed ? "their connects failed, or the run ended first"
                                  : "the run ended before they were needed");
    fprintf(f, ", %llu reconnects, %llu failed\n", (unsigned long long)t->reconnects,
            (unsigned long long)(t->connect_failed + t->by_fail[HM_FAIL_CONNECT] +
                                 t->by_fail[HM_FAIL_TLS]));
}

/* When failures began and ended, what was lost and how it recovered. */
static void print_disruption(FILE *f, const hm_results *r)
{
    const hm_thread_stats *t = &r->total;
    if (!t->fail_first_ns && !t->ctx_lost && !t->reloads) return;
    if (t->fail_first_ns) {
        fprintf(f, "Disruption        failures from %.2f s to %.2f s after the start (%.2f s)",
                since_start_s(r, t->fail_first_ns), since_start_s(r, t->fail_last_ns),
                (double)(t->fail_last_ns - t->fail_first_ns) / 1e9);
        if (t->connect_failed)
            fprintf(f,
                    "; %llu connect attempts failed, each retried after a back-off (not actions: "
                    "an action goes out once its connect succeeds)",
                    (unsigned long long)t->connect_failed);
        fputc('\n', f);
        if (t->connect_failed && !t->by_fail[HM_FAIL_CONNECT] &&
            t->fail_first[HM_FAIL_CONNECT].reason[0])
            print_example(f, "connect", &t->fail_first[HM_FAIL_CONNECT]);
    }
    if (!t->ctx_lost && !t->reloads && !t->reload_failed) return;
    fprintf(f,
            "%-17s %llu contexts lost, %llu pages reloaded (%llu attempts failed), %llu OK "
            "actions swallowed by lost contexts, %llu reconnects\n",
            t->fail_first_ns ? "" : "Disruption", (unsigned long long)t->ctx_lost,
            (unsigned long long)t->reloads, (unsigned long long)t->reload_failed,
            (unsigned long long)t->swallowed, (unsigned long long)t->reconnects);
    int64_t n = hm_hdr_count(&t->recovery_us);
    if (n) {
        char p50[32], mn[32], mx[32];
        hm_format_us(mn, sizeof(mn), (double)hm_hdr_min(&t->recovery_us), 0);
        hm_format_us(p50, sizeof(p50), (double)hm_hdr_value_at_percentile(&t->recovery_us, 50), 0);
        hm_format_us(mx, sizeof(mx), (double)hm_hdr_max(&t->recovery_us), 0);
        fprintf(f,
                "Recovery          %lld episodes, first failure -> first OK again: min %s, "
                "p50 %s, max %s\n",
                (long long)n, mn, p50, mx);
    }
}

static void print_sse_outcomes(FILE *f, const hm_results *r)
{
    for (int i = 0; i < r->n_variants; i++) {
        const hm_variant_result *v = &r->variants[i];
        uint64_t all = 0;
        for (int k = 0; k < HM_SSE_OUTCOME__COUNT; k++)
            all += v->sse_outcome[k];
        if (!all) continue;
        fprintf(f, "SSE probe (%s)  %llu/%llu live streams:", v->name,
                (unsigned long long)v->sse_outcome[HM_SSE_OUTCOME_LIVE], (unsigned long long)all);
        for (int k = 1; k < HM_SSE_OUTCOME__COUNT; k++)
            fprintf(f, " %s %llu", hm_sse_outcome_name((hm_sse_outcome)k),
                    (unsigned long long)v->sse_outcome[k]);
        fputc('\n', f);
    }
}

/* "Check  NAME: PASS|FAIL|NOT EVALUATED — detail" (hm_results_check_state). */
static void print_check(FILE *f, const hm_results *r)
{
    char why[300];
    hm_check_state cs = hm_results_check_state(r, why, sizeof(why));
    if (cs == HM_CHECK_STATE_NONE) return;
    const char *word = cs == HM_CHECK_STATE_PASS   ? "PASS"
                       : cs == HM_CHECK_STATE_FAIL ? "FAIL"
                                                   : "NOT EVALUATED";
    /* A scenario's own "not evaluated" reason is its detail: say it once. */
    bool own = cs == HM_CHECK_STATE_NOT_EVALUATED && r->check_not_evaluated;
    bool extra = cs == HM_CHECK_STATE_NOT_EVALUATED && !own;
    fprintf(f, "Check             %s: %s%s%s%s%s\n", r->check_name, word,
            extra || r->check_detail[0] ? " — " : "", extra ? why : "",
            extra && r->check_detail[0] ? "; " : "", r->check_detail);
}

/* "Result  PASS", or FAIL and under it every criterion that failed. */
static void print_result(FILE *f, const hm_results *r)
{
    hm_verdict v;
    hm_results_verdict(r, &v);
    fprintf(f, "Result            %s\n", v.passed ? "PASS" : "FAIL");
    for (int i = 0; i < v.n; i++)
        fprintf(f, "  - %s\n", v.reasons[i]);
    if (v.n_dropped) fprintf(f, "  - and %d more\n", v.n_dropped);
}

void hm_report_print(FILE *f, const hm_results *r)
{
    const hm_thread_stats *t = &r->total;
    fprintf(f, "\n=== hammer %s: scenario %s%s%s ===\n", HM_VERSION, r->scenario,
            r->pass && strcmp(r->pass, "run") ? ", pass " : "",
            r->pass && strcmp(r->pass, "run") ? r->pass : "");
    fprintf(f, "Target            %s%s%s%s\n", r->target, r->target_note ? " (" : "",
            r->target_note ? r->target_note : "", r->target_note ? ")" : "");
    fprintf(f, "Engine            %s, %d thread%s, %d %s%s%s\n", r->engine, r->threads,
            r->threads == 1 ? "" : "s", r->concurrency,
            r->mode && !strcmp(r->mode, "browser") ? "virtual users" : "connections",
            r->mode ? ", mode " : "", r->mode ? r->mode : "");
    if (r->fatal) fprintf(f, "FAILED            %s\n", r->fatal);
    if (r->interrupted)
        fprintf(f, "Interrupted       after %.1f s (Ctrl-C): the results cover what ran%s\n",
                r->interrupted_at_s,
                r->interrupted_twice ? "; a second Ctrl-C abandoned what was in flight" : "");
    const char *unit = r->unit ? r->unit : "requests";
    fprintf(f, "%-17s %llu", strcmp(unit, "actions") ? "Requests sent" : "Actions sent",
            (unsigned long long)t->sent);
    if (t->connect_failed)
        fprintf(f, " (and %llu connect attempts that failed, not counted: see Disruption)",
                (unsigned long long)t->connect_failed);
    fputc('\n', f);
    fprintf(f, "HTTP OK           %llu (%.2f%%)\n", (unsigned long long)t->ok, pct(t->ok, t->sent));
    if (t->failed) {
        fprintf(f, "Errors            %llu:", (unsigned long long)t->failed);
        for (int s = 0; s < HM_STATUS_MAX; s++)
            if (t->by_status[s] && (s < 200 || s >= 300))
                fprintf(f, " HTTP %d ×%llu", s, (unsigned long long)t->by_status[s]);
        for (int k = 1; k < HM_FAIL__COUNT; k++)
            if (t->by_fail[k])
                fprintf(f, " %s ×%llu", hm_fail_kind_name((hm_fail_kind)k),
                        (unsigned long long)t->by_fail[k]);
        fputc('\n', f);
        for (int k = 1; k < HM_FAIL__COUNT; k++)
            if (t->by_fail[k] && t->fail_first[k].reason[0])
                print_example(f, hm_fail_kind_name((hm_fail_kind)k), &t->fail_first[k]);
        for (int i = 0; i < HM_STATUS_EXAMPLES && t->status_first_code[i]; i++) {
            char name[16];
            snprintf(name, sizeof(name), "HTTP %d", t->status_first_code[i]);
            print_example(f, name, &t->status_first[i]);
        }
    } else if (t->connect_failed) {
        fprintf(f, "Errors            none, but %llu connect attempts failed (see Disruption)\n",
                (unsigned long long)t->connect_failed);
    } else {
        fprintf(f, "Errors            none\n");
    }
    uint64_t sse_failed = hm_thread_stats_sse_failures(t);
    if (r->has_patches || t->sse_opened || sse_failed) {
        fprintf(f, "SSE streams       %llu opened", (unsigned long long)t->sse_opened);
        if (r->has_patches && t->sse_opened > (uint64_t)r->observers_connected)
            fprintf(f,
                    " (%llu more than the observers: streams of new pages, reloads and "
                    "reconnects)",
                    (unsigned long long)(t->sse_opened - (uint64_t)r->observers_connected));
        fprintf(f, "; failures: ");
        if (!sse_failed) fprintf(f, "none");
        const char *sep = "";
        for (int k = 1; k < HM_SSE_FAIL__COUNT; k++) {
            if (!t->sse_fail[k]) continue;
            fprintf(f, "%s%s ×%llu", sep, hm_sse_fail_name((hm_sse_fail)k),
                    (unsigned long long)t->sse_fail[k]);
            sep = " ";
        }
        if (t->sse_comments_only)
            fprintf(f, "; %llu sent only comments for longer than --timeout before the run ended",
                    (unsigned long long)t->sse_comments_only);
        if (t->sse_cut)
            fprintf(f,
                    "; %llu ended by the run inside an unfinished line or event (up to %llu bytes)",
                    (unsigned long long)t->sse_cut, (unsigned long long)t->sse_cut_bytes);
        fputc('\n', f);
        if (t->sse_first.reason[0])
            print_example(f, hm_sse_fail_name(t->sse_first_kind), &t->sse_first);
    }
    if (r->has_patches) print_patches(f, r);
    if (r->has_signal) {
        if (r->baseline_known && r->final_known)
            fprintf(f, "Net increment     %lld (%s: %lld -> %lld), matches HTTP OK: %s",
                    (long long)(r->final_value - r->baseline), r->signal_name,
                    (long long)r->baseline, (long long)r->final_value,
                    r->matches_ok ? "YES" : "NO");
        if (r->baseline_known && r->final_known && r->ok_checked_known)
            fprintf(f, " (compared with %llu of %llu OK: contexts were lost, see Disruption)",
                    (unsigned long long)r->ok_checked, (unsigned long long)t->ok);
        if (r->baseline_known && r->final_known)
            fputc('\n', f);
        else
            fprintf(f, "Net increment     unknown (%s not observed), matches HTTP OK: NO\n",
                    r->signal_name);
    }
    print_check(f, r);
    print_disruption(f, r);
    print_connections(f, r);
    if (r->protocol && strcmp(r->protocol, "http/1.1"))
        fprintf(f, "Protocol          HTTP/2 (%s), %d stream%s per connection\n", r->protocol,
                r->streams > 1 ? r->streams : 1, r->streams > 1 ? "s" : "");
    if (r->tls) {
        fprintf(f, "TLS               %llu full + %llu resumed handshakes",
                (unsigned long long)t->tls_full, (unsigned long long)t->tls_resumed);
        if (t->tls_unfinished)
            fprintf(f, " (and %llu connection%s cut or timed out before %s handshake ended)",
                    (unsigned long long)t->tls_unfinished, t->tls_unfinished == 1 ? "" : "s",
                    t->tls_unfinished == 1 ? "its" : "their");
        fprintf(f, "%s\n",
                r->tls_insecure ? "; certificate NOT verified (-k)" : "; certificate verified");
        uint64_t nf = 0;
        for (size_t i = 1; i < HM_ARRAY_LEN(t->tls_fail); i++)
            nf += t->tls_fail[i];
        if (nf) {
            fprintf(f, "TLS failures      %llu:", (unsigned long long)nf);
            for (int k = 1; k < (int)HM_ARRAY_LEN(t->tls_fail); k++)
                if (t->tls_fail[k])
                    fprintf(f, " %s ×%llu", hm_tls_fail_name((hm_tls_fail)k),
                            (unsigned long long)t->tls_fail[k]);
            fprintf(f, " (first: %s)\n", t->tls_first_reason);
        }
    }
    fprintf(f, "Wall time         %.3f s\n", r->wall_seconds);
    double achieved = r->wall_seconds > 0 ? (double)t->sent / r->wall_seconds : 0.0;
    fprintf(f, "Throughput        %.1f %s/s", achieved, unit);
    if (r->rate_target > 0) fprintf(f, " (target %.0f/s, open loop)", r->rate_target);
    fputc('\n', f);
    if (r->rate_target > 0 && achieved < 0.95 * r->rate_target)
        fprintf(f,
                "WARNING           achieved %.0f of the target %.0f %s/s; hammer's threads were "
                "%s (%.0f%% CPU): %s\n",
                achieved, r->rate_target, unit,
                r->client_cpu_pct > 90 ? "saturated" : "not saturated", r->client_cpu_pct,
                r->client_cpu_pct > 90
                    ? "add threads (-t) or lower -R"
                    : "the server (or -c too small for its latency) is the limit");
    if (t->bytes_read || t->bytes_written) {
        char rd[32], rps[32], wr[32];
        hm_format_bytes(rd, sizeof(rd), (double)t->bytes_read);
        hm_format_bytes(rps, sizeof(rps),
                        r->wall_seconds > 0 ? (double)t->bytes_read / r->wall_seconds : 0);
        hm_format_bytes(wr, sizeof(wr), (double)t->bytes_written);
        fprintf(f, "Transfer          %s read (%s/s), %s written\n", rd, rps, wr);
    }
    if (t->coded_wire) {
        char w[32], d[32];
        hm_format_bytes(w, sizeof(w), (double)t->coded_wire);
        hm_format_bytes(d, sizeof(d), (double)t->coded_decoded);
        fprintf(f, "Compression       %s of compressed bodies decoded to %s (%.1fx)\n", w, d,
                (double)t->coded_decoded / (double)t->coded_wire);
    }
    fprintf(f, "Latency         %10s%10s%10s%10s%10s%10s %9s\n", "p50", "p90", "p99", "p99.9",
            "max", "mean", "count");
    if (r->rate_target > 0) {
        print_latency_row(f, "corrected", &t->action_us);
        print_latency_row(f, "service", &t->service_us);
    } else {
        print_latency_row(f, strcmp(unit, "actions") ? "request" : "action", &t->action_us);
    }
    if (r->has_patches) print_latency_row(f, "action->patch", &t->patch_us);
    if (hm_hdr_count(&t->page_us)) print_latency_row(f, "page load", &t->page_us);
    print_latency_row(f, "connect", &t->connect_us);
    if (r->tls) print_latency_row(f, "TLS handshake", &t->tls_us);
    if (r->n_variants) {
        print_variants(f, r);
        print_sse_outcomes(f, r);
        if (r->variants_diagnosis[0]) fprintf(f, "Diagnosis         %s\n", r->variants_diagnosis);
    }
    hm_steps_print(f, r->steps);
    print_server_watch(f, &r->server);
    hm_resources_print(f, r);
    for (int i = 0; i < r->n_thresholds; i++) {
        const hm_threshold *th = &r->thresholds[i];
        char measured[32];
        hm_threshold_measured(th, measured, sizeof(measured));
        fprintf(f, "Threshold         %-20s %s (measured %s)\n", th->text,
                th->passed ? "PASS" : "FAIL", measured);
    }
    print_result(f, r);
}
