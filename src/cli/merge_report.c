/* merge_report.c — the summary and the Markdown of `hammer merge`, read
 * from the merged document alone (so a saved --json says the same); see
 * merge.h. */
#include "cli/merge.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

static json_t *at(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    return b ? json_object_get(v, b) : v;
}

static long long ival(json_t *o, const char *a, const char *b)
{
    return (long long)json_integer_value(at(o, a, b));
}

static double dval(json_t *o, const char *a, const char *b)
{
    return json_number_value(at(o, a, b));
}

static const char *sval(json_t *o, const char *a, const char *b, const char *dflt)
{
    const char *s = json_string_value(at(o, a, b));
    return s ? s : dflt;
}

static double pct(long long a, long long b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* "HTTP 500 ×3, timeout ×2", or "none". */
static void errors_text(json_t *run, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    const char *key;
    json_t *v;
    json_object_foreach(at(run, "actions", "by_status"), key, v)
    {
        if (key[0] == '2' || !json_integer_value(v)) continue;
        n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%sHTTP %s ×%lld", n ? ", " : "", key,
                              (long long)json_integer_value(v));
    }
    json_object_foreach(json_object_get(run, "errors"), key, v)
    {
        if (!json_integer_value(v)) continue;
        n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s ×%lld", n ? ", " : "", key,
                              (long long)json_integer_value(v));
    }
    if (!n) snprintf(buf, len, "none");
}

static const char *unit_of(json_t *run)
{
    return json_object_get(run, "mode") ? "actions" : "requests";
}

/* Latency rows: every histogram under latency_us that recorded something. */
typedef void (*row_fn)(FILE *f, const char *name, json_t *h);

static void each_latency(FILE *f, json_t *run, row_fn row)
{
    const char *key;
    json_t *h;
    json_object_foreach(json_object_get(run, "latency_us"), key, h)
    {
        if (ival(h, "count", NULL) > 0) row(f, key, h);
    }
}

static void text_row(FILE *f, const char *name, json_t *h)
{
    static const char *const cols[] = {"p50", "p90", "p99", "p999", "max", "mean"};
    fprintf(f, "  %-16s", name);
    for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
        fprintf(f, " %9.3f", dval(h, cols[i], NULL) / 1000.0);
    fprintf(f, " %9lld\n", ival(h, "count", NULL));
}

static void md_row(FILE *f, const char *name, json_t *h)
{
    static const char *const cols[] = {"p50", "p90", "p99", "p999", "max", "mean"};
    fprintf(f, "| %s |", name);
    for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
        fprintf(f, " %.3f |", dval(h, cols[i], NULL) / 1000.0);
    fprintf(f, " %lld |\n", ival(h, "count", NULL));
}

static const char *verdict(json_t *v)
{
    return json_is_true(v) ? "PASS" : "FAIL";
}

/* A threshold's measured value in its unit: ok in %, rps per second,
 * latencies (µs in the document) in ms. */
static void threshold_value(json_t *th, char *buf, size_t len)
{
    const char *text = sval(th, "threshold", NULL, "");
    double v = dval(th, "value", NULL);
    if (!strncmp(text, "ok", 2) && !isalnum((unsigned char)text[2]))
        snprintf(buf, len, "%.3f%%", v);
    else if (!strncmp(text, "rps", 3))
        snprintf(buf, len, "%.3f/s", v);
    else
        snprintf(buf, len, "%.3f ms", v / 1000.0);
}

/* How many inputs were shard index (shard.inputs[].index). */
static long long inputs_of(json_t *sh, long long index)
{
    long long n = 0;
    size_t i;
    json_t *in;
    json_array_foreach(json_object_get(sh, "inputs"), i, in)
    {
        n += ival(in, "index", NULL) == index;
    }
    return n;
}

