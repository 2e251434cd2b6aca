/* resources.c — server resources over a run and the leak verdict
 * (resources.h). */
#include "stats/resources.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

/* Below these per hour, growth is not material whatever its confidence. */
static const double floor_per_hour[HM_LEAK__COUNT] = {MIB, 1, 1};

double hm_leak_warmup_s(double run_s)
{
    double w = HM_LEAK_WARMUP_SHARE * run_s;
    return w < HM_LEAK_WARMUP_MAX_S ? w : HM_LEAK_WARMUP_MAX_S;
}

const char *hm_leak_kind_name(hm_leak_kind kind)
{
    static const char *const names[] = {"RSS", "open fds", "contexts"};
    return names[kind];
}

const char *hm_leak_kind_key(hm_leak_kind kind)
{
    static const char *const keys[] = {"resident_bytes", "open_fds", "contexts"};
    return keys[kind];
}

void hm_leak_judge(hm_leak_kind kind, const double *t, const double *y, int n, double run_s,
                   hm_leak *out)
{
    memset(out, 0, sizeof(*out));
    out->warmup_s = hm_leak_warmup_s(run_s);
    double *yy = malloc((size_t)(n > 0 ? n : 1) * sizeof(*yy));
    if (!yy) return;
    for (int i = 0; i < n; i++)
        yy[i] = t[i] < out->warmup_s ? NAN : y[i];
    out->known = hm_trend_fit(t, yy, n, &out->fit);
    free(yy);
    if (!out->known) return;
    out->slope_h = out->fit.slope * 3600;
    out->half_h = out->fit.half_ci * 3600;
    out->growth = out->fit.slope * (out->fit.x1 - out->fit.x0);
    out->warning = out->slope_h - out->half_h > 0 && out->slope_h > floor_per_hour[kind] &&
                   out->growth > HM_LEAK_MATERIAL_SHARE * fabs(out->fit.mean) &&
                   out->fit.x1 - out->fit.x0 >= HM_LEAK_MIN_SPAN_S &&
                   (kind == HM_LEAK_RSS || out->growth > HM_LEAK_MIN_COUNT_GROWTH);
}

void hm_leak_slope_text(hm_leak_kind kind, const hm_leak *l, char *buf, size_t len)
{
    if (kind == HM_LEAK_RSS) {
        char s[32], h[32];
        hm_format_bytes(s, sizeof(s), fabs(l->slope_h));
        hm_format_bytes(h, sizeof(h), l->half_h);
        snprintf(buf, len, "%s%s/h ± %s/h", l->slope_h < 0 ? "-" : "+", s, h);
    } else {
        snprintf(buf, len, "%+.2f/h ± %.2f/h", l->slope_h, l->half_h);
    }
}

const hm_res_names *hm_res_names_of(hm_res_source src)
{
    static const hm_res_names names[HM_RES__SOURCES] = {
        [HM_RES_PIDS] = {HM_RES_RSS, HM_RES_CPU, HM_RES_FDS, HM_RES_THREADS, "server_resources",
                         "Server resources", "Server", ""},
        [HM_RES_EXPORTER] = {HM_RES_EXPORTER_RSS, HM_RES_EXPORTER_CPU, HM_RES_EXPORTER_FDS,
                             HM_RES_EXPORTER_THREADS, "server_exporter", "Server exporter",
                             "Exporter", " by --server-metrics"},
    };
    return &names[src];
}

bool hm_resources_is_field(const char *name)
{
    for (int src = 0; src < HM_RES__SOURCES; src++) {
        const hm_res_names *n = hm_res_names_of((hm_res_source)src);
        if (!strcmp(name, n->rss) || !strcmp(name, n->cpu) || !strcmp(name, n->fds) ||
            !strcmp(name, n->threads))
            return true;
    }
    return false;
}

/* The column of field name in the series, or -1. */
static int column(const hm_interval_series *s, const char *name)
{
    for (int k = 0; k < s->n_server; k++)
        if (!strcmp(s->server_names[k], name)) return k;
    return -1;
}

/* The last and largest value of a column, NAN when it has none. */
static void last_max(const hm_interval_series *s, int k, double *last, double *max)
{
    *last = *max = NAN;
    for (size_t i = 0; k >= 0 && i < s->n; i++) {
        double v = s->points[i].server[k];
        if (isnan(v)) continue;
        *last = v;
        if (isnan(*max) || v > *max) *max = v;
    }
}

