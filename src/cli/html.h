/* html.h — what hammer's HTML reports draw with: escaping, the page's
 * style, and charts as inline SVG (no script, no network), so a report is
 * one self-contained file that reads at 1280 px and on a phone.
 *
 *   - the latency percentile distribution on HdrHistogram's 1/(1−p) axis
 *     (a decade per "nine": 0%, 90%, 99%, 99.9%, ...), as its plotter draws
 *     it, ending where the data do (1 − 1/count) with the maximum;
 *   - lines over time (the intervals of a run), optionally as filled
 *     bands and with a partial last point marked;
 *   - bars (a histogram by bucket);
 *   - dots with whiskers (a median and its min–max range per row).
 *
 * Every chart is an <svg class="chart" data-chart="KIND"> and every series a
 * <polyline class="series" data-series="NAME" data-points="N"> (or a <g>
 * of the same class for dots), so a browser test can find what was drawn.
 *
 * The functions only write to the FILE given; they allocate nothing the
 * caller frees, and read the caller's arrays only during the call. */
#ifndef HM_CLI_HTML_H
#define HM_CLI_HTML_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* s with & < > " escaped (NULL writes nothing). */
void hm_html_text(FILE *f, const char *s);

/* The page's head up to and including <body>: charset, viewport, title
 * (escaped) and the stylesheet both reports share. */
void hm_html_head(FILE *f, const char *title);

/* doc as <script id="ID" type="application/json">, with '<' escaped so the
 * HTML parser cannot leave the element. 0, or -ENOMEM. */
int hm_html_embed_json(FILE *f, const char *id, json_t *doc);

/* The i-th series colour (a palette readable on white and by most colour
 * blind readers). */
const char *hm_html_color(int i);

/* One curve of a percentile plot. */
typedef struct hm_html_curve {
    const char *name;    /* legend text and data-series */
    json_t *percentiles; /* [[percentile, µs], ...] as docs/output.md writes them */
    long long count;     /* samples behind it: the axis ends at 1 − 1/count */
    int color;           /* hm_html_color index */
    bool dashed;
} hm_html_curve;

/* A percentile plot of n curves (empty ones skipped); writes a note
 * instead when none has data. */
void hm_html_percentile_chart(FILE *f, const hm_html_curve *curves, int n);

/* One line over time. */
typedef struct hm_html_line {
    const char *name;
    const double *y; /* one value per x; NAN leaves a gap */
    int color;
    bool dashed;
} hm_html_line;

/* What the y axis of a time chart counts. */
typedef enum hm_html_unit {
    HM_HTML_COUNT,   /* plain numbers (per second, gauges) */
    HM_HTML_LATENCY, /* microseconds, labelled µs/ms/s */
} hm_html_unit;

/* Lines over x[0..n) (seconds since the start), in an <svg
 * data-chart="kind">; y_label names the axis. */
void hm_html_time_chart(FILE *f, const char *kind, const char *y_label, hm_html_unit unit,
                        const double *x, int n, const hm_html_line *lines, int n_lines);

/* How a time chart marks what its lines alone would misstate. */
typedef struct hm_html_time_style {
    /* The last point spans less than the others (a run's final interval,
     * with its stop): each line's polyline ends at the point before it,
     * and the last step is drawn thin and dotted to a hollow point
     * (<polyline class="partial" data-partial="1" data-series="NAME">;
     * the svg holds a <g data-partial-last="1"/>), so it reads as
     * partial, not as a drop. */
    bool last_partial;
    /* The lines are bands' upper edges in ascending order (p50, p90,
     * p99): the area under the first and between each pair is filled
     * (<polygon class="band">). */
    bool bands;
} hm_html_time_style;

/* hm_html_time_chart with a style (NULL: none). */
void hm_html_time_chart_styled(FILE *f, const char *kind, const char *y_label, hm_html_unit unit,
                               const double *x, int n, const hm_html_line *lines, int n_lines,
                               const hm_html_time_style *how);

/* Bars of values[0..n), the i-th labelled "≤upper[i]" under it (in unit),
 * each with its share of the total above it, in an <svg data-chart="kind">
 * whose bars are one <g class="series" data-series="series"
 * data-points="n">. */
void hm_html_bar_chart(FILE *f, const char *kind, const char *series, const char *x_label,
                       hm_html_unit unit, const double *upper, const double *values, int n,
                       int color);

/* One row of a dot-and-whisker chart. */
typedef struct hm_html_dot {
    const char *label;
    double median, min, max; /* min > max: no data for this row */
    int color;
    const char *series; /* data-series of the row's mark */
    bool hollow;        /* a hollow dot and dashed whisker: not comparable (data-hollow="1") */
} hm_html_dot;

/* Rows of medians with their min–max whiskers on one shared x axis
 * (x_label), starting at zero, so overlapping ranges are visible. */
void hm_html_dot_chart(FILE *f, const char *kind, const char *x_label, const hm_html_dot *rows,
                       int n);

/* A legend for charts whose series are listed (name, colour, dashed). */
void hm_html_legend(FILE *f, const char *const *names, const int *colors, const bool *dashed,
                    int n);

#endif
