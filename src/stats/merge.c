/* merge.c — several runs' JSON documents into one; see merge.h. */
#include "stats/merge.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hm_base.h"
#include "stats/hdr_json.h"
#include "stats/results.h"

/* Where a key sits decides the rules that are not the defaults. */
typedef enum level {
    LV_INNER,   /* inside a run document */
    LV_RUN,     /* the top of a run document */
    LV_PASSES,  /* the top of a --passes document */
    LV_OPTIONS, /* a run's resolved options ("options") */
} level;

typedef enum rule {
    R_SUM,   /* numbers summed; booleans all true; strings listed once each */
    R_SAME,  /* must be equal in every input */
    R_ANY,   /* booleans: true when any is */
    R_MEAN,  /* numbers averaged */
    R_MIN,   /* the smallest number, or the first string in order (times) */
    R_MAX,   /* the largest number */
    R_FIRST, /* the first input's value (settings every shard shares) */
    R_SKIP,  /* rebuilt after the generic merge */
} rule;

/* What the inputs say about the shards of the run. */
typedef struct coverage {
    int count;        /* N of --shard I/N (1 for unsharded runs) */
    int *seen;        /* count entries: how many inputs were shard i */
    json_t *missing;  /* indices no input was */
    json_t *repeated; /* indices more than one input was */
} coverage;

typedef struct merge_ctx {
    const hm_merge_input *in;
    int n;
    char *why;
    size_t whylen;
    bool failed;
    coverage cov;
    json_t *inexact; /* paths ([] for any index) merged without their histograms */
} merge_ctx;

/* One value to merge and the input it came from. */
typedef struct src_val {
    json_t *v;
    int src;
} src_val;

static json_t *fail(merge_ctx *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static json_t *fail(merge_ctx *m, const char *fmt, ...)
{
    if (!m->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(m->why, m->whylen, fmt, ap);
        va_end(ap);
        m->failed = true;
    }
    return NULL;
}

static const char *name_of(const merge_ctx *m, int src)
{
    return m->in[src].name ? m->in[src].name : "(input)";
}

static bool one_of(const char *key, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(key, names[i])) return true;
    return false;
}

static rule rule_of(const char *key, level lv)
{
    static const char *const run_skip[] = {"shard",        "thresholds",     "passed",
                                           "wall_seconds", "throughput_rps", "result"};
    static const char *const run_same[] = {"scenario", "pass", "mode", "unit", "schema"};
    static const char *const run_first[] = {"command_line", "interval_s"};
    static const char *const passes_skip[] = {"passes", "changes", "passed"};
    /* The run's own options: its size adds up over the shards; the rest
     * (timeouts, durations, intervals) every shard shares. */
    static const char *const options_sum[] = {"concurrency", "actions", "rate", "threads"};
    if (lv == LV_RUN) {
        if (one_of(key, run_skip, HM_ARRAY_LEN(run_skip))) return R_SKIP;
        if (one_of(key, run_same, HM_ARRAY_LEN(run_same))) return R_SAME;
        if (one_of(key, run_first, HM_ARRAY_LEN(run_first))) return R_FIRST;
        if (!strcmp(key, "started")) return R_MIN;
    }
    if (lv == LV_PASSES && one_of(key, passes_skip, HM_ARRAY_LEN(passes_skip))) return R_SKIP;
    if (lv == LV_OPTIONS)
        return one_of(key, options_sum, HM_ARRAY_LEN(options_sum)) ? R_SUM : R_FIRST;
    /* Every shard watches the same server: its /_health figures are that
     * one server's, not parts of a sum. */
    if (!strcmp(key, "server_watch") || (lv == LV_INNER && !strcmp(key, "server"))) return R_FIRST;
    if (!strcmp(key, "interrupted")) return R_ANY;
    if (!strcmp(key, "interrupted_at_s")) return R_MIN;
    /* The outage window over the shards: from the first failure anywhere
     * to the last (its duration_s is rebuilt from them). */
    if (!strcmp(key, "first_failure_s")) return R_MIN;
    if (!strcmp(key, "last_failure_s")) return R_MAX;
    /* A first example (error_reasons, status_examples, sse.first_failure)
     * stays one input's: its reason, where and bytes belong together. */
    static const char *const example[] = {"reason", "where", "bytes", "kind"};
    if (lv == LV_INNER && one_of(key, example, HM_ARRAY_LEN(example))) return R_FIRST;
    /* A time series' points: when the shards' points end and how long they
     * last (they run side by side, so these agree but for the skew). */
    if (!strcmp(key, "t") || !strcmp(key, "dt")) return R_MEAN;
    size_t len = strlen(key);
    if (len > 4 && !strcmp(key + len - 4, "_pct")) return R_MEAN;
    return R_SUM;
}

