/* matrix_format.c — the text of matrix report cells; see matrix_format.h. */
#include "cli/matrix_format.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/matrix_summary.h"
#include "cli/shell_words.h"

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
    t->failing = (int)json_integer_value(json_object_get(row, "failing_runs"));
    t->comparable = json_is_true(json_object_get(row, "comparable"));
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

bool hm_matrix_fastest_text(json_t *ws, const char *pass, char *out, size_t len)
{
    json_t *fastest = json_object_get(ws, "fastest"), *left = json_object_get(ws, "left_out");
    if (!json_is_object(fastest) && !json_array_size(left)) return false;
    size_t o = 0;
    if (json_is_object(fastest)) {
        char rps[32];
        fmt_thousands(hm_matrix_num(fastest, "warm_rps"), rps, sizeof(rps));
        o += (size_t)snprintf(out, len, "Fastest (%s r/s, every run passed at 100%% OK): %s, %s",
                              pass, hm_matrix_text(fastest, "profile"), rps);
    } else {
        o += (size_t)snprintf(out, len, "Fastest: none (no profile passed every run at 100%% OK)");
    }
    size_t i;
    json_t *p;
    json_array_foreach(left, i, p)
    {
        o += (size_t)snprintf(out + o, o < len ? len - o : 0, "%s%s",
                              i ? ", " : ". Left out: ", json_string_value(p));
    }
    if (json_array_size(left))
        snprintf(out + o, o < len ? len - o : 0,
                 " (failed runs or OK<100%%: failed actions are cheap, so their throughput is "
                 "not comparable)");
    return true;
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

/* ---- what a profile's server ran ------------------------------------------ */

/* A run's server command as text, NULL when it recorded none. */
static void put_run_command(FILE *out, json_t *run)
{
    json_t *argv = json_object_get(run, "server_argv");
    if (json_is_array(argv))
        hm_shell_words(out, argv);
    else
        fputs(hm_matrix_text(run, "server_command"), out);
}

static bool has_command(json_t *run)
{
    return json_is_array(json_object_get(run, "server_argv")) ||
           json_is_string(json_object_get(run, "server_command"));
}

/* Whether two runs started the same words with the same profile env. */
static bool same_command(json_t *a, json_t *b)
{
    json_t *x = json_object_get(a, "server_argv"), *y = json_object_get(b, "server_argv");
    bool same = x || y ? x && y && json_equal(x, y)
                       : json_equal(json_object_get(a, "server_command"),
                                    json_object_get(b, "server_command"));
    x = json_object_get(a, "server_env"), y = json_object_get(b, "server_env");
    return same && (x == y || (x && y && json_equal(x, y)));
}

/* Closes memstream out, whose buffer is *text: 0, or -ENOMEM with *text
 * freed and NULL. */
static int close_text(FILE *out, char **text)
{
    bool failed = ferror(out);
    if (fclose(out) != 0 || failed) { /* fclose sets *text */
        free(*text);
        *text = NULL;
        return -ENOMEM;
    }
    return 0;
}

int hm_matrix_profile_as_run(json_t *doc, json_t *profile, hm_matrix_as_run *r)
{
    memset(r, 0, sizeof(*r));
    const char *name = hm_matrix_text(profile, "name");
    json_t *runs = json_object_get(doc, "runs"), *first = NULL, *run;
    size_t i;
    json_array_foreach(runs, i, run)
    {
        if (!strcmp(hm_matrix_text(run, "profile"), name) && has_command(run)) {
            first = run;
            break;
        }
    }
    r->env = json_object_get(first, "server_env");
    if (!json_is_array(r->env)) r->env = json_object_get(profile, "env");
    size_t len;
    FILE *out = open_memstream(&r->command, &len);
    if (!out) return -ENOMEM;
    if (first)
        put_run_command(out, first);
    else
        fputs(hm_matrix_text(profile, "command"), out);
    if (close_text(out, &r->command) < 0) return -ENOMEM;
    if (!first) return 0;
    /* Later rounds ran the same words but for {port} when that was a free
     * port each start: name their ports rather than repeat the command. */
    if (!(out = open_memstream(&r->other_rounds, &len))) return -ENOMEM;
    json_int_t last = json_integer_value(json_object_get(first, "round"));
    fprintf(out, "round %lld", (long long)last);
    int others = 0;
    for (i++; i < json_array_size(runs); i++) {
        run = json_array_get(runs, i);
        json_int_t round = json_integer_value(json_object_get(run, "round"));
        if (round == last || strcmp(hm_matrix_text(run, "profile"), name) || !has_command(run))
            continue;
        last = round;
        if (same_command(first, run)) continue;
        fprintf(out, "%s round %lld on port %lld", others++ ? "," : ";", (long long)round,
                (long long)json_integer_value(json_object_get(run, "server_port")));
    }
    if (close_text(out, &r->other_rounds) < 0) return -ENOMEM;
    if (!others) {
        free(r->other_rounds);
        r->other_rounds = NULL;
    }
    return 0;
}

void hm_matrix_as_run_free(hm_matrix_as_run *r)
{
    free(r->command);
    free(r->other_rounds);
    r->command = r->other_rounds = NULL;
}
