/* matrix_report.c — summary, Markdown and HTML of `hammer matrix`; see
 * matrix_report.h. */
#include "stats/matrix_report.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hm_base.h"

/* ---- the summary --------------------------------------------------------- */

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

/* o[key] as a string, "" when absent: the renderers take documents from
 * files too, so a missing field must not crash them. */
static const char *text(json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : "";
}

static double num(json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

/* Two ranges that overlap cannot be told apart from run-to-run noise; one
 * run has no range, so it gives no verdict at all. Sets "separable" and
 * "verdict" on the change object ch. */
static void judge(json_t *ch, json_t *a, json_t *b)
{
    bool one = num(a, "n") < 2 || num(b, "n") < 2;
    bool overlap = num(a, "min") <= num(b, "max") && num(b, "min") <= num(a, "max");
    json_object_set_new(ch, "separable", json_boolean(!one && !overlap));
    json_object_set_new(ch, "verdict",
                        json_string(one       ? "one run"
                                    : overlap ? "not separable"
                                              : "separable"));
}

/* The two pass names ("cold,warm") into a and b. */
static void pass_names(json_t *doc, char *a, char *b, size_t len)
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

#define LADDER_MAX 32

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
    int n = 0, failed = 0, skipped = 0;
    const char *reason = NULL;
    size_t i;
    json_t *run;
    json_array_foreach(runs, i, run)
    {
        if (strcmp(text(run, "profile"), profile) || strcmp(text(run, "workload"), workload))
            continue;
        const char *status = text(run, "status");
        json_t *passes = json_object_get(run, "passes");
        json_t *ja = json_object_get(passes, a), *jb = json_object_get(passes, b);
        if (strcmp(status, "ok") || !ja || !jb) {
            if (!strcmp(status, "skipped") || !strcmp(status, "interrupted"))
                skipped++;
            else
                failed++;
            if (!reason) reason = json_string_value(json_object_get(run, "reason"));
            continue;
        }
        v[0][n] = num(ja, "rps");
        v[1][n] = num(jb, "rps");
        v[2][n] = num(ja, "ok_pct");
        v[3][n] = num(jb, "ok_pct");
        v[4][n] = v[0][n] > 0 ? (v[1][n] / v[0][n] - 1) * 100 : 0;
        v[5][n] = num(json_object_get(jb, "latency_us"), "p50");
        v[6][n] = num(json_object_get(jb, "latency_us"), "p99");
        pa[n] = ja;
        pb[n] = jb;
        n++;
    }
    json_t *row = json_pack("{s:s, s:i, s:i, s:i}", "profile", profile, "runs", n, "failed_runs",
                            failed, "skipped_runs", skipped);
    json_object_set_new(row, "reason", reason ? json_string(reason) : json_null());
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
    for (size_t k = 0; k < HM_ARRAY_LEN(v); k++)
        hm_free(v[k]);
    hm_free(pa);
    hm_free(pb);
    return row;
}

void hm_matrix_summarize(json_t *doc)
{
    char a[64], b[64];
    pass_names(doc, a, b, sizeof(a));
    const char *baseline =
        json_string_value(json_object_get(json_object_get(doc, "parameters"), "baseline"));
    json_t *runs = json_object_get(doc, "runs");
    json_t *summary = json_object();
    size_t wi, pi;
    json_t *w, *p;
    json_array_foreach(json_object_get(doc, "workloads"), wi, w)
    {
        const char *wname = text(w, "name");
        json_t *rows = json_array(), *base = NULL;
        json_array_foreach(json_object_get(doc, "profiles"), pi, p)
        {
            const char *pname = text(p, "name");
            json_t *row = summarize_row(runs, pname, wname, a, b);
            json_array_append_new(rows, row);
            if (baseline && !strcmp(pname, baseline)) base = row;
        }
        json_t *base_warm = base ? json_object_get(base, "warm_rps") : NULL;
        json_t *row;
        json_array_foreach(rows, pi, row)
        {
            json_t *warm = json_object_get(row, "warm_rps");
            if (row == base || !warm || !base_warm || num(base_warm, "median") <= 0) continue;
            double pct = (num(warm, "median") / num(base_warm, "median") - 1) * 100;
            json_t *delta = json_pack("{s:f}", "median", pct);
            judge(delta, warm, base_warm);
            json_object_set_new(row, "delta_pct", delta);
        }
        json_object_set_new(summary, wname,
                            json_pack("{s:s?, s:o}", "baseline", baseline, "rows", rows));
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
        if (strcmp(text(run, "status"), "ok")) return false;
        const char *k;
        json_t *pass;
        json_object_foreach(json_object_get(run, "passes"), k,
                            pass) if (!json_is_true(json_object_get(pass, "passed"))) return false;
    }
    return true;
}

