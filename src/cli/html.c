/* html.c — escaping, the shared page style and the SVG charts of hammer's
 * HTML reports; see html.h. */
#include "cli/html.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/hm_base.h"

void hm_html_text(FILE *f, const char *s)
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

/* Wide tables scroll inside their box on a phone instead of squeezing
 * cells; numbers never wrap; charts keep a readable size and scroll too. */
static const char style[] =
    ":root{--fg:#1d2330;--muted:#5b6475;--line:#d9dee7;--bg2:#f4f6f9}\n"
    "body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:var(--fg);"
    "margin:0 auto;max-width:1240px;padding:16px 24px}\n"
    "h1{font-size:1.55em;margin:.3em 0 .2em}h2{font-size:1.2em;margin:1.8em 0 .5em;"
    "border-bottom:2px solid var(--line);padding-bottom:.2em}h3{font-size:1.05em;margin:1.2em 0 "
    ".4em}\n"
    "p{margin:.4em "
    "0}.muted{color:var(--muted)}.warn{color:#b3261e;font-weight:700}code{font-size:.92em;"
    "background:var(--bg2);"
    "padding:0 .25em;border-radius:3px}\n"
    ".tbl{overflow-x:auto;margin:.4em 0 1em}table{border-collapse:collapse;width:100%}\n"
    "th,td{border-bottom:1px solid var(--line);padding:.32em .7em;text-align:left;"
    "vertical-align:top}th{background:var(--bg2);font-weight:600}\n"
    "td.n,th.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}\n"
    "table.kv "
    "td{overflow-wrap:anywhere}td.w{white-space:nowrap}td.v{text-align:right;font-variant-numeric:"
    "tabular-nums;"
    "min-width:9em}table.kv th{width:13em}\n"
    ".pass{color:#176d2c;font-weight:700}.fail{color:#b3261e;font-weight:700}"
    ".ns{color:var(--muted)}.skip{color:#b3261e}\n"
    ".badge{display:inline-block;padding:.1em .6em;border-radius:1em;font-weight:700;"
    "color:#fff;background:#176d2c}.badge.fail{background:#b3261e;color:#fff}\n"
    ".cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(8.6em,1fr));gap:10px;"
    "margin:.8em 0}\n"
    ".card{background:var(--bg2);border-radius:8px;padding:.5em .8em}.card b{display:block;"
    "font-size:1.3em;white-space:nowrap;font-variant-numeric:tabular-nums}"
    ".card span{color:var(--muted);"
    "font-size:.88em}\n"
    ".charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,540px),1fr));"
    "gap:8px 28px}\n"
    "figure{margin:.4em 0 1em;min-width:0}figcaption{font-weight:600;margin:.2em 0}\n"
    ".plot{overflow-x:auto}svg.chart{display:block;width:100%;min-width:520px;height:auto}"
    "svg.chart.wide{min-width:740px}\n"
    "svg.chart text{font:12px system-ui,-apple-system,sans-serif;fill:#3b4250}"
    "svg.chart .grid{stroke:#e4e8ef}svg.chart .axis{stroke:#8a93a3}\n"
    ".legend{display:flex;flex-wrap:wrap;gap:.2em 1.3em;font-size:.9em;margin:.1em 0 .4em}"
    ".legend span{display:inline-flex;align-items:center;gap:.45em}"
    ".legend i{display:inline-block;width:24px;border-top:3px solid}"
    ".legend i.d{border-top-style:dashed}\n"
    ".bar{display:inline-block;height:.75em;min-width:1px;border-radius:2px}"
    "table.status td.w{width:45%}\n"
    "details{margin:.5em 0}summary{cursor:pointer;color:var(--muted)}\n"
    "@media (max-width:640px){body{padding:10px 12px;font-size:14px}table.kv th{width:auto}}\n";

void hm_html_head(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          f);
    hm_html_text(f, title);
    fprintf(f, "</title>\n<style>\n%s</style></head><body>\n", style);
}