/* path with every "[N]" written "[]": the same place in every element. */
static void path_pattern(const char *path, char *out, size_t len)
{
    size_t n = 0;
    for (const char *p = path; *p && n + 1 < len; p++) {
        out[n++] = *p;
        if (*p == '[')
            while (p[1] >= '0' && p[1] <= '9')
                p++;
    }
    out[n] = 0;
}

static double num_at(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b) v = json_object_get(v, b);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static char *dump_any(json_t *v)
{
    return json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
}

/* ---- the generic merge ----------------------------------------------------- */

static json_t *merge_value(merge_ctx *m, const char *path, rule r, level lv, src_val *vals, int k);

static json_t *merge_hist(merge_ctx *m, const char *path, src_val *vals, int k)
{
    hm_hdr sum, one;
    if (hm_hdr_json_decode(vals[0].v, &sum) < 0)
        return fail(m, "%s: %s is not a valid HdrHistogram encoding", name_of(m, vals[0].src),
                    path);
    for (int i = 1; i < k; i++) {
        if (hm_hdr_json_decode(vals[i].v, &one) < 0) {
            hm_hdr_destroy(&sum);
            return fail(m, "%s: %s is not a valid HdrHistogram encoding", name_of(m, vals[i].src),
                        path);
        }
        int rc = hm_hdr_add(&sum, &one);
        hm_hdr_destroy(&one);
        if (rc < 0) {
            hm_hdr_destroy(&sum);
            return fail(m, "%s: %s has another histogram range or precision than in %s",
                        name_of(m, vals[i].src), path, name_of(m, vals[0].src));
        }
    }
    json_t *out = hm_hdr_json(&sum);
    hm_hdr_destroy(&sum);
    return out ? out : fail(m, "out of memory");
}

/* ok_pct wherever ok and sent sit beside it (variants) is ok/sent, not a mean. */
static void fix_ok_pct(json_t *o)
{
    json_t *ok = json_object_get(o, "ok"), *sent = json_object_get(o, "sent");
    if (!json_object_get(o, "ok_pct") || !json_is_integer(ok) || !json_is_integer(sent)) return;
    json_int_t s = json_integer_value(sent);
    json_object_set_new(o, "ok_pct",
                        json_real(s ? 100.0 * (double)json_integer_value(ok) / (double)s : 0));
}

/* An outage window's duration is its end minus its start, not a sum. */
static void fix_outage(json_t *o)
{
    json_t *first = json_object_get(o, "first_failure_s"),
           *last = json_object_get(o, "last_failure_s");
    if (!json_object_get(o, "duration_s") || !json_is_number(first) || !json_is_number(last))
        return;
    json_object_set_new(o, "duration_s",
                        json_real(json_number_value(last) - json_number_value(first)));
}

/* A latency summary without its histogram inside a time series (a point's
 * p50..max): what adds up exactly is kept (count summed, min and max), the
 * percentiles and means cannot be, so they are null, and the place is
 * listed in shard.inexact. The run's own histograms never come here. */
static json_t *merge_summary_without_hdr(merge_ctx *m, const char *path, src_val *vals, int k)
{
    json_t *out = json_object();
    for (int i = 0; i < k; i++) {
        const char *key;
        json_t *v;
        json_object_foreach(vals[i].v, key, v)
        {
            json_t *cur = json_object_get(out, key);
            bool sum = !strcmp(key, "count"), lo = !strcmp(key, "min"), hi = !strcmp(key, "max");
            if (!(sum || lo || hi) || !json_is_number(v)) {
                json_object_set_new(out, key, json_null());
            } else if (!cur || json_is_null(cur)) {
                if (!cur) json_object_set_new(out, key, json_deep_copy(v));
            } else if (sum) {
                json_object_set_new(out, key,
                                    json_integer(json_integer_value(cur) + json_integer_value(v)));
            } else if (lo ? json_number_value(v) < json_number_value(cur)
                          : json_number_value(v) > json_number_value(cur)) {
                json_object_set_new(out, key, json_deep_copy(v));
            }
        }
    }
    char pattern[512];
    path_pattern(path, pattern, sizeof(pattern));
    bool listed = false;
    size_t i;
    json_t *p;
    json_array_foreach(m->inexact, i, p) listed = listed || !strcmp(json_string_value(p), pattern);
    if (!listed) json_array_append_new(m->inexact, json_string(pattern));
    return out;
}