/* ---- formatting ---------------------------------------------------------- */

/* 12345.6 -> "12,346" */
static void fmt_thousands(double v, char *out, size_t len)
{
    char digits[32];
    snprintf(digits, sizeof(digits), "%.0f", fabs(v));
    size_t nd = strlen(digits), o = 0;
    if (v <= -0.5 && o + 1 < len) out[o++] = '-';
    for (size_t i = 0; i < nd && o + 2 < len; i++) {
        out[o++] = digits[i];
        if ((nd - i - 1) % 3 == 0 && i + 1 < nd) out[o++] = ',';
    }
    out[o] = 0;
}

/* "4,073 (3,990–4,120)", or just "4,073" for one run or no spread. */
static void fmt_rps(json_t *st, char *out, size_t len)
{
    char m[32], lo[32], hi[32];
    fmt_thousands(num(st, "median"), m, sizeof(m));
    fmt_thousands(num(st, "min"), lo, sizeof(lo));
    fmt_thousands(num(st, "max"), hi, sizeof(hi));
    if (!strcmp(lo, hi))
        snprintf(out, len, "%s", m);
    else
        snprintf(out, len, "%s (%s–%s)", m, lo, hi);
}

static void fmt_ok(json_t *st, char *out, size_t len)
{
    if (num(st, "min") == num(st, "max"))
        snprintf(out, len, "%.1f", num(st, "median"));
    else
        snprintf(out, len, "%.1f (%.1f–%.1f)", num(st, "median"), num(st, "min"), num(st, "max"));
}

/* Microseconds as "1.75 (1.60–2.01)" milliseconds. */
static void fmt_ms(json_t *st, char *out, size_t len)
{
    double m = num(st, "median") / 1000, lo = num(st, "min") / 1000, hi = num(st, "max") / 1000;
    if (lo == hi)
        snprintf(out, len, "%.2f", m);
    else
        snprintf(out, len, "%.2f (%.2f–%.2f)", m, lo, hi);
}

/* A row's warm p50 and p99 as fmt_ms text; false for a row without runs. */
static bool warm_latency(json_t *row, char *p50, char *p99, size_t len)
{
    if (!json_object_get(row, "warm_p99_us")) return false;
    fmt_ms(json_object_get(row, "warm_p50_us"), p50, len);
    fmt_ms(json_object_get(row, "warm_p99_us"), p99, len);
    return true;
}

/* "+3.1%" / "−5.7%" (a real minus sign, as BENCHMARK_RESULTS.md writes it). */
static void fmt_signed(double pct, char *out, size_t len)
{
    if (pct < 0)
        snprintf(out, len, "\u2212%.1f%%", -pct);
    else
        snprintf(out, len, "+%.1f%%", pct);
}

/* Δ or cold→warm with its verdict. */
static void fmt_change(json_t *ch, char *out, size_t len)
{
    if (!ch) {
        snprintf(out, len, "—");
        return;
    }
    char s[32];
    fmt_signed(num(ch, "median"), s, sizeof(s));
    const char *verdict = text(ch, "verdict");
    snprintf(out, len, "%s%s%s%s", s, strcmp(verdict, "separable") ? " (" : "",
             strcmp(verdict, "separable") ? verdict : "", strcmp(verdict, "separable") ? ")" : "");
}