int hm_html_embed_json(FILE *f, const char *id, json_t *doc)
{
    /* No '<' may reach the HTML parser inside a script element
     * ("</script>", "<!--"): '<' only occurs inside JSON strings, where
     * \u003c means the same. */
    fprintf(f, "<script id=\"%s\" type=\"application/json\">\n", id);
    char *data = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(DBL_DIG));
    if (!data) return -ENOMEM;
    for (const char *p = data; *p; p++) {
        if (*p == '<')
            fputs("\\u003c", f);
        else
            fputc(*p, f);
    }
    free(data);
    fputs("\n</script>\n", f);
    return 0;
}

/* Okabe and Ito's palette, which most colour-blind readers can tell apart. */
static const char *const palette[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                      "#e69f00", "#56b4e9", "#555555", "#b8860b"};

const char *hm_html_color(int i)
{
    return palette[(unsigned)i % HM_ARRAY_LEN(palette)];
}

/* ---- axes ----------------------------------------------------------------- */

/* A round step (1, 2, 2.5 or 5 times a power of ten) giving about target
 * ticks over span. */
static double nice_step(double span, int target)
{
    if (!(span > 0)) return 1;
    double raw = span / target, mag = pow(10, floor(log10(raw))), r = raw / mag;
    double m = r <= 1 ? 1 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 5 ? 5 : 10;
    return m * mag;
}

/* A step in seconds that reads as time: 1 2 5 10 15 30 s, 1 2 5 10 15 30 min, h. */
static double time_step(double span, int target)
{
    static const double steps[] = {0.1, 0.2, 0.5, 1,    2,    5,    10,    15,    30,    60,   120,
                                   300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400};
    for (size_t i = 0; i < HM_ARRAY_LEN(steps); i++)
        if (span / steps[i] <= target) return steps[i];
    return nice_step(span, target);
}

static void fmt_time(char *buf, size_t len, double t)
{
    long long s = llround(t);
    if (t < 60 && fabs(t - (double)s) > 1e-6)
        snprintf(buf, len, "%.1fs", t);
    else if (s < 60)
        snprintf(buf, len, "%llds", s);
    else if (s < 3600)
        snprintf(buf, len, s % 60 ? "%lldm%02llds" : "%lldm", s / 60, s % 60);
    else
        snprintf(buf, len, s % 3600 ? "%lldh%02lldm" : "%lldh", s / 3600, s % 3600 / 60);
}

/* µs as the summary writes them, trimmed for an axis: 250µs, 1.5ms, 2s. */
static void fmt_latency(char *buf, size_t len, double us)
{
    if (us == 0)
        snprintf(buf, len, "0");
    else if (us < 1000)
        snprintf(buf, len, "%gµs", us);
    else if (us < 1e6)
        snprintf(buf, len, "%gms", us / 1e3);
    else
        snprintf(buf, len, "%gs", us / 1e6);
}

/* 950, 12k, 1.5M */
static void fmt_count(char *buf, size_t len, double v)
{
    if (fabs(v) >= 1e6)
        snprintf(buf, len, "%gM", v / 1e6);
    else if (fabs(v) >= 1e4)
        snprintf(buf, len, "%gk", v / 1e3);
    else
        snprintf(buf, len, "%g", v);
}

/* 12,345 */
static void grouped(char *buf, size_t len, double v)
{
    char raw[64];
    snprintf(raw, sizeof(raw), "%.0f", v);
    size_t n = strlen(raw), o = 0, lead = raw[0] == '-';
    for (size_t i = 0; i < n && o + 2 < len; i++) {
        if (i > lead && (n - i) % 3 == 0) buf[o++] = ',';
        buf[o++] = raw[i];
    }
    buf[o] = 0;
}

static void fmt_value(char *buf, size_t len, double v, hm_html_unit unit)
{
    if (unit == HM_HTML_LATENCY)
        fmt_latency(buf, len, v);
    else
        fmt_count(buf, len, v);
}

