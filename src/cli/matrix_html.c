/* matrix_html.c — the HTML report of hammer matrix: tables, SVG latency
 * plots and the embedded document; see matrix_report.h. */
#include "cli/matrix_report.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/hm_base.h"
#include "cli/html.h"
#include "cli/matrix_format.h"
#include "cli/matrix_summary.h"

/* One table cell of escaped text, in <code> when code. */
static void html_cell(FILE *f, const char *text, bool code)
{
    fputs(code ? "<td><code>" : "<td>", f);
    hm_html_text(f, text);
    fputs(code ? "</code></td>" : "</td>", f);
}

/* The fewest samples any completed run of profile × workload recorded in
 * pass: where its median curve stops being data (html.h). */
static long long run_count(json_t *doc, const char *profile, const char *workload, const char *pass)
{
    long long fewest = 0;
    size_t i;
    json_t *run;
    json_array_foreach(json_object_get(doc, "runs"), i, run)
    {
        if (strcmp(hm_matrix_text(run, "profile"), profile) ||
            strcmp(hm_matrix_text(run, "workload"), workload) || !hm_matrix_run_measured(run))
            continue;
        json_t *lat =
            json_object_get(json_object_get(json_object_get(run, "passes"), pass), "latency_us");
        long long c = (long long)json_integer_value(json_object_get(lat, "count"));
        if (c > 0 && (!fewest || c < fewest)) fewest = c;
    }
    return fewest;
}

/* The median across runs at each percentile, warm solid and cold dashed,
 * on HdrHistogram's 1/(1-p) axis. */
static void latency_plot(FILE *f, json_t *doc, const char *workload, json_t *rows, const char *a,
                         const char *b)
{
    size_t n = json_array_size(rows), i;
    hm_html_curve *curves = hm_calloc(2 * n + 1, sizeof(*curves));
    char(*names)[160] = hm_calloc(2 * n + 1, sizeof(*names));
    if (!curves || !names) goto out;
    int m = 0;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        json_t *lat = json_object_get(row, "latency_us");
        const char *profile = hm_matrix_text(row, "profile");
        const char *pass[2] = {b, a}; /* warm solid, cold dashed */
        for (int s = 0; s < 2; s++) {
            if (!json_array_size(json_object_get(lat, pass[s]))) continue;
            snprintf(names[m], sizeof(names[m]), "%s %s", profile, pass[s]);
            curves[m] = (hm_html_curve){.name = names[m],
                                        .percentiles = json_object_get(lat, pass[s]),
                                        .count = run_count(doc, profile, workload, pass[s]),
                                        .color = (int)i,
                                        .dashed = s == 1};
            m++;
        }
    }
    hm_html_percentile_chart(f, curves, m);
out:
    hm_free(curves);
    hm_free(names);
}

/* Each profile's throughput: a dot at the median, a whisker over the
 * runs' range, per pass; overlapping whiskers are what "not separable"
 * means in the tables. A profile that is not comparable (failed runs or
 * under 100% OK: failed actions are cheap) is hollow, so its dot is never
 * read as the fastest. */