bool hm_merge_coverage_text(json_t *sh, const char *which, char *buf, size_t len)
{
    json_t *list = json_object_get(sh, which);
    bool missing = !strcmp(which, "missing");
    size_t n = json_array_size(list), o = 0;
    if (!n || !len) return false;
    o += (size_t)snprintf(buf, len, "%zu of %lld (", n, ival(sh, "count", NULL));
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        long long index = (long long)json_integer_value(v);
        if (missing)
            o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%lld",
                                  i ? ", " : "no input is shard ", index);
        else
            o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%lld inputs are shard %lld",
                                  i ? ", " : "", inputs_of(sh, index), index);
    }
    snprintf(buf + o, o < len ? len - o : 0, ")");
    return true;
}

/* ---- text ---------------------------------------------------------------------- */

static void print_run(FILE *f, json_t *run)
{
    json_t *sh = json_object_get(run, "shard");
    json_t *inputs = json_object_get(sh, "inputs");
    const char *unit = unit_of(run);
    long long sent = ival(run, "actions", "sent"), ok = ival(run, "actions", "ok");
    /* A run's own --json (hammer report) has no inputs: one process ran it. */
    bool merged = json_is_array(inputs);
    if (merged)
        fprintf(f, "=== hammer merge: scenario %s, %zu input(s), %lld shard(s), run %s ===\n",
                sval(run, "scenario", NULL, "?"), json_array_size(inputs), ival(sh, "count", NULL),
                sval(sh, "run_id", NULL, "?"));
    else
        fprintf(f, "=== hammer report: scenario %s%s%s ===\n", sval(run, "scenario", NULL, "?"),
                json_object_get(run, "mode") ? ", mode " : "", sval(run, "mode", NULL, ""));
    fprintf(f, "Target            %s\n", sval(run, "target", NULL, "?"));
    if (merged)
        fprintf(f, "Shards            %5s %12s %9s %10s %10s %12s  %s\n", "shard", "start +ms",
                "wall s", "sent", "OK", "/s", "result");
    size_t i;
    json_t *in;
    json_array_foreach(inputs, i, in)
    {
        json_t *off = json_object_get(in, "start_offset_s");
        char start[32] = "-";
        if (json_is_number(off))
            snprintf(start, sizeof(start), "%.3f", json_number_value(off) * 1e3);
        fprintf(f, "                  %5lld %12s %9.3f %10lld %10lld %12.1f  %s  %s\n",
                ival(in, "index", NULL), start, dval(in, "wall_seconds", NULL),
                ival(in, "sent", NULL), ival(in, "ok", NULL), dval(in, "throughput_rps", NULL),
                verdict(json_object_get(in, "passed")), sval(in, "source", NULL, ""));
    }
    if (json_is_number(json_object_get(sh, "start_skew_s")))
        fprintf(f, "Start skew        %.3f ms (the last shard's load start after the first's)\n",
                dval(sh, "start_skew_s", NULL) * 1e3);
    char cover[512];
    if (hm_merge_coverage_text(sh, "missing", cover, sizeof(cover)))
        fprintf(f, "Missing shards    %s\n", cover);
    if (hm_merge_coverage_text(sh, "repeated", cover, sizeof(cover)))
        fprintf(f, "Repeated shards   %s\n", cover);
    fprintf(f, "%-18s%lld\n", !strcmp(unit, "actions") ? "Actions sent" : "Requests sent", sent);
    fprintf(f, "HTTP OK           %lld (%.2f%%)\n", ok, pct(ok, sent));
    char errors[1024];
    errors_text(run, errors, sizeof(errors));
    fprintf(f, "Errors            %s\n", errors);
    if (ival(run, "patches", "observers") > 0)
        fprintf(f, "Patches observed  %lld (%lld/%lld observers connected)\n",
                ival(run, "patches", "observed"), ival(run, "patches", "observers_connected"),
                ival(run, "patches", "observers"));
    if (json_is_integer(at(run, "signal", "net_increment")))
        fprintf(f, "Net increment     %lld%s, matches HTTP OK: %s\n",
                ival(run, "signal", "net_increment"),
                merged ? " (each shard checks its own counter)" : "",
                json_is_true(at(run, "signal", "matches_ok")) ? "YES" : "NO");
    if (json_is_string(at(run, "check", "name"))) {
        const char *detail = sval(run, "check", "detail", "");
        fprintf(f, "Check             %s%s: %s%s%s%s\n", verdict(at(run, "check", "passed")),
                merged ? " on every shard" : "", sval(run, "check", "name", ""),
                *detail ? " (" : "", detail, *detail ? ")" : "");
    }
    fprintf(f, "Connections       %lld requested, %lld established, %lld reconnects, %lld failed\n",
            ival(run, "connections", "requested"), ival(run, "connections", "established"),
            ival(run, "connections", "reconnects"), ival(run, "connections", "failed"));
    fprintf(f, "Wall time         %.3f s%s\n", dval(run, "wall_seconds", NULL),
            merged ? " (the first shard's start to the last one's end)" : "");
    fprintf(f, "Throughput        %.1f %s/s", dval(run, "throughput_rps", NULL), unit);
    if (dval(run, "rate", "target") > 0)
        fprintf(f, " (target %.0f/s, open loop)", dval(run, "rate", "target"));
    fputc('\n', f);
    fprintf(f, "Latency (ms)      %9s %9s %9s %9s %9s %9s %9s\n", "p50", "p90", "p99", "p99.9",
            "max", "mean", "count");
    each_latency(f, run, text_row);
    json_array_foreach(json_object_get(run, "thresholds"), i, in)
    {
        char measured[64];
        threshold_value(in, measured, sizeof(measured));
        fprintf(f, "Threshold         %-20s %s (measured %s)\n", sval(in, "threshold", NULL, "?"),
                verdict(json_object_get(in, "passed")), measured);
    }
    fprintf(f, "Result            %s\n", verdict(json_object_get(run, "passed")));
    json_array_foreach(at(run, "result", "reasons"), i, in) if (json_is_string(in))
        fprintf(f, "  - %s\n", json_string_value(in));
}