static json_t *merge_object(merge_ctx *m, const char *path, level lv, src_val *vals, int k)
{
    bool any_hist = false;
    for (int i = 0; i < k; i++) {
        if (hm_hdr_json_is(vals[i].v)) {
            any_hist = true;
        } else if (hm_hdr_json_looks_like(vals[i].v)) {
            if (strchr(path, '[')) return merge_summary_without_hdr(m, path, vals, k);
            return fail(m,
                        "%s: the histogram %s has no \"hdr\" (written by an older hammer?); its "
                        "percentiles cannot be merged",
                        name_of(m, vals[i].src), path);
        }
    }
    if (any_hist) {
        for (int i = 0; i < k; i++)
            if (!hm_hdr_json_is(vals[i].v))
                return fail(m, "%s: %s is not a histogram as in %s", name_of(m, vals[i].src), path,
                            name_of(m, vals[0].src));
        return merge_hist(m, path, vals, k);
    }
    json_t *out = json_object();
    src_val *sub = hm_calloc((size_t)k, sizeof(*sub));
    if (!out || !sub) {
        json_decref(out);
        hm_free(sub);
        return fail(m, "out of memory");
    }
    for (int i = 0; i < k && !m->failed; i++) {
        const char *key;
        json_t *unused;
        json_object_foreach(vals[i].v, key, unused)
        {
            (void)unused;
            bool earlier = false;
            for (int j = 0; j < i && !earlier; j++)
                earlier = json_object_get(vals[j].v, key) != NULL;
            rule r = rule_of(key, lv);
            if (earlier || r == R_SKIP) continue;
            int ns = 0;
            for (int j = i; j < k; j++) {
                json_t *v = json_object_get(vals[j].v, key);
                if (v) sub[ns++] = (src_val){v, vals[j].src};
            }
            char sub_path[512];
            snprintf(sub_path, sizeof(sub_path), "%s%s%s", path, *path ? "." : "", key);
            level sub_lv = lv == LV_RUN && !strcmp(key, "options") ? LV_OPTIONS : LV_INNER;
            json_t *mv = merge_value(m, sub_path, r, sub_lv, sub, ns);
            if (!mv) break;
            json_object_set_new(out, key, mv);
        }
    }
    hm_free(sub);
    if (m->failed) {
        json_decref(out);
        return NULL;
    }
    fix_ok_pct(out);
    fix_outage(out);
    return out;
}

/* Arrays merge element by element. Arrays of objects (a time series'
 * points) may differ in length: each index merges the inputs that have it.
 * Arrays of other values that differ in length are the first input's. */
static json_t *merge_array(merge_ctx *m, const char *path, src_val *vals, int k)
{
    size_t len = 0;
    bool same_len = true, objects = true;
    for (int i = 0; i < k; i++) {
        size_t n = json_array_size(vals[i].v);
        same_len = same_len && n == json_array_size(vals[0].v);
        len = n > len ? n : len;
        for (size_t e = 0; e < n; e++)
            objects = objects && json_is_object(json_array_get(vals[i].v, e));
    }
    if (!same_len && !objects) return json_deep_copy(vals[0].v);
    json_t *out = json_array();
    src_val *sub = hm_calloc((size_t)k, sizeof(*sub));
    if (!out || !sub) {
        json_decref(out);
        hm_free(sub);
        return fail(m, "out of memory");
    }
    for (size_t e = 0; e < len; e++) {
        int ns = 0;
        for (int i = 0; i < k; i++)
            if (e < json_array_size(vals[i].v))
                sub[ns++] = (src_val){json_array_get(vals[i].v, e), vals[i].src};
        char sub_path[512];
        snprintf(sub_path, sizeof(sub_path), "%s[%zu]", path, e);
        json_t *mv = merge_value(m, sub_path, R_SUM, LV_INNER, sub, ns);
        if (!mv) break;
        json_array_append_new(out, mv);
    }
    hm_free(sub);
    if (m->failed) {
        json_decref(out);
        return NULL;
    }
    return out;
}

