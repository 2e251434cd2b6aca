/* matrix_format.c — the text of matrix report cells; see matrix_format.h. */
#include "cli/matrix_format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/matrix_summary.h"

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
    fmt_thousands(hm_matrix_num(st, "median"), m, sizeof(m));
    fmt_thousands(hm_matrix_num(st, "min"), lo, sizeof(lo));
    fmt_thousands(hm_matrix_num(st, "max"), hi, sizeof(hi));
    if (!strcmp(lo, hi))
        snprintf(out, len, "%s", m);
    else
        snprintf(out, len, "%s (%s–%s)", m, lo, hi);
}

static void fmt_ok(json_t *st, char *out, size_t len)
{
    if (hm_matrix_num(st, "min") == hm_matrix_num(st, "max"))
        snprintf(out, len, "%.1f", hm_matrix_num(st, "median"));
    else
        snprintf(out, len, "%.1f (%.1f–%.1f)", hm_matrix_num(st, "median"),
                 hm_matrix_num(st, "min"), hm_matrix_num(st, "max"));
}

/* Microseconds as "1.75 (1.60–2.01)" milliseconds. */
static void fmt_ms(json_t *st, char *out, size_t len)
{
    double m = hm_matrix_num(st, "median") / 1000, lo = hm_matrix_num(st, "min") / 1000,
           hi = hm_matrix_num(st, "max") / 1000;
    if (lo == hi)
        snprintf(out, len, "%.2f", m);
    else
        snprintf(out, len, "%.2f (%.2f–%.2f)", m, lo, hi);
}

bool hm_matrix_warm_latency(json_t *row, char *p50, char *p99, size_t len)
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
    fmt_signed(hm_matrix_num(ch, "median"), s, sizeof(s));
    const char *verdict = hm_matrix_text(ch, "verdict");
    snprintf(out, len, "%s%s%s%s", s, strcmp(verdict, "separable") ? " (" : "",
             strcmp(verdict, "separable") ? verdict : "", strcmp(verdict, "separable") ? ")" : "");
}

void hm_matrix_format_row(json_t *row, hm_matrix_table_row *t)
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
    if (hm_matrix_num(json_object_get(row, "warm_ok_pct"), "min") < 100 &&
        json_object_get(row, "delta_pct"))
        strcat(t->delta, " \u26a0 OK<100%");
    fmt_ok(json_object_get(row, "cold_ok_pct"), t->cold_ok, sizeof(t->cold_ok));
    fmt_ok(json_object_get(row, "warm_ok_pct"), t->warm_ok, sizeof(t->warm_ok));
    fmt_change(json_object_get(row, "cold_to_warm_pct"), t->c2w, sizeof(t->c2w));
}

const char *hm_matrix_str_at(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b) v = json_object_get(v, b);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

const char *hm_matrix_param(json_t *doc, const char *key, const char *dflt, char *buf, size_t len)
{
    const char *v = hm_matrix_str_at(doc, "parameters", key);
    if (!v) return dflt;
    char *end;
    double d = strtod(v, &end);
    if (end != v && !*end) {
        fmt_thousands(d, buf, len);
        return buf;
    }
    return v;
}

const char *hm_matrix_status_word(json_t *run)
{
    const char *s = hm_matrix_text(run, "status");
    return !strcmp(s, "skipped") ? "SKIPPED" : !strcmp(s, "interrupted") ? "INTERRUPTED" : "FAILED";
}