typedef struct table_row {
    const char *profile;
    bool skipped;
    const char *reason;
    char cold[112], warm[112], delta[80], cold_ok[48], warm_ok[48], c2w[64];
    int runs, failed;
} table_row;

static void format_row(json_t *row, table_row *t)
{
    memset(t, 0, sizeof(*t));
    t->profile = json_string_value(json_object_get(row, "profile"));
    t->reason = json_string_value(json_object_get(row, "reason"));
    t->runs = (int)json_integer_value(json_object_get(row, "runs"));
    t->failed = (int)(json_integer_value(json_object_get(row, "failed_runs")) +
                      json_integer_value(json_object_get(row, "skipped_runs")));
    if (!t->runs) {
        t->skipped = true;
        return;
    }
    fmt_rps(json_object_get(row, "cold_rps"), t->cold, sizeof(t->cold));
    fmt_rps(json_object_get(row, "warm_rps"), t->warm, sizeof(t->warm));
    fmt_change(json_object_get(row, "delta_pct"), t->delta, sizeof(t->delta));
    /* Failed actions are fast: their throughput is not comparable. */
    if (num(json_object_get(row, "warm_ok_pct"), "min") < 100 && json_object_get(row, "delta_pct"))
        strcat(t->delta, " \u26a0 OK<100%");
    fmt_ok(json_object_get(row, "cold_ok_pct"), t->cold_ok, sizeof(t->cold_ok));
    fmt_ok(json_object_get(row, "warm_ok_pct"), t->warm_ok, sizeof(t->warm_ok));
    fmt_change(json_object_get(row, "cold_to_warm_pct"), t->c2w, sizeof(t->c2w));
}

static const char *str_at(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b) v = json_object_get(v, b);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* "5,000" for a number-like parameter, else the text or a default. */
static const char *param(json_t *doc, const char *key, const char *dflt, char *buf, size_t len)
{
    const char *v = str_at(doc, "parameters", key);
    if (!v) return dflt;
    char *end;
    double d = strtod(v, &end);
    if (end != v && !*end) {
        fmt_thousands(d, buf, len);
        return buf;
    }
    return v;
}

static const char *status_word(json_t *run)
{
    const char *s = text(run, "status");
    return !strcmp(s, "skipped") ? "SKIPPED" : !strcmp(s, "interrupted") ? "INTERRUPTED" : "FAILED";
}

/* ---- Markdown ------------------------------------------------------------ */

/* Markdown table cells cannot hold '|' or newlines; outside a code span a
 * backtick would open one. Code spans here are ``double``, so a single
 * backtick inside is fine and only '|' needs escaping (GFM tables). */