static json_t *merge_numbers(merge_ctx *m, const char *path, rule r, src_val *vals, int k)
{
    bool all_int = true;
    for (int i = 0; i < k; i++)
        all_int = all_int && json_is_integer(vals[i].v);
    if (r == R_SAME) {
        for (int i = 1; i < k; i++)
            if (!json_equal(vals[i].v, vals[0].v))
                return fail(m, "%s differs: %g in %s, %g in %s", path, json_number_value(vals[0].v),
                            name_of(m, vals[0].src), json_number_value(vals[i].v),
                            name_of(m, vals[i].src));
        return json_deep_copy(vals[0].v);
    }
    if (r == R_FIRST) return json_deep_copy(vals[0].v);
    if (r == R_MIN || r == R_MAX) {
        int pick = 0;
        for (int i = 1; i < k; i++)
            if (r == R_MIN ? json_number_value(vals[i].v) < json_number_value(vals[pick].v)
                           : json_number_value(vals[i].v) > json_number_value(vals[pick].v))
                pick = i;
        return json_deep_copy(vals[pick].v);
    }
    if (r == R_MEAN) {
        double s = 0;
        for (int i = 0; i < k; i++)
            s += json_number_value(vals[i].v);
        return json_real(s / k);
    }
    if (all_int) {
        json_int_t s = 0;
        for (int i = 0; i < k; i++)
            s += json_integer_value(vals[i].v);
        return json_integer(s);
    }
    double s = 0;
    for (int i = 0; i < k; i++)
        s += json_number_value(vals[i].v);
    return json_real(s);
}

static json_t *merge_strings(merge_ctx *m, const char *path, rule r, src_val *vals, int k)
{
    if (r == R_SAME) {
        for (int i = 1; i < k; i++)
            if (strcmp(json_string_value(vals[i].v), json_string_value(vals[0].v)))
                return fail(m, "%s differs: \"%s\" in %s, \"%s\" in %s", path,
                            json_string_value(vals[0].v), name_of(m, vals[0].src),
                            json_string_value(vals[i].v), name_of(m, vals[i].src));
        return json_deep_copy(vals[0].v);
    }
    if (r == R_FIRST) return json_deep_copy(vals[0].v);
    if (r == R_MIN) { /* RFC 3339 times in UTC sort as text */
        int lo = 0;
        for (int i = 1; i < k; i++)
            if (strcmp(json_string_value(vals[i].v), json_string_value(vals[lo].v)) < 0) lo = i;
        return json_deep_copy(vals[lo].v);
    }
    /* Each distinct text once, in input order ("io_uring; epoll"). */
    size_t cap = 1;
    for (int i = 0; i < k; i++)
        cap += json_string_length(vals[i].v) + 2;
    char *joined = hm_alloc(cap);
    if (!joined) return fail(m, "out of memory");
    size_t len = 0;
    joined[0] = 0;
    for (int i = 0; i < k; i++) {
        const char *s = json_string_value(vals[i].v);
        bool dup = false;
        for (int j = 0; j < i && !dup; j++)
            dup = !strcmp(s, json_string_value(vals[j].v));
        if (dup) continue;
        len += (size_t)snprintf(joined + len, cap - len, "%s%s", len ? "; " : "", s);
    }
    json_t *out = json_string(joined);
    hm_free(joined);
    return out;
}

static json_t *merge_value(merge_ctx *m, const char *path, rule r, level lv, src_val *vals, int k)
{
    /* Nulls say "not measured here": merge what the others measured. */
    int nn = 0;
    for (int i = 0; i < k; i++)
        if (!json_is_null(vals[i].v)) vals[nn++] = vals[i];
    if (nn == 0) return json_null();
    json_t *first = vals[0].v;
    for (int i = 1; i < nn; i++) {
        bool same_kind = json_typeof(vals[i].v) == json_typeof(first) ||
                         (json_is_number(vals[i].v) && json_is_number(first)) ||
                         (json_is_boolean(vals[i].v) && json_is_boolean(first));
        if (!same_kind)
            return fail(m, "%s is a different kind of value in %s than in %s", path,
                        name_of(m, vals[i].src), name_of(m, vals[0].src));
    }
    if (r == R_FIRST) return json_deep_copy(first);
    if (json_is_object(first)) return merge_object(m, path, lv, vals, nn);
    if (json_is_array(first)) return merge_array(m, path, vals, nn);
    if (json_is_number(first)) return merge_numbers(m, path, r, vals, nn);
    if (json_is_string(first)) return merge_strings(m, path, r, vals, nn);
    bool all = true, any = false;
    for (int i = 0; i < nn; i++) {
        all = all && json_is_true(vals[i].v);
        any = any || json_is_true(vals[i].v);
    }
    if (r == R_SAME && all != any)
        return fail(m, "%s differs between %s and the other inputs", path, name_of(m, vals[0].src));
    return json_boolean(r == R_ANY ? any : all);
}