static void throughput_plot(FILE *f, json_t *rows, const char *a, const char *b)
{
    size_t n = json_array_size(rows), i;
    hm_html_dot *dots = hm_calloc(2 * n + 1, sizeof(*dots));
    char(*labels)[160] = hm_calloc(2 * n + 1, sizeof(*labels));
    if (!dots || !labels) goto out;
    int m = 0;
    bool hollow = false;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        const char *pass[2] = {b, a};
        const char *key[2] = {"warm_rps", "cold_rps"};
        for (int s = 0; s < 2; s++) {
            json_t *st = json_object_get(row, key[s]);
            snprintf(labels[m], sizeof(labels[m]), "%s · %s", hm_matrix_text(row, "profile"),
                     pass[s]);
            dots[m] = (hm_html_dot){.label = labels[m],
                                    .median = hm_matrix_num(st, "median"),
                                    .min = st ? hm_matrix_num(st, "min") : 1,
                                    .max = st ? hm_matrix_num(st, "max") : 0,
                                    .color = s == 0 ? 0 : 1,
                                    .series = labels[m],
                                    .hollow = !json_is_true(json_object_get(row, "comparable"))};
            hollow = hollow || (st && dots[m].hollow);
            m++;
        }
    }
    hm_html_dot_chart(f, "throughput",
                      "actions per second (dot: median; whisker: slowest to fastest run)", dots, m);
    const char *names[] = {b, a};
    int colors[] = {0, 1};
    hm_html_legend(f, names, colors, NULL, 2);
    if (hollow)
        fputs("<div class=\"legend\" data-legend=\"hollow\"><span><svg width=\"14\" "
              "height=\"14\"><circle cx=\"7\" cy=\"7\" r=\"5\" fill=\"#fff\" "
              "stroke=\"#5b6475\" stroke-width=\"2\"/></svg>hollow, dashed: failed runs or "
              "under 100% OK — failed actions are cheap, so that throughput is not comparable "
              "and never the fastest</span></div>\n",
              f);
out:
    hm_free(dots);
    hm_free(labels);
}