/* Horizontal grid lines and labels for 0..top in steps of step. */
static void y_grid(FILE *f, double top, double step, hm_html_unit unit, double ml, double mt,
                   double pw, double ph)
{
    for (double v = 0; v <= top + step / 2; v += step) {
        double y = mt + ph - v / top * ph;
        char label[32];
        fmt_value(label, sizeof(label), v, unit);
        fprintf(f,
                "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                ml, y, ml + pw, y, ml - 6, y + 4, label);
    }
}

/* Charts 900 units wide keep at least 740 px (scrolling on a phone), so
 * their 12-unit text stays near 10 px. */
static void open_svg(FILE *f, const char *kind, double w, double h)
{
    fprintf(f,
            "<div class=\"plot\"><svg class=\"chart%s\" data-chart=\"%s\" "
            "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
            "preserveAspectRatio=\"xMinYMin meet\">\n",
            w > 800 ? " wide" : "", kind, w, h);
}

static void close_svg(FILE *f)
{
    fputs("</svg></div>\n", f);
}

void hm_html_legend(FILE *f, const char *const *names, const int *colors, const bool *dashed, int n)
{
    fputs("<div class=\"legend\">", f);
    for (int i = 0; i < n; i++) {
        fprintf(f, "<span><i%s style=\"border-color:%s\"></i>",
                dashed && dashed[i] ? " class=\"d\"" : "", hm_html_color(colors[i]));
        hm_html_text(f, names[i]);
        fputs("</span>", f);
    }
    fputs("</div>\n", f);
}

/* ---- the percentile distribution -------------------------------------------- */

/* The ladder's last point below 100% is 99.99988%: 1/(1−p) ≈ 10^5.92. */
#define PCT_AXIS_MAX 5.92

static double pct_x(double p)
{
    return p >= 100 ? PCT_AXIS_MAX : log10(100.0 / (100.0 - p));
}

/* Where a curve of count samples ends on the axis: beyond 1 − 1/count every
 * percentile is the maximum, so the plot stops there (and at 90% at least). */
static double curve_end(long long count)
{
    double x = count > 1 ? log10((double)count) : 0;
    if (x < 1) x = 1;
    return x > PCT_AXIS_MAX ? PCT_AXIS_MAX : x;
}

static const char *pct_label(int decade)
{
    static const char *const labels[] = {"0%",     "90%",     "99%",     "99.9%",
                                         "99.99%", "99.999%", "99.9999%"};
    return decade >= 0 && decade < (int)HM_ARRAY_LEN(labels) ? labels[decade] : "";
}

void hm_html_percentile_chart(FILE *f, const hm_html_curve *curves, int n)
{
    const double W = 900, H = 390, ml = 72, mr = 24, mt = 14, mb = 48;
    double ymax = 0, xmax = 1;
    int drawn = 0;
    for (int i = 0; i < n; i++) {
        size_t k;
        json_t *pt;
        if (!json_array_size(curves[i].percentiles)) continue;
        drawn++;
        double end = curve_end(curves[i].count);
        if (end > xmax) xmax = end;
        json_array_foreach(curves[i].percentiles, k, pt)
        {
            double v = json_number_value(json_array_get(pt, 1));
            if (v > ymax) ymax = v;
        }
    }
    if (!drawn || ymax <= 0) {
        fputs("<p class=\"muted\">No latency was recorded.</p>\n", f);
        return;
    }
    double step = nice_step(ymax, 6), top = ceil(ymax / step) * step;
    double pw = W - ml - mr, ph = H - mt - mb;
    open_svg(f, "percentiles", W, H);
    for (int d = 0; d <= (int)floor(xmax + 1e-9); d++) {
        double x = ml + d / xmax * pw;
        fprintf(f,
                "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                x, mt, x, mt + ph, x, mt + ph + 16, pct_label(d));
    }
    y_grid(f, top, step, HM_HTML_LATENCY, ml, mt, pw, ph);
    fprintf(f,
            "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n"
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">percentile (log scale of "
            "1/(1−p), as HdrHistogram plots it)</text>\n",
            ml, mt + ph, ml + pw, mt + ph, ml + pw / 2, H - 8);
    for (int i = 0; i < n; i++) {
        const hm_html_curve *c = &curves[i];
        if (!json_array_size(c->percentiles)) continue;
        double end = curve_end(c->count), max_us = 0;
        size_t k, points = 0;
        json_t *pt;
        json_array_foreach(c->percentiles, k, pt)
        {
            if (json_number_value(json_array_get(pt, 0)) >= 100)
                max_us = json_number_value(json_array_get(pt, 1));
        }
        fprintf(f, "<polyline class=\"series\" data-series=\"");
        hm_html_text(f, c->name);
        fprintf(f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2.2\"%s points=\"",
                hm_html_color(c->color), c->dashed ? " stroke-dasharray=\"6 4\"" : "");
        json_array_foreach(c->percentiles, k, pt)
        {
            double p = json_number_value(json_array_get(pt, 0));
            double x = pct_x(p);
            if (p >= 100 || x > end + 1e-9) break;
            fprintf(f, "%.1f,%.1f ", ml + x / xmax * pw,
                    mt + ph - json_number_value(json_array_get(pt, 1)) / top * ph);
            points++;
        }
        /* the maximum closes the curve where the data end */
        fprintf(f, "%.1f,%.1f\" data-points=\"%zu\"><title>", ml + end / xmax * pw,
                mt + ph - max_us / top * ph, points + 1);
        hm_html_text(f, c->name);
        char mx[32];
        fmt_latency(mx, sizeof(mx), max_us);
        fprintf(f, ": max %s</title></polyline>\n", mx);
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n",
                ml + end / xmax * pw, mt + ph - max_us / top * ph, hm_html_color(c->color));
    }
    close_svg(f);
    const char *names[16];
    int colors[16];
    bool dashed[16];
    int m = 0;
    for (int i = 0; i < n && m < 16; i++) {
        if (!json_array_size(curves[i].percentiles)) continue;
        names[m] = curves[i].name;
        colors[m] = curves[i].color;
        dashed[m++] = curves[i].dashed;
    }
    hm_html_legend(f, names, colors, dashed, m);
}

/* ---- lines over time ---------------------------------------------------------- */

/* A band's outline over the points where both edges exist: forward along
 * upper, back along lower (NULL: the x axis). One <polygon> per stretch
 * without a gap. */
static void band(FILE *f, const double *x, int n, const double *upper, const double *lower,
                 int color, double right, double top, double ml, double mt, double pw, double ph)
{
    for (int i = 0; i < n;) {
        bool ok = !isnan(upper[i]) && !(lower && isnan(lower[i]));
        if (!ok) {
            i++;
            continue;
        }
        int j = i;
        while (j < n && !isnan(upper[j]) && !(lower && isnan(lower[j])))
            j++;
        fprintf(f, "<polygon class=\"band\" fill=\"%s\" fill-opacity=\"0.13\" points=\"",
                hm_html_color(color));
        for (int k = i; k < j; k++)
            fprintf(f, "%.1f,%.1f ", ml + x[k] / right * pw, mt + ph - upper[k] / top * ph);
        for (int k = j - 1; k >= i; k--)
            fprintf(f, "%.1f,%.1f ", ml + x[k] / right * pw,
                    mt + ph - (lower ? lower[k] : 0) / top * ph);
        fputs("\"/>\n", f);
        i = j;
    }
}

void hm_html_time_chart(FILE *f, const char *kind, const char *y_label, hm_html_unit unit,
                        const double *x, int n, const hm_html_line *lines, int n_lines)
{
    hm_html_time_chart_styled(f, kind, y_label, unit, x, n, lines, n_lines, NULL);
}

void hm_html_time_chart_styled(FILE *f, const char *kind, const char *y_label, hm_html_unit unit,
                               const double *x, int n, const hm_html_line *lines, int n_lines,
                               const hm_html_time_style *how)
{
    const double W = 620, H = 270, ml = 66, mr = 14, mt = 12, mb = 40;
    bool partial = how && how->last_partial && n >= 2;
    double xmax = 0, ymax = 0;
    for (int i = 0; i < n; i++)
        if (x[i] > xmax) xmax = x[i];
    for (int l = 0; l < n_lines; l++)
        for (int i = 0; i < n; i++)
            if (!isnan(lines[l].y[i]) && lines[l].y[i] > ymax) ymax = lines[l].y[i];
    if (xmax <= 0) xmax = 1;
    if (ymax <= 0) ymax = 1;
    double ystep = nice_step(ymax, 5), top = ceil(ymax / ystep) * ystep;
    double xstep = time_step(xmax, 6), right = xmax; /* the axis ends with the run */
    double pw = W - ml - mr, ph = H - mt - mb;
    open_svg(f, kind, W, H);
    if (partial) fputs("<g data-partial-last=\"1\"/>\n", f);
    for (double t = 0; t <= right + 1e-9; t += xstep) {
        double px = ml + t / right * pw;
        char label[32];
        fmt_time(label, sizeof(label), t);
        fprintf(f,
                "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                px, mt, px, mt + ph, px, mt + ph + 16, label);
    }
    y_grid(f, top, ystep, unit, ml, mt, pw, ph);
    fprintf(f,
            "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n"
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time since the start</text>\n"
            "<text transform=\"translate(14 %.1f) rotate(-90)\" text-anchor=\"middle\">",
            ml, mt + ph, ml + pw, mt + ph, ml + pw / 2, H - 6, mt + ph / 2);
    hm_html_text(f, y_label);
    fputs("</text>\n", f);
    if (how && how->bands)
        for (int l = 0; l < n_lines; l++)
            band(f, x, n, lines[l].y, l ? lines[l - 1].y : NULL, lines[l].color, right, top, ml, mt,
                 pw, ph);
    int whole = partial ? n - 1 : n; /* the points of full length */
    for (int l = 0; l < n_lines; l++) {
        const hm_html_line *ln = &lines[l];
        const char *c = hm_html_color(ln->color);
        int points = 0;
        fprintf(f, "<polyline class=\"series\" data-series=\"");
        hm_html_text(f, ln->name);
        fprintf(f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", c,
                ln->dashed ? " stroke-dasharray=\"6 4\"" : "");
        for (int i = 0; i < whole; i++) {
            if (isnan(ln->y[i])) continue;
            fprintf(f, "%.1f,%.1f ", ml + x[i] / right * pw, mt + ph - ln->y[i] / top * ph);
            points++;
        }
        fprintf(f, "\" data-points=\"%d\"/>\n", points);
        if (n <= 40) /* few points: mark them, so one point is seen */
            for (int i = 0; i < whole; i++)
                if (!isnan(ln->y[i]))
                    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.8\" fill=\"%s\"/>\n",
                            ml + x[i] / right * pw, mt + ph - ln->y[i] / top * ph, c);
        double last = ln->y[n - 1];
        if (!partial || isnan(last)) continue;
        double lx = ml + x[n - 1] / right * pw, ly = mt + ph - last / top * ph;
        fputs("<polyline class=\"partial\" data-partial=\"1\" data-series=\"", f);
        hm_html_text(f, ln->name);
        fprintf(f,
                "\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.3\" stroke-dasharray=\"2 3\" "
                "points=\"",
                c);
        if (!isnan(ln->y[n - 2]))
            fprintf(f, "%.1f,%.1f ", ml + x[n - 2] / right * pw, mt + ph - ln->y[n - 2] / top * ph);
        fprintf(f,
                "%.1f,%.1f\"/>\n<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#fff\" "
                "stroke=\"%s\" stroke-width=\"1.5\"/>\n",
                lx, ly, lx, ly, c);
    }
    close_svg(f);
    const char *names[16];
    int colors[16];
    bool dashed[16];
    int m = 0;
    for (int l = 0; l < n_lines && m < 16; l++) {
        names[m] = lines[l].name;
        colors[m] = lines[l].color;
        dashed[m++] = lines[l].dashed;
    }
    hm_html_legend(f, names, colors, dashed, m);
}

/* ---- bars ------------------------------------------------------------------------ */

void hm_html_bar_chart(FILE *f, const char *kind, const char *series, const char *x_label,
                       hm_html_unit unit, const double *upper, const double *values, int n,
                       int color)
{
    const double W = 900, H = 300, ml = 66, mr = 14, mt = 22, mb = 58;
    double ymax = 0, total = 0;
    for (int i = 0; i < n; i++) {
        total += values[i];
        if (values[i] > ymax) ymax = values[i];
    }
    if (ymax <= 0) ymax = 1;
    double step = nice_step(ymax, 5), top = ceil(ymax / step) * step;
    double pw = W - ml - mr, ph = H - mt - mb, slot = n ? pw / n : pw;
    open_svg(f, kind, W, H);
    y_grid(f, top, step, HM_HTML_COUNT, ml, mt, pw, ph);
    fprintf(f,
            "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n"
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
            ml, mt + ph, ml + pw, mt + ph, ml + pw / 2, H - 6);
    hm_html_text(f, x_label);
    fputs("</text>\n<g class=\"series\" data-series=\"", f);
    hm_html_text(f, series);
    fprintf(f, "\" data-points=\"%d\">\n", n);
    for (int i = 0; i < n; i++) {
        double h = values[i] / top * ph, x = ml + slot * i + slot * 0.12;
        char cnt[32], edge[32], label[40];
        grouped(cnt, sizeof(cnt), values[i]);
        fmt_value(edge, sizeof(edge), upper[i], unit);
        snprintf(label, sizeof(label), "≤%s", edge);
        fprintf(f,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                "<title>",
                x, mt + ph - h, slot * 0.76, h, hm_html_color(color));
        hm_html_text(f, label);
        fprintf(f, ": %s</title></rect>\n", cnt);
        /* the share, so a tail bar too short to see is still read */
        double share = total > 0 ? 100 * values[i] / total : 0;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", ml + slot * (i + 0.5),
                mt + ph - h - 5);
        if (values[i] > 0 && share >= 1)
            fprintf(f, "%.0f%%", share);
        else if (values[i] > 0 && share >= 0.01)
            fprintf(f, "%.2f%%", share);
        else if (values[i] > 0)
            fprintf(f, "%.1g%%", share);
        fprintf(f, "</text><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                ml + slot * (i + 0.5), mt + ph + 16);
        hm_html_text(f, label);
        fputs("</text>\n", f);
    }
    fputs("</g>\n", f);
    close_svg(f);
}

/* ---- dots and whiskers -------------------------------------------------------- */

void hm_html_dot_chart(FILE *f, const char *kind, const char *x_label, const hm_html_dot *rows,
                       int n)
{
    const double W = 900, row_h = 30, ml = 200, mr = 90, mt = 10, mb = 40;
    double xmax = 0;
    for (int i = 0; i < n; i++)
        if (rows[i].min <= rows[i].max && rows[i].max > xmax) xmax = rows[i].max;
    if (xmax <= 0) xmax = 1;
    double step = nice_step(xmax, 6), right = ceil(xmax / step) * step;
    double H = mt + mb + row_h * n, pw = W - ml - mr, ph = row_h * n;
    open_svg(f, kind, W, H);
    for (double v = 0; v <= right + step / 2; v += step) {
        double x = ml + v / right * pw;
        char label[32];
        fmt_count(label, sizeof(label), v);
        fprintf(f,
                "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                x, mt, x, mt + ph, x, mt + ph + 16, label);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", ml + pw / 2, H - 6);
    hm_html_text(f, x_label);
    fputs("</text>\n", f);
    for (int i = 0; i < n; i++) {
        const hm_html_dot *r = &rows[i];
        double y = mt + row_h * i + row_h / 2;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", ml - 10, y + 4);
        hm_html_text(f, r->label);
        fputs("</text>\n", f);
        if (r->min > r->max) {
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"ns\">no runs</text>\n", ml + 6, y + 4);
            continue;
        }
        const char *c = hm_html_color(r->color);
        double x0 = ml + r->min / right * pw, x1 = ml + r->max / right * pw;
        double xm = ml + r->median / right * pw;
        fprintf(f, "<g class=\"series\" data-series=\"");
        hm_html_text(f, r->series ? r->series : r->label);
        fprintf(f,
                "\" data-median=\"%.6g\" data-min=\"%.6g\" data-max=\"%.6g\"%s>"
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"2\"%s/>"
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"2\"/>"
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"2\"/>",
                r->median, r->min, r->max, r->hollow ? " data-hollow=\"1\"" : "", x0, y, x1, y, c,
                r->hollow ? " stroke-dasharray=\"4 3\"" : "", x0, y - 6, x0, y + 6, c, x1, y - 6,
                x1, y + 6, c);
        if (r->hollow) /* white inside, so it reads as "not this figure" at a glance */
            fprintf(f,
                    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5.5\" fill=\"#fff\" stroke=\"%s\" "
                    "stroke-width=\"2\"/>",
                    xm, y, c);
        else
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5.5\" fill=\"%s\"/>", xm, y, c);
        char label[32];
        grouped(label, sizeof(label), r->median);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text></g>\n", x1 + 8, y + 4, label);
    }
    close_svg(f);
}