static void md_text(FILE *f, const char *s, bool in_code)
{
    for (; s && *s; s++) {
        if (*s == '|' || (*s == '`' && !in_code))
            fputc('\\', f), fputc(*s, f);
        else if (*s == '\n')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
}

static void md_cell(FILE *f, const char *s)
{
    md_text(f, s, false);
}

static void md_code(FILE *f, const char *s)
{
    fputs("`` ", f);
    md_text(f, s, true);
    fputs(" ``", f);
}

static void write_header_md(FILE *f, json_t *doc, const char *a, const char *b)
{
    json_t *env = json_object_get(doc, "environment");
    char buf[64];
    fprintf(f, "# Benchmark results — hammer matrix\n\n");
    if (json_is_true(json_object_get(doc, "interrupted")))
        fprintf(f,
                "**Interrupted:** the matrix was stopped by a signal; the figures cover the runs "
                "that completed.\n\n");
    fprintf(f, "## Environment\n\n| Item | Value |\n|---|---|\n");
    fprintf(f, "| Date | %s |\n", str_at(doc, "started", NULL));
    fprintf(f, "| hammer | %s |\n", str_at(env, "hammer_version", NULL));
    fprintf(f, "| CPU | %s (%lld online) |\n", str_at(env, "cpu", NULL),
            (long long)json_integer_value(json_object_get(env, "cpus")));
    fprintf(f, "| Memory | %.1f GiB |\n", num(env, "memory_gib"));
    fprintf(f, "| OS | %s |\n| Kernel | %s |\n| Host | %s |\n| Engine | %s |\n\n",
            str_at(env, "os", NULL), str_at(env, "kernel", NULL), str_at(env, "hostname", NULL),
            str_at(env, "engine", NULL));
    fprintf(f,
            "## Test methodology\n\nTool: `hammer matrix %s`\n\n| Parameter | Value |\n|---|---|\n",
            str_at(doc, "parameters", "profiles_file"));
    if (str_at(doc, "parameters", "duration"))
        fprintf(f, "| Duration per pass | %s |\n", str_at(doc, "parameters", "duration"));
    else
        fprintf(f, "| Actions per pass | %s |\n", param(doc, "actions", "5,000", buf, sizeof(buf)));
    fprintf(f, "| Concurrency | %s |\n", param(doc, "concurrency", "200", buf, sizeof(buf)));
    fprintf(f, "| Per-request timeout | %s |\n", param(doc, "timeout", "5s", buf, sizeof(buf)));
    fprintf(f, "| Passes | %s (server just started) + %s (right after, same server) |\n", a, b);
    if (str_at(doc, "parameters", "server_cpus") || str_at(doc, "parameters", "hammer_cpus")) {
        fputs("| CPU pinning | server on ", f);
        md_cell(f, str_at(doc, "parameters", "server_cpus")
                       ? str_at(doc, "parameters", "server_cpus")
                       : "any");
        fputs(", hammer on ", f);
        md_cell(f, str_at(doc, "parameters", "hammer_cpus")
                       ? str_at(doc, "parameters", "hammer_cpus")
                       : "any");
        fputs(" |\n", f);
    }
    fprintf(
        f, "| Runs | %lld rounds, profiles interleaved (order rotated each round) |\n",
        (long long)json_integer_value(json_object_get(json_object_get(doc, "parameters"), "runs")));
    fprintf(f, "| Figures | median across runs, (min–max) range in parentheses |\n\n");
    fprintf(f, "## Workloads\n\n| Name | Scenario | Extra hammer arguments |\n|---|---|---|\n");
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(doc, "workloads"), i, o)
    {
        fputs("| ", f);
        md_cell(f, str_at(o, "name", NULL));
        fputs(" | ", f);
        md_cell(f, str_at(o, "scenario", NULL));
        fputs(" | ", f);
        if (str_at(o, "args", NULL))
            md_code(f, str_at(o, "args", NULL));
        else
            fputs("—", f);
        fprintf(f, " |\n");
    }
    fprintf(f, "\n## Profiles\n\n| Profile | Command | Environment |\n|---|---|---|\n");
    json_array_foreach(json_object_get(doc, "profiles"), i, o)
    {
        fputs("| ", f);
        md_cell(f, str_at(o, "name", NULL));
        fputs(" | ", f);
        md_code(f, str_at(o, "command", NULL));
        fputs(" | ", f);
        size_t e;
        json_t *ev;
        json_array_foreach(json_object_get(o, "env"), e, ev)
        {
            if (e) fputc(' ', f);
            md_code(f, json_string_value(ev));
        }
        fprintf(f, "%s |\n", json_array_size(json_object_get(o, "env")) ? "" : "—");
    }
    fprintf(f, "\n---\n\n## Results\n\n");
}