int hm_matrix_html(FILE *f, json_t *doc)
{
    char a[64], b[64];
    hm_matrix_pass_names(doc, a, b, sizeof(a));
    json_t *env = json_object_get(doc, "environment");
    hm_html_head(f, "hammer matrix — benchmark results");
    fputs("<h1>Benchmark results — hammer matrix</h1>\n", f);
    if (json_is_true(json_object_get(doc, "interrupted")))
        fprintf(
            f, "<p><strong>Interrupted:</strong> the figures cover the runs that completed.</p>\n");
    fprintf(f, "<h2>Environment</h2>\n<div class=\"tbl\"><table class=\"kv\">\n");
    char mem[32];
    snprintf(mem, sizeof(mem), "%.1f GiB", hm_matrix_num(env, "memory_gib"));
    const char *items[][2] = {
        {"Date", hm_matrix_str_at(doc, "started", NULL)},
        {"hammer", hm_matrix_str_at(env, "hammer_version", NULL)},
        {"CPU", hm_matrix_str_at(env, "cpu", NULL)},
        {"Memory", mem},
        {"OS", hm_matrix_str_at(env, "os", NULL)},
        {"Kernel", hm_matrix_str_at(env, "kernel", NULL)},
        {"Host", hm_matrix_str_at(env, "hostname", NULL)},
        {"Engine", hm_matrix_str_at(env, "engine", NULL)},
        {"Profiles file", hm_matrix_str_at(doc, "parameters", "profiles_file")},
        {"Passes", hm_matrix_str_at(doc, "parameters", "passes")}};
    for (size_t i = 0; i < HM_ARRAY_LEN(items); i++) {
        fprintf(f, "<tr><th>%s</th><td>", items[i][0]);
        hm_html_text(f, items[i][1]);
        fprintf(f, "</td></tr>\n");
    }
    char buf[64];
    const char *duration = hm_matrix_str_at(doc, "parameters", "duration");
    fprintf(
        f,
        "<tr><th>Runs</th><td>%lld, profiles interleaved</td></tr>\n<tr><th>%s per pass</th><td>",
        (long long)json_integer_value(json_object_get(json_object_get(doc, "parameters"), "runs")),
        duration ? "Duration" : "Actions");
    hm_html_text(f,
                 duration ? duration : hm_matrix_param(doc, "actions", "5,000", buf, sizeof(buf)));
    fprintf(f, "</td></tr>\n<tr><th>Concurrency</th><td>");
    hm_html_text(f, hm_matrix_param(doc, "concurrency", "200", buf, sizeof(buf)));
    fprintf(f, "</td></tr>\n<tr><th>Per-request timeout</th><td>");
    hm_html_text(f, hm_matrix_param(doc, "timeout", "5s", buf, sizeof(buf)));
    const char *scpus = hm_matrix_str_at(doc, "parameters", "server_cpus");
    const char *hcpus = hm_matrix_str_at(doc, "parameters", "hammer_cpus");
    if (scpus || hcpus) {
        fprintf(f, "</td></tr>\n<tr><th>CPU pinning</th><td>server on ");
        hm_html_text(f, scpus ? scpus : "any");
        fprintf(f, ", hammer on ");
        hm_html_text(f, hcpus ? hcpus : "any");
    }
    fprintf(f, "</td></tr>\n</table></div>\n");
    fprintf(f, "<h2>Workloads</h2>\n<div class=\"tbl\"><table><tr><th>Name</th><th>Scenario</th>"
               "<th>Extra hammer arguments</th></tr>\n");
    size_t wi;
    json_t *wo;
    json_array_foreach(json_object_get(doc, "workloads"), wi, wo)
    {
        fputs("<tr>", f);
        html_cell(f, hm_matrix_str_at(wo, "name", NULL), false);
        html_cell(f, hm_matrix_str_at(wo, "scenario", NULL), false);
        html_cell(f, hm_matrix_str_at(wo, "args", NULL) ? hm_matrix_str_at(wo, "args", NULL) : "—",
                  true);
        fputs("</tr>\n", f);
    }
    fprintf(f, "</table></div>\n");
    fprintf(f, "<h2>Profiles</h2>\n<div class=\"tbl\"><table><tr><th>Profile</th><th>Command</th>"
               "<th>Environment</th></tr>\n");
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(doc, "profiles"), i, o)
    {
        hm_matrix_as_run r; /* the command as it ran, as in the Markdown */
        bool ran = hm_matrix_profile_as_run(doc, o, &r) == 0;
        fputs("<tr>", f);
        html_cell(f, hm_matrix_str_at(o, "name", NULL), false);
        fputs("<td><code>", f);
        hm_html_text(f, ran ? r.command : hm_matrix_str_at(o, "command", NULL));
        fputs("</code>", f);
        if (ran && r.other_rounds) {
            fputs(" (", f);
            hm_html_text(f, r.other_rounds);
            fputs(")", f);
        }
        fputs("</td><td>", f);
        size_t e;
        json_t *ev;
        json_array_foreach(ran ? r.env : json_object_get(o, "env"), e, ev)
        {
            fputs("<code>", f);
            hm_html_text(f, json_string_value(ev));
            fputs("</code> ", f);
        }
        fputs("</td></tr>\n", f);
        hm_matrix_as_run_free(&r);
    }
    fprintf(f,
            "</table></div>\n<h2>Results</h2>\n<p>Throughput in actions/s: median across runs, "
            "(min–max) range. Δ is %s r/s vs the baseline profile (",
            b);
    hm_html_text(f, hm_matrix_str_at(doc, "parameters", "baseline"));
    fprintf(f, "). <span class=\"ns\">not separable</span>: the ranges overlap, as the "
               "whiskers in each chart show. ✗: the profile has runs that failed (reasons "
               "below) or under 100%% OK: its figures are shown, hollow in the charts, and left "
               "out of the fastest.</p>\n");
    const char *wname;
    json_t *ws;
    json_object_foreach(json_object_get(doc, "summary"), wname, ws)
    {
        fprintf(f, "<h3>");
        hm_html_text(f, wname);
        fputs("</h3>\n<figure><figcaption>Throughput by profile</figcaption>\n", f);
        throughput_plot(f, json_object_get(ws, "rows"), a, b);
        fprintf(f,
                "</figure>\n<div class=\"tbl\"><table><tr><th>Profile</th><th class=\"n\">%s "
                "r/s</th><th class=\"n\">%s r/s</th><th class=\"n\">Δ</th>"
                "<th class=\"n\">%s OK%%</th><th class=\"n\">%s OK%%</th>"
                "<th class=\"n\">%s→%s</th></tr>\n",
                a, b, a, b, a, b);
        json_t *row;
        json_array_foreach(json_object_get(ws, "rows"), i, row)
        {
            hm_matrix_table_row t;
            hm_matrix_format_row(row, &t);
            fprintf(f, "<tr><td class=\"w\">");
            hm_html_text(f, t.profile);
            if (t.skipped) {
                fprintf(f, "</td><td colspan=\"6\" class=\"skip\">SKIPPED: ");
                hm_html_text(f, t.reason);
                fprintf(f, "</td></tr>\n");
                continue;
            }
            fprintf(f, "%s%s</td>", t.comparable ? "" : " \u2717", t.failed ? " ¹" : "");
            const char *cells[] = {t.cold, t.warm, t.delta, t.cold_ok, t.warm_ok, t.c2w};
            for (size_t c = 0; c < HM_ARRAY_LEN(cells); c++) {
                bool no_verdict =
                    strstr(cells[c], "(not separable)") || strstr(cells[c], "(one run)");
                /* figures never wrap; a change may put its verdict on a second line */
                bool change = cells[c] == t.delta || cells[c] == t.c2w;
                fprintf(f, "<td class=\"%s%s\">", change ? "v" : "n", no_verdict ? " ns" : "");
                hm_html_text(f, cells[c]);
                fprintf(f, "</td>");
            }
            fprintf(f, "</tr>\n");
        }
        fputs("</table></div>\n", f);
        char fastest[1024];
        if (hm_matrix_fastest_text(ws, b, fastest, sizeof(fastest))) {
            fputs("<p class=\"fastest\">", f);
            hm_html_text(f, fastest);
            fputs(".</p>\n", f);
        }
        fprintf(f,
                "<div class=\"tbl\"><table><tr><th>Profile</th>"
                "<th class=\"n\">%s p50 (ms)</th><th class=\"n\">%s p99 (ms)</th></tr>\n",
                b, b);
        json_array_foreach(json_object_get(ws, "rows"), i, row)
        {
            char p50[64], p99[64];
            if (!hm_matrix_warm_latency(row, p50, p99, sizeof(p50))) continue;
            fputs("<tr>", f);
            html_cell(f, hm_matrix_text(row, "profile"), false);
            fputs("<td class=\"n\">", f);
            hm_html_text(f, p50);
            fputs("</td><td class=\"n\">", f);
            hm_html_text(f, p99);
            fputs("</td></tr>\n", f);
        }
        fprintf(f,
                "</table></div>\n<figure><figcaption>Latency distribution</figcaption>\n<p "
                "class=\"muted\">The median across runs at each percentile; solid %s, dashed "
                "%s.</p>\n",
                b, a);
        latency_plot(f, doc, wname, json_object_get(ws, "rows"), a, b);
        fputs("</figure>\n", f);
    }
    bool any = false;
    json_t *run;
    json_array_foreach(json_object_get(doc, "runs"), i, run)
    {
        if (!strcmp(hm_matrix_text(run, "status"), "ok")) continue;
        if (!any)
            fprintf(f, "<h2>Skipped and failed runs</h2>\n<p>¹ figures from fewer runs; ✗ "
                       "runs in the figures that failed.</p><ul>\n");
        any = true;
        fprintf(f, "<li>round %lld, ",
                (long long)json_integer_value(json_object_get(run, "round")));
        hm_html_text(f, hm_matrix_str_at(run, "profile", NULL));
        fprintf(f, " × ");
        hm_html_text(f, hm_matrix_str_at(run, "workload", NULL));
        fprintf(f, ": %s — ", hm_matrix_status_word(run));
        hm_html_text(f, hm_matrix_str_at(run, "reason", NULL));
        fprintf(f, "</li>\n");
    }
    if (any) fprintf(f, "</ul>\n");
    /* The data, for anyone who wants to redraw it. */
    if (hm_html_embed_json(f, "hammer-matrix-data", doc) < 0) return -ENOMEM;
    fprintf(f, "</body></html>\n");
    return ferror(f) ? -EIO : 0;
}