/* ---- one run: what the generic rules cannot do ------------------------------ */

/* The shard record of a document: its own, or its first pass's. */
static json_t *shard_of(json_t *doc)
{
    json_t *sh = json_object_get(doc, "shard");
    if (!sh) sh = json_object_get(json_array_get(json_object_get(doc, "passes"), 0), "shard");
    return json_is_object(sh) ? sh : NULL;
}

/* One input as the merged document lists it. */
typedef struct shard_row {
    int index, src;
    double started, wall, rps;
    json_int_t sent, ok;
    bool passed;
} shard_row;

static int row_cmp(const void *a, const void *b)
{
    const shard_row *x = a, *y = b;
    return x->index != y->index ? (x->index > y->index) - (x->index < y->index)
                                : (x->src > y->src) - (x->src < y->src);
}

/* The run's thresholds as text: a shard defers them to the merge
 * (shard.thresholds); an unsharded run evaluated them itself. */
static json_t *threshold_texts(json_t *run)
{
    json_t *texts = json_object_get(json_object_get(run, "shard"), "thresholds");
    if (json_is_array(texts)) return json_incref(texts);
    json_t *out = json_array();
    size_t i;
    json_t *th;
    json_array_foreach(json_object_get(run, "thresholds"), i, th)
    {
        json_t *t = json_object_get(th, "threshold");
        if (json_is_string(t)) json_array_append(out, t);
    }
    return out;
}

static void decode_or_empty(json_t *obj, hm_hdr *h)
{
    if (hm_hdr_json_decode(obj, h) < 0) hm_hdr_init(h, 1, HM_HDR_HIGHEST_US, 3);
}

/* Each threshold measured on the merged document; *all_held cleared when one fails. */
static json_t *evaluate_thresholds(merge_ctx *m, json_t *merged, json_t *texts, double wall,
                                   bool *all_held, json_t *reasons)
{
    hm_hdr action, patch;
    json_t *lat = json_object_get(merged, "latency_us");
    decode_or_empty(json_object_get(lat, "action"), &action);
    decode_or_empty(json_object_get(lat, "patch"), &patch);
    json_t *actions = json_object_get(merged, "actions");
    json_int_t ok = json_integer_value(json_object_get(actions, "ok"));
    json_int_t sent = json_integer_value(json_object_get(actions, "sent"));
    json_t *out = json_array();
    size_t i;
    json_t *text;
    json_array_foreach(texts, i, text)
    {
        hm_threshold th;
        char why[256];
        if (!json_is_string(text) ||
            hm_threshold_parse(json_string_value(text), &th, why, sizeof(why)) < 0) {
            fail(m, "a threshold of the run cannot be read: %s",
                 json_is_string(text) ? why : "not a string");
            break;
        }
        hm_threshold_evaluate(&th, &action, &patch, (uint64_t)ok, (uint64_t)sent, wall);
        *all_held = *all_held && th.passed;
        if (!th.passed) {
            char measured[32];
            hm_threshold_measured(&th, measured, sizeof(measured));
            json_array_append_new(
                reasons, json_sprintf("threshold %s failed (measured %s)", th.text, measured));
        }
        json_array_append_new(out, json_pack("{s:s, s:b, s:f}", "threshold", th.text, "passed",
                                             th.passed, "value", th.value));
    }
    hm_hdr_destroy(&action);
    hm_hdr_destroy(&patch);
    if (m->failed) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* The merged run's shard record: who took part, when each started, what
 * each did, and what is missing. */
static json_t *shard_record(merge_ctx *m, json_t *first, shard_row *rows, int k, json_t *texts)
{
    json_t *sh = json_object();
    json_t *first_sh = json_object_get(first, "shard");
    json_object_set_new(sh, "index", json_null());
    json_object_set_new(sh, "count", json_integer(m->cov.count));
    static const char *const kept[] = {"run_id", "options", "start_at"};
    for (size_t i = 0; i < HM_ARRAY_LEN(kept); i++) {
        json_t *v = json_object_get(first_sh, kept[i]);
        json_object_set_new(sh, kept[i], v ? json_deep_copy(v) : json_null());
    }
    json_object_set(sh, "thresholds", texts);
    qsort(rows, (size_t)k, sizeof(*rows), row_cmp);
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < k; i++)
        if (!isnan(rows[i].started)) lo = fmin(lo, rows[i].started), hi = fmax(hi, rows[i].started);
    bool known = lo <= hi;
    json_object_set_new(sh, "started", known ? json_real(lo) : json_null());
    json_object_set_new(sh, "start_skew_s", known ? json_real(hi - lo) : json_null());
    json_t *inputs = json_array();
    for (int i = 0; i < k; i++) {
        const shard_row *r = &rows[i];
        bool has = !isnan(r->started);
        json_array_append_new(inputs,
                              json_pack("{s:i, s:s, s:o, s:o, s:f, s:I, s:I, s:f, s:b}", "index",
                                        r->index, "source", name_of(m, r->src), "started",
                                        has ? json_real(r->started) : json_null(), "start_offset_s",
                                        has ? json_real(r->started - lo) : json_null(),
                                        "wall_seconds", r->wall, "sent", r->sent, "ok", r->ok,
                                        "throughput_rps", r->rps, "passed", r->passed));
    }
    json_object_set_new(sh, "inputs", inputs);
    json_object_set(sh, "missing", m->cov.missing);
    json_object_set(sh, "repeated", m->cov.repeated);
    json_object_set(sh, "inexact", m->inexact);
    return sh;
}

