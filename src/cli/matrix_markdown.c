/* matrix_markdown.c — the Markdown report of hammer matrix, in the layout
 * of php-via's BENCHMARK_RESULTS.md; see matrix_report.h. */
#include "cli/matrix_report.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "cli/matrix_format.h"
#include "cli/matrix_summary.h"

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
    fprintf(f, "| Date | %s |\n", hm_matrix_str_at(doc, "started", NULL));
    fprintf(f, "| hammer | %s |\n", hm_matrix_str_at(env, "hammer_version", NULL));
    fprintf(f, "| CPU | %s (%lld online) |\n", hm_matrix_str_at(env, "cpu", NULL),
            (long long)json_integer_value(json_object_get(env, "cpus")));
    fprintf(f, "| Memory | %.1f GiB |\n", hm_matrix_num(env, "memory_gib"));
    fprintf(f, "| OS | %s |\n| Kernel | %s |\n| Host | %s |\n| Engine | %s |\n\n",
            hm_matrix_str_at(env, "os", NULL), hm_matrix_str_at(env, "kernel", NULL),
            hm_matrix_str_at(env, "hostname", NULL), hm_matrix_str_at(env, "engine", NULL));
    fprintf(f,
            "## Test methodology\n\nTool: `hammer matrix %s`\n\n| Parameter | Value |\n|---|---|\n",
            hm_matrix_str_at(doc, "parameters", "profiles_file"));
    if (hm_matrix_str_at(doc, "parameters", "duration"))
        fprintf(f, "| Duration per pass | %s |\n", hm_matrix_str_at(doc, "parameters", "duration"));
    else
        fprintf(f, "| Actions per pass | %s |\n",
                hm_matrix_param(doc, "actions", "5,000", buf, sizeof(buf)));
    fprintf(f, "| Concurrency | %s |\n",
            hm_matrix_param(doc, "concurrency", "200", buf, sizeof(buf)));
    fprintf(f, "| Per-request timeout | %s |\n",
            hm_matrix_param(doc, "timeout", "5s", buf, sizeof(buf)));
    fprintf(f, "| Passes | %s (server just started) + %s (right after, same server) |\n", a, b);
    if (hm_matrix_str_at(doc, "parameters", "server_cpus") ||
        hm_matrix_str_at(doc, "parameters", "hammer_cpus")) {
        fputs("| CPU pinning | server on ", f);
        md_cell(f, hm_matrix_str_at(doc, "parameters", "server_cpus")
                       ? hm_matrix_str_at(doc, "parameters", "server_cpus")
                       : "any");
        fputs(", hammer on ", f);
        md_cell(f, hm_matrix_str_at(doc, "parameters", "hammer_cpus")
                       ? hm_matrix_str_at(doc, "parameters", "hammer_cpus")
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
        md_cell(f, hm_matrix_str_at(o, "name", NULL));
        fputs(" | ", f);
        md_cell(f, hm_matrix_str_at(o, "scenario", NULL));
        fputs(" | ", f);
        if (hm_matrix_str_at(o, "args", NULL))
            md_code(f, hm_matrix_str_at(o, "args", NULL));
        else
            fputs("—", f);
        fprintf(f, " |\n");
    }
    fprintf(f, "\n## Profiles\n\n| Profile | Command | Environment |\n|---|---|---|\n");
    json_array_foreach(json_object_get(doc, "profiles"), i, o)
    {
        /* As it ran ({port}, {bindir}, {dir} and $VARs expanded), when the
         * document recorded it. */
        hm_matrix_as_run r;
        bool ran = hm_matrix_profile_as_run(doc, o, &r) == 0;
        fputs("| ", f);
        md_cell(f, hm_matrix_str_at(o, "name", NULL));
        fputs(" | ", f);
        md_code(f, ran ? r.command : hm_matrix_str_at(o, "command", NULL));
        if (ran && r.other_rounds) {
            fputs(" (", f);
            md_cell(f, r.other_rounds);
            fputs(")", f);
        }
        fputs(" | ", f);
        json_t *penv = ran ? r.env : json_object_get(o, "env");
        size_t e;
        json_t *ev;
        json_array_foreach(penv, e, ev)
        {
            if (e) fputc(' ', f);
            md_code(f, json_string_value(ev));
        }
        fprintf(f, "%s |\n", json_array_size(penv) ? "" : "—");
        hm_matrix_as_run_free(&r);
    }
    fprintf(f, "\n---\n\n## Results\n\n");
}

int hm_matrix_markdown(FILE *f, json_t *doc)
{
    char a[64], b[64];
    hm_matrix_pass_names(doc, a, b, sizeof(a));
    write_header_md(f, doc, a, b);
    const char *baseline = hm_matrix_str_at(doc, "parameters", "baseline");
    fprintf(f,
            "All throughput values in actions/s (requests/s for `get`). Δ is %s r/s vs %s %s. "
            "\"not separable\": the two ranges overlap, so the difference is within "
            "run-to-run noise. \u26a0 OK<100%%: some actions failed, and failed actions are "
            "cheap, so that throughput is not comparable. \u2717: the profile has runs that "
            "failed (reasons under the tables) or under 100%% OK: its figures are shown but left "
            "out of the fastest.\n",
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
            hm_matrix_table_row t;
            hm_matrix_format_row(row, &t);
            fputs("| ", f);
            md_cell(f, t.profile);
            if (t.skipped)
                fprintf(f, " | SKIPPED | | | | | |\n");
            else
                fprintf(f, "%s%s | %s | %s | %s | %s | %s | %s |\n", t.comparable ? "" : " \u2717",
                        t.failed ? " ¹" : "", t.cold, t.warm, t.delta, t.cold_ok, t.warm_ok, t.c2w);
        }
        char fastest[1024];
        if (hm_matrix_fastest_text(ws, b, fastest, sizeof(fastest))) {
            fputs("\n", f);
            md_cell(f, fastest);
            fputs(".\n", f);
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
            if (!hm_matrix_warm_latency(row, p50, p99, sizeof(p50))) continue;
            fputs("| ", f);
            md_cell(f, hm_matrix_text(row, "profile"));
            fprintf(f, " | %s | %s |\n", p50, p99);
        }
    }
    /* Why anything is missing. */
    bool any = false;
    size_t i;
    json_t *run;
    json_array_foreach(json_object_get(doc, "runs"), i, run)
    {
        if (!strcmp(hm_matrix_text(run, "status"), "ok")) continue;
        if (!any)
            fprintf(
                f, "\n### Skipped and failed runs\n\n¹ figures from fewer runs; \u2717 runs in the "
                   "figures that failed; see below.\n\n");
        any = true;
        fprintf(f, "- round %lld, ", (long long)json_integer_value(json_object_get(run, "round")));
        md_cell(f, hm_matrix_str_at(run, "profile", NULL));
        fputs(" × ", f);
        md_cell(f, hm_matrix_str_at(run, "workload", NULL));
        fprintf(f, ": %s — ", hm_matrix_status_word(run));
        md_cell(f, hm_matrix_str_at(run, "reason", NULL) ? hm_matrix_str_at(run, "reason", NULL)
                                                         : "no reason recorded");
        fprintf(f, "\n");
    }
    fprintf(f,
            "\nEvery run's numbers, the environment and the logs directory (%s) are in the JSON "
            "report.\n",
            hm_matrix_str_at(doc, "logs_dir", NULL));
    return ferror(f) ? -EIO : 0;
}