int hm_matrix_markdown(FILE *f, json_t *doc)
{
    char a[64], b[64];
    pass_names(doc, a, b, sizeof(a));
    write_header_md(f, doc, a, b);
    const char *baseline = str_at(doc, "parameters", "baseline");
    fprintf(f,
            "All throughput values in actions/s (requests/s for `get`). Δ is %s r/s vs %s %s. "
            "\"not separable\": the two ranges overlap, so the difference is within "
            "run-to-run noise. \u26a0 OK<100%%: some actions failed, and failed actions are "
            "cheap, so that throughput is not comparable.\n",
            b, baseline ? baseline : "the first profile", b);
    const char *wname;
    json_t *ws;
    json_object_foreach(json_object_get(doc, "summary"), wname, ws)
    {
        fputs("\n### ", f);
        md_cell(f, wname);
        fputs("\n\n", f);
        fprintf(f, "| Profile | %s r/s | %s r/s | Δ | %s OK%% | %s OK%% | %s→%s |\n", a, b, a, b, a,
                b);
        fprintf(f, "|---|---:|---:|---:|---:|---:|---:|\n");
        size_t i;
        json_t *row;
        json_array_foreach(json_object_get(ws, "rows"), i, row)
        {
            table_row t;
            format_row(row, &t);
            fputs("| ", f);
            md_cell(f, t.profile);
            if (t.skipped)
                fprintf(f, " | SKIPPED | | | | | |\n");
            else
                fprintf(f, "%s | %s | %s | %s | %s | %s | %s |\n", t.failed ? " ¹" : "", t.cold,
                        t.warm, t.delta, t.cold_ok, t.warm_ok, t.c2w);
        }
        /* Latency beside throughput: a profile can serve more and still
         * answer slower at the tail. */
        fprintf(f,
                "\nLatency of each action in the %s pass (ms), median (min–max) across runs:\n\n"
                "| Profile | p50 | p99 |\n|---|---:|---:|\n",
                b);
        json_array_foreach(json_object_get(ws, "rows"), i, row)
        {
            char p50[64], p99[64];
            if (!warm_latency(row, p50, p99, sizeof(p50))) continue;
            fputs("| ", f);
            md_cell(f, text(row, "profile"));
            fprintf(f, " | %s | %s |\n", p50, p99);
        }
    }
    /* Why anything is missing. */
    bool any = false;
    size_t i;
    json_t *run;
    json_array_foreach(json_object_get(doc, "runs"), i, run)
    {
        if (!strcmp(text(run, "status"), "ok")) continue;
        if (!any)
            fprintf(f,
                    "\n### Skipped and failed runs\n\n¹ figures from fewer runs; see below.\n\n");
        any = true;
        fprintf(f, "- round %lld, ", (long long)json_integer_value(json_object_get(run, "round")));
        md_cell(f, str_at(run, "profile", NULL));
        fputs(" × ", f);
        md_cell(f, str_at(run, "workload", NULL));
        fprintf(f, ": %s — ", status_word(run));
        md_cell(f,
                str_at(run, "reason", NULL) ? str_at(run, "reason", NULL) : "no reason recorded");
        fprintf(f, "\n");
    }
    fprintf(f,
            "\nEvery run's numbers, the environment and the logs directory (%s) are in the JSON "
            "report.\n",
            str_at(doc, "logs_dir", NULL));
    return ferror(f) ? -EIO : 0;
}

int hm_matrix_json(FILE *f, json_t *doc)
{
    if (json_dumpf(doc, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) < 0) return -EIO;
    fputc('\n', f);
    return ferror(f) ? -EIO : 0;
}

/* ---- HTML ---------------------------------------------------------------- */

static void html_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

/* One table cell of escaped text, in <code> when code. */
static void html_cell(FILE *f, const char *text, bool code)
{
    fputs(code ? "<td><code>" : "<td>", f);
    html_text(f, text);
    fputs(code ? "</code></td>" : "</td>", f);
}

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                      "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};

/* x position of a percentile on the usual HdrHistogram axis: one decade per
 * "nine" (90, 99, 99.9, ...), the maximum one decade past 99.999. */
static double pct_axis(double p)
{
    if (p >= 100) return 6;
    double x = log10(100.0 / (100.0 - p));
    return x > 6 ? 6 : x;
}