static json_t *merge_run(merge_ctx *m, const char *path, src_val *runs, int k)
{
    json_t *out = merge_object(m, path, LV_RUN, runs, k);
    shard_row *rows = hm_calloc((size_t)k, sizeof(*rows));
    if (!out || !rows) {
        json_decref(out);
        hm_free(rows);
        return out ? fail(m, "out of memory") : NULL;
    }
    double first_start = INFINITY, last_end = -INFINITY, longest = 0;
    bool all_started = true, all_passed = true;
    for (int i = 0; i < k; i++) {
        json_t *run = runs[i].v, *sh = json_object_get(run, "shard");
        shard_row *r = &rows[i];
        *r = (shard_row){
            .index = (int)json_integer_value(json_object_get(sh, "index")),
            .src = runs[i].src,
            .started = num_at(sh, "started", NULL),
            .wall = num_at(run, "wall_seconds", NULL),
            .rps = num_at(run, "throughput_rps", NULL),
            .sent = json_integer_value(json_object_get(json_object_get(run, "actions"), "sent")),
            .ok = json_integer_value(json_object_get(json_object_get(run, "actions"), "ok")),
            .passed = json_is_true(json_object_get(run, "passed")),
        };
        if (isnan(r->wall)) r->wall = 0;
        if (isnan(r->rps)) r->rps = 0;
        all_passed = all_passed && r->passed;
        longest = fmax(longest, r->wall);
        if (isnan(r->started)) {
            all_started = false;
        } else {
            first_start = fmin(first_start, r->started);
            last_end = fmax(last_end, r->started + r->wall);
        }
    }
    /* The shards ran side by side: the run lasted from the first start to
     * the last end (without start times, as long as the longest shard). */
    double wall = all_started ? last_end - first_start : longest;
    json_int_t sent = json_integer_value(json_object_get(json_object_get(out, "actions"), "sent"));
    json_object_set_new(out, "wall_seconds", json_real(wall));
    json_object_set_new(out, "throughput_rps", json_real(wall > 0 ? (double)sent / wall : 0));
    /* The merged verdict's reasons: each failed shard's own, then the
     * thresholds measured on the merged run, then missing shards. */
    json_t *reasons = json_array();
    for (int i = 0; i < k; i++) {
        size_t j;
        json_t *why;
        json_array_foreach(json_object_get(json_object_get(runs[i].v, "result"), "reasons"), j,
                           why) if (json_is_string(why))
            json_array_append_new(
                reasons, json_sprintf("shard %d: %s", rows[i].index, json_string_value(why)));
    }
    json_t *texts = threshold_texts(runs[0].v);
    bool held = true;
    json_t *ths = evaluate_thresholds(m, out, texts, wall, &held, reasons);
    if (!ths) {
        json_decref(reasons);
        json_decref(texts);
        json_decref(out);
        hm_free(rows);
        return NULL;
    }
    json_object_set_new(out, "thresholds", ths);
    bool complete = json_array_size(m->cov.missing) == 0;
    if (!complete) {
        char *list = json_dumps(m->cov.missing, JSON_COMPACT);
        json_array_append_new(reasons, json_sprintf("shards missing: %s", list ? list : "?"));
        free(list);
    }
    bool passed = all_passed && held && complete;
    /* A shard that failed without saying why (a document from before
     * result.reasons was written) still fails the merge in words. */
    if (!passed && !json_array_size(reasons))
        json_array_append_new(reasons, json_string("a shard did not pass"));
    json_object_set_new(out, "passed", json_boolean(passed));
    json_object_set_new(out, "result",
                        json_pack("{s:b, s:o}", "passed", passed, "reasons", reasons));
    json_object_set_new(out, "shard", shard_record(m, runs[0].v, rows, k, texts));
    json_decref(texts);
    hm_free(rows);
    return out;
}