void hm_resources_of(const hm_results *r, hm_res_source src, hm_resources *out)
{
    memset(out, 0, sizeof(*out));
    const hm_interval_series *s = &r->intervals;
    const hm_res_names *nm = hm_res_names_of(src);
    int k_rss = column(s, nm->rss), k_cpu = column(s, nm->cpu);
    int k_fds = column(s, nm->fds), k_thr = column(s, nm->threads);
    out->cpu_per_action_s = out->contexts_max = out->rss_per_context = NAN;
    if (k_rss < 0 || s->n == 0) return;
    /* The contexts are said with the first source the run has. */
    bool contexts = src == HM_RES_PIDS || column(s, hm_res_names_of(HM_RES_PIDS)->rss) < 0;
    out->known = true;
    double dummy;
    last_max(s, k_rss, &out->rss_last, &out->rss_max);
    last_max(s, k_fds, &out->fds_last, &dummy);
    last_max(s, k_thr, &out->threads_last, &dummy);
    /* CPU from the first sample to the last, and the actions sent between. */
    double cpu0 = NAN, cpu1 = NAN, rss0 = NAN;
    bool first = true;
    for (size_t i = 0; i < s->n; i++) {
        const hm_interval_point *p = &s->points[i];
        double c = k_cpu >= 0 ? p->server[k_cpu] : NAN;
        if (isnan(rss0)) rss0 = p->server[k_rss];
        if (isnan(c)) continue;
        if (first) {
            cpu0 = c;
            first = false;
        } else {
            out->actions += p->sent;
        }
        cpu1 = c;
    }
    out->cpu_s = isnan(cpu0) ? NAN : cpu1 - cpu0;
    if (out->actions && !isnan(out->cpu_s))
        out->cpu_per_action_s = out->cpu_s / (double)out->actions;

    /* The series' t and y per fitted field; contexts by leaf (hm_server_leaf_max). */
    size_t n = s->n;
    double *t = malloc(n * sizeof(*t)), *y = malloc(n * sizeof(*y));
    if (!t || !y) {
        free(t);
        free(y);
        return;
    }
    double run_s = s->points[n - 1].t;
    for (int kind = 0; kind < HM_LEAK__COUNT; kind++) {
        int k = kind == HM_LEAK_RSS ? k_rss : kind == HM_LEAK_FDS ? k_fds : 0;
        if (k < 0 || (kind == HM_LEAK_CONTEXTS && !contexts)) continue;
        bool any = false;
        for (size_t i = 0; i < n; i++) {
            const hm_interval_point *p = &s->points[i];
            t[i] = p->t;
            y[i] = kind == HM_LEAK_CONTEXTS
                       ? hm_server_leaf_max(s->n_server, s->server_names, p->server, "contexts")
                       : p->server[k];
            any = any || !isnan(y[i]);
        }
        if (!any) continue;
        if (kind == HM_LEAK_CONTEXTS) {
            for (size_t i = 0; i < n; i++)
                if (!isnan(y[i]) && (isnan(out->contexts_max) || y[i] > out->contexts_max))
                    out->contexts_max = y[i];
        }
        hm_leak_judge((hm_leak_kind)kind, t, y, (int)n, run_s, &out->leak[kind]);
    }
    free(t);
    free(y);
    if (out->contexts_max > 0 && !isnan(rss0))
        out->rss_per_context = (out->rss_last - rss0) / out->contexts_max;
}

void hm_leak_text(hm_leak_kind kind, hm_res_source src, const hm_leak *l, char *buf, size_t len)
{
    char slope[96];
    hm_leak_slope_text(kind, l, slope, sizeof(slope));
    if (l->warning)
        snprintf(buf, len,
                 "server %s%s grows %s (95%% CI, %d samples after a %.0f s warm-up): a leak?",
                 hm_leak_kind_name(kind), kind == HM_LEAK_CONTEXTS ? "" : hm_res_names_of(src)->by,
                 slope, l->fit.n, l->warmup_s);
    else if (l->fit.x1 - l->fit.x0 < HM_LEAK_MIN_SPAN_S)
        snprintf(buf, len,
                 "trend %s (95%% CI, %d samples after a %.0f s warm-up): %.0f s fitted, too "
                 "short to judge a leak (it takes %.0f s)",
                 slope, l->fit.n, l->warmup_s, l->fit.x1 - l->fit.x0, HM_LEAK_MIN_SPAN_S);
    else
        snprintf(buf, len, "trend %s (95%% CI, %d samples after a %.0f s warm-up): no leak seen",
                 slope, l->fit.n, l->warmup_s);
}

static void print_leak(FILE *f, hm_leak_kind kind, hm_res_source src, const hm_leak *l)
{
    if (!l->known) return;
    char text[300], label[32];
    hm_leak_text(kind, src, l, text, sizeof(text));
    snprintf(label, sizeof(label), "%s %s",
             kind == HM_LEAK_CONTEXTS ? "Server" : hm_res_names_of(src)->prefix,
             hm_leak_kind_name(kind));
    fprintf(f, "%-17s %s\n", l->warning ? "WARNING" : label, text);
}