int hm_merge_print(FILE *f, json_t *doc)
{
    json_t *passes = json_object_get(doc, "passes");
    if (!passes) {
        print_run(f, doc);
    } else {
        size_t i;
        json_t *run;
        json_array_foreach(passes, i, run)
        {
            fprintf(f, "%s--- pass %s ---\n", i ? "\n" : "", sval(run, "pass", NULL, "?"));
            print_run(f, run);
        }
        json_array_foreach(json_object_get(doc, "changes"), i, run)
        {
            fprintf(f, "%s -> %s: throughput %+.1f%%, p99 %+.1f%%\n", sval(run, "from", NULL, "?"),
                    sval(run, "to", NULL, "?"), dval(run, "throughput_pct", NULL),
                    dval(run, "p99_pct", NULL));
        }
    }
    return ferror(f) ? -EIO : 0;
}

/* ---- Markdown -------------------------------------------------------------------- */

/* Table cells cannot hold '|' or newlines. */
static void md_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else
            fputc(*s == '\n' ? ' ' : *s, f);
    }
}

static void md_run(FILE *f, json_t *run)
{
    json_t *sh = json_object_get(run, "shard");
    bool merged = json_is_array(json_object_get(sh, "inputs"));
    long long sent = ival(run, "actions", "sent"), ok = ival(run, "actions", "ok");
    char errors[1024];
    errors_text(run, errors, sizeof(errors));
    fprintf(f, "| Item | Value |\n|---|---|\n| Scenario | %s |\n| Target | ",
            sval(run, "scenario", NULL, "?"));
    md_text(f, sval(run, "target", NULL, "?"));
    fputs(" |\n", f);
    if (merged)
        fprintf(f, "| Run id | %s |\n| Shards | %zu input(s) of %lld |\n",
                sval(sh, "run_id", NULL, "?"), json_array_size(json_object_get(sh, "inputs")),
                ival(sh, "count", NULL));
    if (json_is_number(json_object_get(sh, "start_skew_s")))
        fprintf(f, "| Start skew | %.3f ms |\n", dval(sh, "start_skew_s", NULL) * 1e3);
    char cover[512];
    if (hm_merge_coverage_text(sh, "missing", cover, sizeof(cover)))
        fprintf(f, "| Missing shards | %s |\n", cover);
    if (hm_merge_coverage_text(sh, "repeated", cover, sizeof(cover)))
        fprintf(f, "| Repeated shards | %s |\n", cover);
    fprintf(f, "| %s sent | %lld |\n| HTTP OK | %lld (%.2f%%) |\n| Errors | ",
            !strcmp(unit_of(run), "actions") ? "Actions" : "Requests", sent, ok, pct(ok, sent));
    md_text(f, errors);
    fputs(" |\n", f);
    if (json_is_integer(at(run, "signal", "net_increment")))
        fprintf(f, "| Net increment | %lld (matches HTTP OK: %s) |\n",
                ival(run, "signal", "net_increment"),
                json_is_true(at(run, "signal", "matches_ok")) ? "yes" : "no");
    if (json_is_string(at(run, "check", "name"))) {
        fprintf(f, "| Check | %s: ", verdict(at(run, "check", "passed")));
        md_text(f, sval(run, "check", "name", ""));
        fputs(" |\n", f);
    }
    fprintf(f, "| Wall time | %.3f s |\n| Throughput | %.1f %s/s |\n| Result | **%s** |\n\n",
            dval(run, "wall_seconds", NULL), dval(run, "throughput_rps", NULL), unit_of(run),
            verdict(json_object_get(run, "passed")));

    fprintf(f, "### Latency (ms)%s\n\n", merged ? ", from the merged histograms" : "");
    fputs("| | p50 | p90 | p99 | p99.9 | max | mean | count |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|\n",
          f);
    each_latency(f, run, md_row);

    if (merged)
        fputs("\n### Shards\n\n| shard | start (+ms) | wall (s) | sent | OK | per second | "
              "result | file |\n|---:|---:|---:|---:|---:|---:|---|---|\n",
              f);
    size_t i;
    json_t *in;
    json_array_foreach(json_object_get(sh, "inputs"), i, in)
    {
        json_t *off = json_object_get(in, "start_offset_s");
        fprintf(f, "| %lld | ", ival(in, "index", NULL));
        if (json_is_number(off))
            fprintf(f, "%.3f", json_number_value(off) * 1e3);
        else
            fputc('-', f);
        fprintf(f, " | %.3f | %lld | %lld | %.1f | %s | ", dval(in, "wall_seconds", NULL),
                ival(in, "sent", NULL), ival(in, "ok", NULL), dval(in, "throughput_rps", NULL),
                verdict(json_object_get(in, "passed")));
        md_text(f, sval(in, "source", NULL, ""));
        fputs(" |\n", f);
    }
    if (json_array_size(json_object_get(run, "thresholds"))) {
        fprintf(f, "\n### Thresholds%s\n\n| threshold | result | measured |\n|---|---|---:|\n",
                merged ? " (on the merged run)" : "");
        json_array_foreach(json_object_get(run, "thresholds"), i, in)
        {
            fputs("| ", f);
            md_text(f, sval(in, "threshold", NULL, "?"));
            char measured[64];
            threshold_value(in, measured, sizeof(measured));
            fprintf(f, " | %s | %s |\n", verdict(json_object_get(in, "passed")), measured);
        }
    }
}

int hm_merge_markdown(FILE *f, json_t *doc)
{
    json_t *passes_or_run = json_object_get(doc, "passes");
    json_t *first = passes_or_run ? json_array_get(passes_or_run, 0) : doc;
    bool merged = json_is_array(at(first, "shard", "inputs"));
    fputs(merged ? "# hammer merge\n\n" : "# hammer report\n\n", f);
    json_t *passes = json_object_get(doc, "passes");
    if (!passes) {
        md_run(f, doc);
    } else {
        size_t i;
        json_t *run;
        json_array_foreach(passes, i, run)
        {
            fprintf(f, "%s## Pass %s\n\n", i ? "\n" : "", sval(run, "pass", NULL, "?"));
            md_run(f, run);
        }
    }
    return ferror(f) ? -EIO : 0;
}