/* ---- the inputs belong together --------------------------------------------- */

/* The first option (key of shard.options) whose value differs, as text. */
static void first_difference(json_t *a, json_t *b, char *out, size_t len)
{
    snprintf(out, len, "?");
    for (int pass = 0; pass < 2; pass++) {
        const char *key;
        json_t *v;
        json_object_foreach(pass ? b : a, key, v)
        {
            json_t *other = json_object_get(pass ? a : b, key);
            if (other && json_equal(v, other)) continue;
            char *x = dump_any(json_object_get(a, key)), *y = dump_any(json_object_get(b, key));
            snprintf(out, len, "%s: %s vs %s", key, x ? x : "(none)", y ? y : "(none)");
            free(x);
            free(y);
            return;
        }
    }
}

static bool same_run(merge_ctx *m)
{
    json_t *sh0 = shard_of(m->in[0].doc);
    for (int i = 0; i < m->n; i++) {
        json_t *sh = shard_of(m->in[i].doc);
        if (!sh0 != !sh) {
            fail(m, "%s has a shard record and %s has none (written by an older hammer?)",
                 name_of(m, sh0 ? 0 : i), name_of(m, sh0 ? i : 0));
            return false;
        }
        if (!sh) continue;
        json_int_t count = json_integer_value(json_object_get(sh, "count"));
        json_int_t index = json_integer_value(json_object_get(sh, "index"));
        if (!json_is_integer(json_object_get(sh, "index")) || count < 1 || index < 0 ||
            index >= count) {
            fail(m, "%s: its shard record is malformed (index %lld of %lld)", name_of(m, i),
                 (long long)index, (long long)count);
            return false;
        }
        if (count != json_integer_value(json_object_get(sh0, "count"))) {
            fail(m, "%s is one of %lld shards but %s one of %lld: not shards of one run",
                 name_of(m, i), (long long)count, name_of(m, 0),
                 (long long)json_integer_value(json_object_get(sh0, "count")));
            return false;
        }
        json_t *id0 = json_object_get(sh0, "run_id"), *id = json_object_get(sh, "run_id");
        if (!json_equal(id0 ? id0 : json_null(), id ? id : json_null())) {
            fail(m,
                 "%s (run %s) and %s (run %s) are from different runs: merge the shards of one "
                 "run (the same --run-id, or the same --start-at and options)",
                 name_of(m, 0), json_string_value(id0) ? json_string_value(id0) : "?",
                 name_of(m, i), json_string_value(id) ? json_string_value(id) : "?");
            return false;
        }
        json_t *o0 = json_object_get(sh0, "options"), *o = json_object_get(sh, "options");
        if (!json_equal(o0 ? o0 : json_null(), o ? o : json_null())) {
            char diff[512];
            first_difference(o0, o, diff, sizeof(diff));
            fail(m, "%s and %s ran with different options (%s): only shards of one run merge",
                 name_of(m, 0), name_of(m, i), diff);
            return false;
        }
    }
    return true;
}

static bool find_coverage(merge_ctx *m)
{
    json_t *sh0 = shard_of(m->in[0].doc);
    coverage *c = &m->cov;
    c->count = sh0 ? (int)json_integer_value(json_object_get(sh0, "count")) : 1;
    c->seen = hm_calloc((size_t)c->count, sizeof(int));
    c->missing = json_array();
    c->repeated = json_array();
    if (!c->seen || !c->missing || !c->repeated) return false;
    for (int i = 0; i < m->n; i++) {
        json_t *sh = shard_of(m->in[i].doc);
        c->seen[sh ? json_integer_value(json_object_get(sh, "index")) : 0]++;
    }
    for (int i = 0; i < c->count; i++) {
        if (c->seen[i] == 0) json_array_append_new(c->missing, json_integer(i));
        if (c->seen[i] > 1) json_array_append_new(c->repeated, json_integer(i));
    }
    return true;
}