static void svg_plot(FILE *f, json_t *rows, const char *a, const char *b)
{
    const double W = 760, H = 340, ml = 64, mr = 190, mt = 16, mb = 44;
    double ymax = 0;
    size_t i, k;
    json_t *row, *pt;
    json_array_foreach(rows, i, row)
    {
        json_t *lat = json_object_get(row, "latency_us");
        const char *names[2] = {a, b};
        for (int s = 0; s < 2; s++)
            json_array_foreach(json_object_get(lat, names[s]), k, pt)
            {
                double v = json_number_value(json_array_get(pt, 1));
                if (v > ymax) ymax = v;
            }
    }
    if (ymax <= 0) {
        fprintf(f, "<p>No latency recorded.</p>\n");
        return;
    }
    /* A round axis: 1, 2 or 5 times a power of ten per step, 4-6 steps. */
    double ms = ymax / 1000.0, step = pow(10, floor(log10(ms / 5)));
    if (ms / step > 25)
        step *= 5;
    else if (ms / step > 10)
        step *= 2;
    double top = ceil(ms / step) * step;
    double pw = W - ml - mr, ph = H - mt - mb;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
            "height=\"%.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
            W, H, W, H);
    const char *xl[] = {"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "max"};
    for (int t = 0; t <= 6; t++) {
        double x = ml + t / 6.0 * pw;
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                x, mt, x, mt + ph, x, mt + ph + 14, xl[t]);
    }
    for (double v = 0; v <= top + step / 2; v += step) {
        double y = mt + ph - v / top * ph;
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                ml, y, ml + pw, y, ml - 6, y + 4, v);
    }
    fprintf(f,
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">percentile</text>\n"
            "<text transform=\"translate(14 %.1f) rotate(-90)\" text-anchor=\"middle\">"
            "latency (ms)</text>\n",
            ml + pw / 2, H - 6, mt + ph / 2);
    int legend = 0;
    json_array_foreach(rows, i, row)
    {
        json_t *lat = json_object_get(row, "latency_us");
        if (!lat) continue;
        const char *color = palette[i % HM_ARRAY_LEN(palette)];
        const char *names[2] = {b, a}; /* warm solid, cold dashed */
        for (int s = 0; s < 2; s++) {
            fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"",
                    color, s ? "1.2" : "2", s ? " stroke-dasharray=\"5 4\"" : "");
            json_array_foreach(json_object_get(lat, names[s]), k, pt)
            {
                double x = ml + pct_axis(json_number_value(json_array_get(pt, 0))) / 6.0 * pw;
                double y = mt + ph - json_number_value(json_array_get(pt, 1)) / 1000.0 / top * ph;
                fprintf(f, "%.1f,%.1f ", x, y);
            }
            fprintf(f, "\"/>\n");
            double ly = mt + 8 + 16 * legend++;
            fprintf(f,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                    "stroke-width=\"2\"%s/><text x=\"%.1f\" y=\"%.1f\">",
                    ml + pw + 12, ly, ml + pw + 36, ly, color, s ? " stroke-dasharray=\"5 4\"" : "",
                    ml + pw + 42, ly + 4);
            html_text(f, json_string_value(json_object_get(row, "profile")));
            fprintf(f, " %s</text>\n", names[s]);
        }
    }
    fprintf(f, "</svg>\n");
}