static void print_source(FILE *f, const hm_results *r, hm_res_source src)
{
    hm_resources res;
    hm_resources_of(r, src, &res);
    if (!res.known) return;
    char rss[32], peak[32], line[400];
    hm_format_bytes(rss, sizeof(rss), res.rss_last);
    hm_format_bytes(peak, sizeof(peak), res.rss_max);
    int n = snprintf(line, sizeof(line), "RSS %s (peak %s)", rss, peak);
    if (!isnan(res.cpu_s) && n > 0 && (size_t)n < sizeof(line))
        n += snprintf(line + n, sizeof(line) - (size_t)n, ", CPU %.2f s", res.cpu_s);
    if (!isnan(res.cpu_per_action_s) && n > 0 && (size_t)n < sizeof(line))
        n += snprintf(line + n, sizeof(line) - (size_t)n, " (%.1f µs per %s)",
                      res.cpu_per_action_s * 1e6,
                      r->unit && !strcmp(r->unit, "requests") ? "request" : "action");
    if (!isnan(res.fds_last) && n > 0 && (size_t)n < sizeof(line))
        n += snprintf(line + n, sizeof(line) - (size_t)n, ", %.0f fds", res.fds_last);
    if (!isnan(res.threads_last) && n > 0 && (size_t)n < sizeof(line))
        n += snprintf(line + n, sizeof(line) - (size_t)n, ", %.0f thread%s", res.threads_last,
                      res.threads_last == 1 ? "" : "s");
    if (!isnan(res.rss_per_context) && n > 0 && (size_t)n < sizeof(line)) {
        char per[32];
        hm_format_bytes(per, sizeof(per), fabs(res.rss_per_context));
        snprintf(line + n, sizeof(line) - (size_t)n,
                 "; RSS growth %s%s per context (%.0f at most, by /_health)",
                 res.rss_per_context < 0 ? "-" : "", per, res.contexts_max);
    }
    const hm_res_names *nm = hm_res_names_of(src);
    fprintf(f, "%-17s %s%s\n", nm->heading, line,
            src == HM_RES_EXPORTER ? " (--server-metrics)" : "");
    for (int k = 0; k < HM_LEAK__COUNT; k++)
        print_leak(f, (hm_leak_kind)k, src, &res.leak[k]);
    if (!res.leak[HM_LEAK_RSS].known) {
        char label[32];
        snprintf(label, sizeof(label), "%s RSS trend", nm->prefix);
        fprintf(f, "%-17s not judged: fewer than 3 samples after a %.0f s warm-up\n", label,
                res.leak[HM_LEAK_RSS].warmup_s);
    }
}

void hm_resources_print(FILE *f, const hm_results *r)
{
    for (int src = 0; src < HM_RES__SOURCES; src++)
        print_source(f, r, (hm_res_source)src);
}

static json_t *num_or_null(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

json_t *hm_resources_json(const hm_results *r, hm_res_source src)
{
    hm_resources res;
    hm_resources_of(r, src, &res);
    if (!res.known) return NULL;
    json_t *o = json_object();
    json_object_set_new(o, "resident_bytes", num_or_null(res.rss_last));
    json_object_set_new(o, "resident_bytes_max", num_or_null(res.rss_max));
    json_object_set_new(o, "cpu_seconds", num_or_null(res.cpu_s));
    json_object_set_new(o, "cpu_seconds_per_action", num_or_null(res.cpu_per_action_s));
    json_object_set_new(o, "open_fds", num_or_null(res.fds_last));
    json_object_set_new(o, "threads", num_or_null(res.threads_last));
    json_object_set_new(o, "contexts_max", num_or_null(res.contexts_max));
    json_object_set_new(o, "resident_bytes_per_context", num_or_null(res.rss_per_context));
    json_t *trends = json_object();
    bool warning = false;
    for (int k = 0; k < HM_LEAK__COUNT; k++) {
        const hm_leak *l = &res.leak[k];
        if (!l->known) continue;
        warning = warning || l->warning;
        json_t *t = json_object();
        json_object_set_new(t, "slope_per_hour", json_real(l->slope_h));
        json_object_set_new(t, "ci95_per_hour", json_real(l->half_h));
        json_object_set_new(t, "growth", json_real(l->growth));
        json_object_set_new(t, "mean", json_real(l->fit.mean));
        json_object_set_new(t, "samples", json_integer(l->fit.n));
        json_object_set_new(t, "warmup_s", json_real(l->warmup_s));
        json_object_set_new(t, "warning", json_boolean(l->warning));
        json_object_set_new(t, "intercept", json_real(l->fit.intercept));
        char text[300];
        hm_leak_text((hm_leak_kind)k, src, l, text, sizeof(text));
        json_object_set_new(t, "text", json_string(text));
        json_object_set_new(trends, hm_leak_kind_key((hm_leak_kind)k), t);
    }
    json_object_set_new(o, "trends", trends);
    json_object_set_new(o, "leak_warning", json_boolean(warning));
    return o;
}