static double change_pct(double from, double to)
{
    return from > 0 ? 100.0 * (to - from) / from : 0;
}

/* --passes: the change from each merged pass to the next, as one run reports it. */
static json_t *pass_changes(json_t *passes)
{
    json_t *out = json_array();
    for (size_t p = 1; p < json_array_size(passes); p++) {
        json_t *a = json_array_get(passes, p - 1), *b = json_array_get(passes, p);
        json_t *pa = json_object_get(a, "pass"), *pb = json_object_get(b, "pass");
        json_array_append_new(
            out,
            json_pack(
                "{s:s, s:s, s:f, s:f}", "from", json_string_value(pa) ? json_string_value(pa) : "",
                "to", json_string_value(pb) ? json_string_value(pb) : "", "throughput_pct",
                change_pct(num_at(a, "throughput_rps", NULL), num_at(b, "throughput_rps", NULL)),
                "p99_pct",
                change_pct(num_at(json_object_get(a, "latency_us"), "action", "p99"),
                           num_at(json_object_get(b, "latency_us"), "action", "p99"))));
    }
    return out;
}

static json_t *merge_passes(merge_ctx *m, src_val *vals)
{
    size_t np = json_array_size(json_object_get(m->in[0].doc, "passes"));
    for (int i = 1; i < m->n; i++) {
        size_t npi = json_array_size(json_object_get(m->in[i].doc, "passes"));
        if (npi != np)
            return fail(m, "%s ran %zu passes but %s ran %zu", name_of(m, 0), np, name_of(m, i),
                        npi);
    }
    json_t *out = merge_object(m, "", LV_PASSES, vals, m->n);
    if (!out) return NULL;
    json_t *merged = json_array();
    bool all = np > 0;
    src_val *runs = hm_calloc((size_t)m->n, sizeof(*runs));
    for (size_t p = 0; runs && p < np; p++) {
        for (int i = 0; i < m->n; i++)
            runs[i] = (src_val){json_array_get(json_object_get(m->in[i].doc, "passes"), p), i};
        char path[32];
        snprintf(path, sizeof(path), "passes[%zu]", p);
        json_t *run = merge_run(m, path, runs, m->n);
        if (!run) break;
        all = all && json_is_true(json_object_get(run, "passed"));
        json_array_append_new(merged, run);
    }
    hm_free(runs);
    if (m->failed || !runs) {
        json_decref(merged);
        json_decref(out);
        return runs ? NULL : fail(m, "out of memory");
    }
    json_object_set_new(out, "changes", pass_changes(merged));
    json_object_set_new(out, "passes", merged);
    json_object_set_new(out, "passed", json_boolean(all));
    return out;
}

json_t *hm_results_merge(const hm_merge_input *in, int n, char *why, size_t whylen)
{
    merge_ctx m = {.in = in, .n = n, .why = why, .whylen = whylen};
    why[0] = 0;
    if (n < 1) return fail(&m, "nothing to merge");
    for (int i = 0; i < n; i++)
        if (!json_is_object(in[i].doc))
            return fail(&m, "%s is not a hammer results document", name_of(&m, i));
    if (!same_run(&m)) return NULL;
    json_t *out = NULL;
    src_val *vals = hm_calloc((size_t)n, sizeof(*vals));
    m.inexact = json_array();
    if (!vals || !m.inexact || !find_coverage(&m)) {
        fail(&m, "out of memory");
        goto done;
    }
    bool passes = json_object_get(in[0].doc, "passes") != NULL;
    for (int i = 0; i < n; i++) {
        vals[i] = (src_val){in[i].doc, i};
        if ((json_object_get(in[i].doc, "passes") != NULL) != passes) {
            fail(&m, "%s ran --passes and %s did not", name_of(&m, passes ? 0 : i),
                 name_of(&m, passes ? i : 0));
            goto done;
        }
    }
    out = passes ? merge_passes(&m, vals) : merge_run(&m, "", vals, n);
done:
    hm_free(vals);
    hm_free(m.cov.seen);
    json_decref(m.cov.missing);
    json_decref(m.cov.repeated);
    json_decref(m.inexact);
    return out;
}
