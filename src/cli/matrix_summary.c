/* matrix_summary.c — medians, ranges and verdicts of hammer matrix; see
 * matrix_summary.h. */
#include "cli/matrix_summary.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hm_base.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* {"median", "min", "max", "n"} of v[0..n), n > 0; sorts v. */
static json_t *stat_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return json_pack("{s:f, s:f, s:f, s:i}", "median", median, "min", v[0], "max", v[n - 1], "n",
                     n);
}

/* Two ranges that overlap cannot be told apart from run-to-run noise; one
 * run has no range, so it gives no verdict at all. Sets "separable" and
 * "verdict" on the change object ch. */
static void judge(json_t *ch, json_t *a, json_t *b)
{
    bool one = hm_matrix_num(a, "n") < 2 || hm_matrix_num(b, "n") < 2;
    bool overlap = hm_matrix_num(a, "min") <= hm_matrix_num(b, "max") &&
                   hm_matrix_num(b, "min") <= hm_matrix_num(a, "max");
    json_object_set_new(ch, "separable", json_boolean(!one && !overlap));
    json_object_set_new(ch, "verdict",
                        json_string(one       ? "one run"
                                    : overlap ? "not separable"
                                              : "separable"));
}

void hm_matrix_pass_names(json_t *doc, char *a, char *b, size_t len)
{
    const char *passes =
        json_string_value(json_object_get(json_object_get(doc, "parameters"), "passes"));
    if (!passes) passes = "cold,warm";
    size_t k = strcspn(passes, ",");
    snprintf(a, len, "%.*s", (int)k, passes);
    snprintf(b, len, "%s", passes[k] ? passes + k + 1 : passes);
    /* They are written into Markdown and HTML as they are: names only. */
    for (char *p = a; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_') *p = '_';
    for (char *p = b; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_') *p = '_';
}

#define LADDER_MAX 128

/* Median latency at each point of the percentile ladder over n runs. */
static json_t *median_ladder(json_t **passes, int n, double *scratch)
{
    json_t *first = NULL; /* a run that recorded nothing has no ladder */
    for (int r = 0; r < n && !json_array_size(first); r++)
        first = json_object_get(json_object_get(passes[r], "latency_us"), "percentiles");
    size_t points = json_array_size(first);
    json_t *out = json_array();
    for (size_t i = 0; i < points && i < LADDER_MAX; i++) {
        int m = 0;
        for (int r = 0; r < n; r++) {
            json_t *pts = json_object_get(json_object_get(passes[r], "latency_us"), "percentiles");
            json_t *pt = json_array_get(pts, i);
            if (pt) scratch[m++] = json_number_value(json_array_get(pt, 1));
        }
        if (!m) continue;
        qsort(scratch, (size_t)m, sizeof(double), cmp_double);
        double med = m % 2 ? scratch[m / 2] : (scratch[m / 2 - 1] + scratch[m / 2]) / 2;
        json_array_append_new(out,
                              json_pack("[O,f]", json_array_get(json_array_get(first, i), 0), med));
    }
    return out;
}

/* One table row: a profile's runs of a workload. */
static json_t *summarize_row(json_t *runs, const char *profile, const char *workload, const char *a,
                             const char *b)
{
    size_t cap = json_array_size(runs) + 1;
    double *v[7];
    json_t **pa = hm_calloc(cap, sizeof(json_t *)), **pb = hm_calloc(cap, sizeof(json_t *));
    for (size_t k = 0; k < HM_ARRAY_LEN(v); k++)
        v[k] = hm_calloc(cap, sizeof(double));
    int n = 0, failed = 0, skipped = 0, failing = 0;
    const char *reason = NULL, *failing_reason = NULL;
    size_t i;
    json_t *run;
    json_array_foreach(runs, i, run)
    {
        if (strcmp(hm_matrix_text(run, "profile"), profile) ||
            strcmp(hm_matrix_text(run, "workload"), workload))
            continue;
        const char *status = hm_matrix_text(run, "status");
        json_t *passes = json_object_get(run, "passes");
        json_t *ja = json_object_get(passes, a), *jb = json_object_get(passes, b);
        if (!hm_matrix_run_measured(run) || !ja || !jb) {
            if (!strcmp(status, "skipped") || !strcmp(status, "interrupted"))
                skipped++;
            else
                failed++;
            if (!reason) reason = json_string_value(json_object_get(run, "reason"));
            continue;
        }
        if (strcmp(status, "ok")) { /* measured, but hammer failed it */
            failing++;
            if (!failing_reason) failing_reason = json_string_value(json_object_get(run, "reason"));
        }
        v[0][n] = hm_matrix_num(ja, "rps");
        v[1][n] = hm_matrix_num(jb, "rps");
        v[2][n] = hm_matrix_num(ja, "ok_pct");
        v[3][n] = hm_matrix_num(jb, "ok_pct");
        v[4][n] = v[0][n] > 0 ? (v[1][n] / v[0][n] - 1) * 100 : 0;
        v[5][n] = hm_matrix_num(json_object_get(jb, "latency_us"), "p50");
        v[6][n] = hm_matrix_num(json_object_get(jb, "latency_us"), "p99");
        pa[n] = ja;
        pb[n] = jb;
        n++;
    }
    json_t *row = json_pack("{s:s, s:i, s:i, s:i}", "profile", profile, "runs", n, "failed_runs",
                            failed, "skipped_runs", skipped);
    json_object_set_new(row, "reason", reason ? json_string(reason) : json_null());
    json_object_set_new(row, "failing_runs", json_integer(failing));
    json_object_set_new(row, "failing_reason",
                        failing_reason ? json_string(failing_reason) : json_null());
    if (n) {
        json_t *cold = stat_of(v[0], n), *warm = stat_of(v[1], n);
        json_t *c2w = stat_of(v[4], n);
        judge(c2w, cold, warm);
        json_object_set_new(row, "cold_rps", cold);
        json_object_set_new(row, "warm_rps", warm);
        json_object_set_new(row, "cold_ok_pct", stat_of(v[2], n));
        json_object_set_new(row, "warm_ok_pct", stat_of(v[3], n));
        json_object_set_new(row, "cold_to_warm_pct", c2w);
        json_object_set_new(row, "warm_p50_us", stat_of(v[5], n));
        json_object_set_new(row, "warm_p99_us", stat_of(v[6], n));
        json_object_set_new(
            row, "latency_us",
            json_pack("{s:o, s:o}", a, median_ladder(pa, n, v[0]), b, median_ladder(pb, n, v[1])));
    }
    /* Failed actions are cheap: a profile with failed runs or under 100% OK
     * is drawn apart and never the fastest. */
    bool comparable = n > 0 && failing == 0 &&
                      hm_matrix_num(json_object_get(row, "cold_ok_pct"), "min") >= 100 &&
                      hm_matrix_num(json_object_get(row, "warm_ok_pct"), "min") >= 100;
    json_object_set_new(row, "comparable", json_boolean(comparable));
    for (size_t k = 0; k < HM_ARRAY_LEN(v); k++)
        hm_free(v[k]);
    hm_free(pa);
    hm_free(pb);
    return row;
}

void hm_matrix_summarize(json_t *doc)
{
    char a[64], b[64];
    hm_matrix_pass_names(doc, a, b, sizeof(a));
    const char *baseline =
        json_string_value(json_object_get(json_object_get(doc, "parameters"), "baseline"));
    json_t *runs = json_object_get(doc, "runs");
    json_t *summary = json_object();
    size_t wi, pi;
    json_t *w, *p;
    json_array_foreach(json_object_get(doc, "workloads"), wi, w)
    {
        const char *wname = hm_matrix_text(w, "name");
        json_t *rows = json_array(), *base = NULL;
        json_array_foreach(json_object_get(doc, "profiles"), pi, p)
        {
            const char *pname = hm_matrix_text(p, "name");
            json_t *row = summarize_row(runs, pname, wname, a, b);
            json_array_append_new(rows, row);
            if (baseline && !strcmp(pname, baseline)) base = row;
        }
        json_t *base_warm = base ? json_object_get(base, "warm_rps") : NULL;
        json_t *row;
        json_array_foreach(rows, pi, row)
        {
            json_t *warm = json_object_get(row, "warm_rps");
            if (row == base || !warm || !base_warm || hm_matrix_num(base_warm, "median") <= 0)
                continue;
            double pct =
                (hm_matrix_num(warm, "median") / hm_matrix_num(base_warm, "median") - 1) * 100;
            json_t *delta = json_pack("{s:f}", "median", pct);
            judge(delta, warm, base_warm);
            json_object_set_new(row, "delta_pct", delta);
        }
        /* The fastest warm median among the comparable profiles only. */
        json_t *fastest = NULL, *left_out = json_array();
        json_array_foreach(rows, pi, row)
        {
            if (!json_integer_value(json_object_get(row, "runs"))) continue;
            if (!json_is_true(json_object_get(row, "comparable"))) {
                json_array_append_new(left_out, json_string(hm_matrix_text(row, "profile")));
                continue;
            }
            double rps = hm_matrix_num(json_object_get(row, "warm_rps"), "median");
            if (!fastest || rps > hm_matrix_num(fastest, "warm_rps")) {
                json_decref(fastest);
                fastest = json_pack("{s:s, s:f}", "profile", hm_matrix_text(row, "profile"),
                                    "warm_rps", rps);
            }
        }
        json_object_set_new(summary, wname,
                            json_pack("{s:s?, s:o, s:o, s:o}", "baseline", baseline, "rows", rows,
                                      "fastest", fastest ? fastest : json_null(), "left_out",
                                      left_out));
    }
    json_object_set_new(doc, "summary", summary);
}

bool hm_matrix_all_passed(json_t *doc)
{
    if (json_is_true(json_object_get(doc, "interrupted"))) return false;
    json_t *runs = json_object_get(doc, "runs");
    if (!json_array_size(runs)) return false;
    size_t i;
    json_t *run;
    json_array_foreach(runs, i, run)
    {
        if (strcmp(hm_matrix_text(run, "status"), "ok")) return false;
        const char *k;
        json_t *pass;
        json_object_foreach(json_object_get(run, "passes"), k,
                            pass) if (!json_is_true(json_object_get(pass, "passed"))) return false;
    }
    return true;
}
