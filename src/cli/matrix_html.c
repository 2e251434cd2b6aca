/* matrix_html.c — the HTML report of hammer matrix: tables, SVG latency
 * plots and the embedded document; see matrix_report.h. */
#include "cli/matrix_report.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/hm_base.h"
#include "cli/matrix_format.h"
#include "cli/matrix_summary.h"

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
    hm_matrix_pass_names(doc, a, b, sizeof(a));
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
        html_text(f, items[i][1]);
        fprintf(f, "</td></tr>\n");
    }
    char buf[64];
    const char *duration = hm_matrix_str_at(doc, "parameters", "duration");
    fprintf(
        f,
        "<tr><th>Runs</th><td>%lld, profiles interleaved</td></tr>\n<tr><th>%s per pass</th><td>",
        (long long)json_integer_value(json_object_get(json_object_get(doc, "parameters"), "runs")),
        duration ? "Duration" : "Actions");
    html_text(f, duration ? duration : hm_matrix_param(doc, "actions", "5,000", buf, sizeof(buf)));
    fprintf(f, "</td></tr>\n<tr><th>Concurrency</th><td>");
    html_text(f, hm_matrix_param(doc, "concurrency", "200", buf, sizeof(buf)));
    fprintf(f, "</td></tr>\n<tr><th>Per-request timeout</th><td>");
    html_text(f, hm_matrix_param(doc, "timeout", "5s", buf, sizeof(buf)));
    const char *scpus = hm_matrix_str_at(doc, "parameters", "server_cpus");
    const char *hcpus = hm_matrix_str_at(doc, "parameters", "hammer_cpus");
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
        html_cell(f, hm_matrix_str_at(wo, "name", NULL), false);
        html_cell(f, hm_matrix_str_at(wo, "scenario", NULL), false);
        html_cell(f, hm_matrix_str_at(wo, "args", NULL) ? hm_matrix_str_at(wo, "args", NULL) : "—",
                  true);
        fputs("</tr>\n", f);
    }
    fprintf(f, "</table>\n");
    fprintf(f, "<h2>Profiles</h2>\n<table><tr><th>Profile</th><th>Command</th><th>Environment</"
               "th></tr>\n");
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(doc, "profiles"), i, o)
    {
        hm_matrix_as_run r; /* the command as it ran, as in the Markdown */
        bool ran = hm_matrix_profile_as_run(doc, o, &r) == 0;
        fputs("<tr>", f);
        html_cell(f, hm_matrix_str_at(o, "name", NULL), false);
        fputs("<td><code>", f);
        html_text(f, ran ? r.command : hm_matrix_str_at(o, "command", NULL));
        fputs("</code>", f);
        if (ran && r.other_rounds) {
            fputs(" (", f);
            html_text(f, r.other_rounds);
            fputs(")", f);
        }
        fputs("</td><td>", f);
        size_t e;
        json_t *ev;
        json_array_foreach(ran ? r.env : json_object_get(o, "env"), e, ev)
        {
            fputs("<code>", f);
            html_text(f, json_string_value(ev));
            fputs("</code> ", f);
        }
        fputs("</td></tr>\n", f);
        hm_matrix_as_run_free(&r);
    }
    fprintf(f,
            "</table>\n<h2>Results</h2>\n<p>Throughput in actions/s: median across runs, "
            "(min–max) range. Δ is %s r/s vs the baseline profile (",
            b);
    html_text(f, hm_matrix_str_at(doc, "parameters", "baseline"));
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
            hm_matrix_table_row t;
            hm_matrix_format_row(row, &t);
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
            if (!hm_matrix_warm_latency(row, p50, p99, sizeof(p50))) continue;
            fputs("<tr>", f);
            html_cell(f, hm_matrix_text(row, "profile"), false);
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
        if (!strcmp(hm_matrix_text(run, "status"), "ok")) continue;
        if (!any)
            fprintf(f, "<h2>Skipped and failed runs</h2>\n<p>¹ figures from fewer runs.</p><ul>\n");
        any = true;
        fprintf(f, "<li>round %lld, ",
                (long long)json_integer_value(json_object_get(run, "round")));
        html_text(f, hm_matrix_str_at(run, "profile", NULL));
        fprintf(f, " × ");
        html_text(f, hm_matrix_str_at(run, "workload", NULL));
        fprintf(f, ": %s — ", hm_matrix_status_word(run));
        html_text(f, hm_matrix_str_at(run, "reason", NULL));
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