int hm_matrix_html(FILE *f, json_t *doc)
{
    char a[64], b[64];
    pass_names(doc, a, b, sizeof(a));
    json_t *env = json_object_get(doc, "environment");
    fprintf(
        f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
           "<title>hammer matrix — benchmark results</title>\n<style>\n"
           "body{font-family:sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}\n"
           "table{border-collapse:collapse;margin:.5em 0 1.5em}\n"
           "th,td{border:1px solid #ccc;padding:.25em .6em}td.n{text-align:right}\n"
           "th{background:#f4f4f4}.skip{color:#a00}.ns{color:#777}code{font-size:90%%}\n"
           "</style></head><body>\n<h1>Benchmark results — hammer matrix</h1>\n");
    if (json_is_true(json_object_get(doc, "interrupted")))
        fprintf(
            f, "<p><strong>Interrupted:</strong> the figures cover the runs that completed.</p>\n");
    fprintf(f, "<h2>Environment</h2>\n<table>\n");
    char mem[32];
    snprintf(mem, sizeof(mem), "%.1f GiB", num(env, "memory_gib"));
    const char *items[][2] = {{"Date", str_at(doc, "started", NULL)},
                              {"hammer", str_at(env, "hammer_version", NULL)},
                              {"CPU", str_at(env, "cpu", NULL)},
                              {"Memory", mem},
                              {"OS", str_at(env, "os", NULL)},
                              {"Kernel", str_at(env, "kernel", NULL)},
                              {"Host", str_at(env, "hostname", NULL)},
                              {"Engine", str_at(env, "engine", NULL)},
                              {"Profiles file", str_at(doc, "parameters", "profiles_file")},
                              {"Passes", str_at(doc, "parameters", "passes")}};
    for (size_t i = 0; i < HM_ARRAY_LEN(items); i++) {
        fprintf(f, "<tr><th>%s</th><td>", items[i][0]);
        html_text(f, items[i][1]);
        fprintf(f, "</td></tr>\n");
    }
    char buf[64];
    const char *duration = str_at(doc, "parameters", "duration");
    fprintf(
        f,
        "<tr><th>Runs</th><td>%lld, profiles interleaved</td></tr>\n<tr><th>%s per pass</th><td>",
        (long long)json_integer_value(json_object_get(json_object_get(doc, "parameters"), "runs")),
        duration ? "Duration" : "Actions");
    html_text(f, duration ? duration : param(doc, "actions", "5,000", buf, sizeof(buf)));
    fprintf(f, "</td></tr>\n<tr><th>Concurrency</th><td>");
    html_text(f, param(doc, "concurrency", "200", buf, sizeof(buf)));
    fprintf(f, "</td></tr>\n<tr><th>Per-request timeout</th><td>");
    html_text(f, param(doc, "timeout", "5s", buf, sizeof(buf)));
    const char *scpus = str_at(doc, "parameters", "server_cpus");
    const char *hcpus = str_at(doc, "parameters", "hammer_cpus");
    if (scpus || hcpus) {
        fprintf(f, "</td></tr>\n<tr><th>CPU pinning</th><td>server on ");
        html_text(f, scpus ? scpus : "any");
        fprintf(f, ", hammer on ");
        html_text(f, hcpus ? hcpus : "any");
    }
    fprintf(f, "</td></tr>\n</table>\n");
    fprintf(f, "<h2>Workloads</h2>\n<table><tr><th>Name</th><th>Scenario</th>"
               "<th>Extra hammer arguments</th></tr>\n");
    size_t wi;
    json_t *wo;
    json_array_foreach(json_object_get(doc, "workloads"), wi, wo)
    {
        fputs("<tr>", f);
        html_cell(f, str_at(wo, "name", NULL), false);
        html_cell(f, str_at(wo, "scenario", NULL), false);
        html_cell(f, str_at(wo, "args", NULL) ? str_at(wo, "args", NULL) : "—", true);
        fputs("</tr>\n", f);
    }
    fprintf(f, "</table>\n");
    fprintf(f, "<h2>Profiles</h2>\n<table><tr><th>Profile</th><th>Command</th><th>Environment</"
               "th></tr>\n");
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(doc, "profiles"), i, o)
    {
        fputs("<tr>", f);
        html_cell(f, str_at(o, "name", NULL), false);
        html_cell(f, str_at(o, "command", NULL), true);
        fputs("<td>", f);
        size_t e;
        json_t *ev;
        json_array_foreach(json_object_get(o, "env"), e, ev)
        {
            fputs("<code>", f);
            html_text(f, json_string_value(ev));
            fputs("</code> ", f);
        }
        fputs("</td></tr>\n", f);
    }
    fprintf(f,
            "</table>\n<h2>Results</h2>\n<p>Throughput in actions/s: median across runs, "
            "(min–max) range. Δ is %s r/s vs the baseline profile (",
            b);
    html_text(f, str_at(doc, "parameters", "baseline"));
    fprintf(f, "). <span class=\"ns\">not separable</span>: the ranges overlap.</p>\n");
    const char *wname;
    json_t *ws;
    json_object_foreach(json_object_get(doc, "summary"), wname, ws)
    {
        fprintf(f, "<h3>");
        html_text(f, wname);
        fprintf(f,
                "</h3>\n<table><tr><th>Profile</th><th>%s r/s</th><th>%s r/s</th><th>Δ</th>"
                "<th>%s OK%%</th><th>%s OK%%</th><th>%s→%s</th></tr>\n",
                a, b, a, b, a, b);
        json_t *row;
        json_array_foreach(json_object_get(ws, "rows"), i, row)
        {
            table_row t;
            format_row(row, &t);
            fprintf(f, "<tr><td>");
            html_text(f, t.profile);
            if (t.skipped) {
                fprintf(f, "</td><td colspan=\"6\" class=\"skip\">SKIPPED: ");
                html_text(f, t.reason);
                fprintf(f, "</td></tr>\n");
                continue;
            }
            fprintf(f, "%s</td>", t.failed ? " ¹" : "");
            const char *cells[] = {t.cold, t.warm, t.delta, t.cold_ok, t.warm_ok, t.c2w};
            for (size_t c = 0; c < HM_ARRAY_LEN(cells); c++) {
                bool no_verdict =
                    strstr(cells[c], "(not separable)") || strstr(cells[c], "(one run)");
                fprintf(f, "<td class=\"n%s\">", no_verdict ? " ns" : "");
                html_text(f, cells[c]);
                fprintf(f, "</td>");
            }
            fprintf(f, "</tr>\n");
        }
        fprintf(f,
                "</table>\n<table><tr><th>Profile</th><th>%s p50 (ms)</th><th>%s p99 (ms)</th>"
                "</tr>\n",
                b, b);
        json_array_foreach(json_object_get(ws, "rows"), i, row)
        {
            char p50[64], p99[64];
            if (!warm_latency(row, p50, p99, sizeof(p50))) continue;
            fputs("<tr>", f);
            html_cell(f, text(row, "profile"), false);
            html_cell(f, p50, false);
            html_cell(f, p99, false);
            fputs("</tr>\n", f);
        }
        fprintf(f,
                "</table>\n<p>Latency distribution (median across runs at each percentile; "
                "solid %s, dashed %s):</p>\n",
                b, a);
        svg_plot(f, json_object_get(ws, "rows"), a, b);
    }
    bool any = false;
    json_t *run;
    json_array_foreach(json_object_get(doc, "runs"), i, run)
    {
        if (!strcmp(text(run, "status"), "ok")) continue;
        if (!any)
            fprintf(f, "<h2>Skipped and failed runs</h2>\n<p>¹ figures from fewer runs.</p><ul>\n");
        any = true;
        fprintf(f, "<li>round %lld, ",
                (long long)json_integer_value(json_object_get(run, "round")));
        html_text(f, str_at(run, "profile", NULL));
        fprintf(f, " × ");
        html_text(f, str_at(run, "workload", NULL));
        fprintf(f, ": %s — ", status_word(run));
        html_text(f, str_at(run, "reason", NULL));
        fprintf(f, "</li>\n");
    }
    if (any) fprintf(f, "</ul>\n");
    /* The data, for anyone who wants to redraw it. No '<' may reach the
     * HTML parser inside a script element ("</script>", "<!--"): '<' only
     * occurs inside JSON strings, where \u003c means the same. */
    fprintf(f, "<script id=\"hammer-matrix-data\" type=\"application/json\">\n");
    char *data = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(10));
    if (!data) return -ENOMEM;
    for (const char *p = data; *p; p++) {
        if (*p == '<')
            fputs("\\u003c", f);
        else
            fputc(*p, f);
    }
    free(data);
    fprintf(f, "\n</script>\n</body></html>\n");
    return ferror(f) ? -EIO : 0;
}
