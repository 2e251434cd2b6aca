/* report_html.c — a run's HTML report from its JSON document, and
 * `hammer report`; see report.h. Every figure on the page is read from the
 * document (docs/output.md); what a document lacks (an older hammer, a run
 * without intervals) is left out, never guessed. */
#include "cli/report.h"
#include "cli/json_file.h"
#include "cli/merge.h"
#include "cli/server_watch.h"
#include "stats/resources.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hm_base.h"
#include "base/hm_fail.h"
#include "base/hm_file.h"
#include "cli/html.h"
#include "cli/shell_words.h"
#include "stats/hdr.h"
#include "stats/hdr_json.h"
#include "stats/results.h"

/* ---- reading the document ------------------------------------------------ */

/* The value at a dotted path ("actions.ok"), or NULL. */
static json_t *at(json_t *o, const char *dotted)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", dotted);
    char *save;
    for (char *tok = strtok_r(buf, ".", &save); tok && o; tok = strtok_r(NULL, ".", &save))
        o = json_object_get(o, tok);
    return o;
}

static double num(json_t *o, const char *dotted)
{
    return json_number_value(at(o, dotted));
}

static const char *str(json_t *o, const char *dotted)
{
    return json_string_value(at(o, dotted));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* o's keys in byte order, so a page does not depend on the order a
 * document was written in (a saved one is sorted; a fresh one is not). */
static size_t sorted_keys(json_t *o, const char **out, size_t max)
{
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        if (n < max) out[n++] = k;
    }
    qsort(out, n, sizeof(*out), cmp_str);
    return n;
}

#define MAX_KEYS 600

/* ---- small writers ---------------------------------------------------------- */

static void lat(char *buf, size_t len, double us)
{
    hm_format_us(buf, len, us, 0);
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

static void card(FILE *f, const char *label, const char *value, const char *cls)
{
    fprintf(f, "<div class=\"card\"><b%s%s%s>", cls ? " class=\"" : "", cls ? cls : "",
            cls ? "\"" : "");
    hm_html_text(f, value);
    fputs("</b><span>", f);
    hm_html_text(f, label);
    fputs("</span></div>\n", f);
}

static void kv_row(FILE *f, const char *key, const char *value)
{
    if (!value) return;
    fputs("<tr><th>", f);
    hm_html_text(f, key);
    fputs("</th><td>", f);
    hm_html_text(f, value);
    fputs("</td></tr>\n", f);
}

/* ---- sections ------------------------------------------------------------------ */

static const struct {
    const char *key, *label;
} phases[] = {
    {"action", "action"},  {"service", "service (-R)"}, {"patch", "action → patch"},
    {"page", "page load"}, {"connect", "connect"},      {"tls_handshake", "TLS handshake"},
};

static bool is_get(json_t *run)
{
    const char *u = str(run, "scenario");
    return u && !strcmp(u, "get");
}

/* A phase's name on the page: get's actions are requests, as the text
 * summary calls them. */
static const char *phase_label(json_t *run, size_t p)
{
    return is_get(run) && !strcmp(phases[p].key, "action") ? "request" : phases[p].label;
}

static void header(FILE *f, json_t *run, const char *pass)
{
    bool passed = json_is_true(json_object_get(run, "passed"));
    fputs("<h1>", f);
    if (pass) {
        fputs("Pass ", f);
        hm_html_text(f, pass);
        fputs(": ", f);
    }
    fputs("scenario ", f);
    hm_html_text(f, str(run, "scenario"));
    fprintf(f, " <span class=\"badge%s\">%s</span></h1>\n", passed ? "" : " fail",
            passed ? "PASS" : "FAIL");
    fputs("<p class=\"muted\">", f);
    hm_html_text(f, str(run, "target"));
    if (str(run, "started")) {
        fputs(" · started ", f);
        hm_html_text(f, str(run, "started"));
    }
    fputs(" · hammer ", f);
    hm_html_text(f, str(run, "hammer_version"));
    fputs("</p>\n", f);
    if (json_is_true(json_object_get(run, "interrupted")))
        fputs("<p class=\"fail\">Interrupted: the figures cover what ran.</p>\n", f);
    if (str(run, "fatal")) {
        fputs("<p class=\"fail\">", f);
        hm_html_text(f, str(run, "fatal"));
        fputs("</p>\n", f);
    }
    /* Why it failed: the summary's lines under "Result FAIL". */
    json_t *reasons = at(run, "result.reasons");
    if (json_array_size(reasons)) {
        fputs("<p class=\"fail\">FAIL because:</p>\n<ul class=\"reasons\">\n", f);
        size_t i;
        json_t *why;
        json_array_foreach(reasons, i, why)
        {
            fputs("<li>", f);
            hm_html_text(f, json_string_value(why));
            fputs("</li>\n", f);
        }
        fputs("</ul>\n", f);
    }
}

static void cards(FILE *f, json_t *run)
{
    const char *unit = is_get(run) ? "requests" : "actions";
    char buf[64], label[64];
    fputs("<div class=\"cards\">\n", f);
    snprintf(buf, sizeof(buf), "%.1f/s", num(run, "throughput_rps"));
    snprintf(label, sizeof(label), "%s per second", unit);
    card(f, label, buf, NULL);
    grouped(buf, sizeof(buf), num(run, "actions.sent"));
    snprintf(label, sizeof(label), "%s sent", unit);
    card(f, label, buf, NULL);
    double sent = num(run, "actions.sent"), ok = num(run, "actions.ok");
    snprintf(buf, sizeof(buf), "%.2f%%", sent > 0 ? 100 * ok / sent : 0);
    card(f, "HTTP OK (2xx)", buf, sent > 0 && ok < sent ? "fail" : NULL);
    json_t *a = at(run, "latency_us.action");
    if (num(a, "count") > 0) {
        lat(buf, sizeof(buf), num(a, "p50"));
        card(f, "latency p50", buf, NULL);
        lat(buf, sizeof(buf), num(a, "p99"));
        card(f, "latency p99", buf, NULL);
        lat(buf, sizeof(buf), num(a, "max"));
        card(f, "latency max", buf, NULL);
    }
    snprintf(buf, sizeof(buf), "%.2f s", num(run, "wall_seconds"));
    card(f, "wall time", buf, NULL);
    if (at(run, "bytes")) {
        char b[32];
        hm_format_bytes(b, sizeof(b), num(run, "bytes.read_per_s"));
        snprintf(buf, sizeof(buf), "%s/s", b);
        card(f, "read", buf, NULL);
    }
    fputs("</div>\n", f);
}

/* Appends to buf (len bytes, *n used), dropping what does not fit. */
static void append(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
    if (*n + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *n, len - *n, fmt, ap);
    va_end(ap);
    if (w > 0) *n = *n + (size_t)w < len ? *n + (size_t)w : len - 1;
}

/* "HTTP 503 ×50, timeout ×3" or "none". */
static void errors_text(json_t *run, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    const char *keys[MAX_KEYS];
    json_t *by_status = at(run, "actions.by_status"), *errors = json_object_get(run, "errors");
    size_t nk = sorted_keys(by_status, keys, MAX_KEYS);
    for (size_t i = 0; i < nk; i++) {
        int s = atoi(keys[i]);
        if (s >= 200 && s < 300) continue;
        append(buf, len, &n, "%sHTTP %s ×%lld", n ? ", " : "", keys[i],
               (long long)json_integer_value(json_object_get(by_status, keys[i])));
    }
    nk = sorted_keys(errors, keys, MAX_KEYS);
    for (size_t i = 0; i < nk; i++) {
        long long c = (long long)json_integer_value(json_object_get(errors, keys[i]));
        if (c) append(buf, len, &n, "%s%s ×%lld", n ? ", " : "", keys[i], c);
    }
    if (!n) snprintf(buf, len, "none");
}

static void summary_table(FILE *f, json_t *run)
{
    char buf[1024], a[64], b[64], c[64];
    fputs("<h2>Summary</h2>\n<div class=\"tbl\"><table class=\"kv\">\n", f);
    snprintf(buf, sizeof(buf), "%s%s%s", str(run, "scenario") ? str(run, "scenario") : "?",
             str(run, "mode") ? ", load model " : "", str(run, "mode") ? str(run, "mode") : "");
    kv_row(f, "Scenario", buf);
    kv_row(f, "Target", str(run, "target"));
    snprintf(buf, sizeof(buf), "%s, %d threads, %d connections", str(run, "engine"),
             (int)num(run, "threads"), (int)num(run, "concurrency"));
    kv_row(f, "Engine", buf);
    const char *unit = is_get(run) ? "Requests" : "Actions";
    grouped(a, sizeof(a), num(run, "actions.sent"));
    grouped(b, sizeof(b), num(run, "actions.ok"));
    grouped(c, sizeof(c), num(run, "actions.failed"));
    snprintf(buf, sizeof(buf), "%s sent, %s OK, %s failed", a, b, c);
    kv_row(f, unit, buf);
    errors_text(run, buf, sizeof(buf));
    kv_row(f, "Errors", buf);
    if (num(run, "patches.observers") > 0 || num(run, "patches.observed") > 0) {
        grouped(a, sizeof(a), num(run, "patches.observed"));
        snprintf(buf, sizeof(buf), "%s observed; %d of %d observers connected", a,
                 (int)num(run, "patches.observers_connected"), (int)num(run, "patches.observers"));
        kv_row(f, "Patches", buf);
    }
    if (str(run, "signal.name") && json_is_integer(at(run, "signal.net_increment"))) {
        snprintf(buf, sizeof(buf), "%s: %lld → %lld, net %lld; matches HTTP OK: %s",
                 str(run, "signal.name"), (long long)num(run, "signal.baseline"),
                 (long long)num(run, "signal.final"), (long long)num(run, "signal.net_increment"),
                 json_is_true(at(run, "signal.matches_ok")) ? "yes" : "NO");
        kv_row(f, "Signal", buf);
    }
    if (str(run, "check.name")) {
        /* A document from before check.evaluated was written: evaluated. */
        const char *why_not = str(run, "check.not_evaluated");
        const char *detail = str(run, "check.detail") ? str(run, "check.detail") : "";
        snprintf(buf, sizeof(buf), "%s: %s%s%s%s%s", str(run, "check.name"),
                 why_not                                 ? "NOT EVALUATED"
                 : json_is_true(at(run, "check.passed")) ? "PASS"
                                                         : "FAIL",
                 why_not || *detail ? " — " : "", why_not ? why_not : "",
                 why_not && *detail && strcmp(why_not, detail) ? "; " : "",
                 why_not && !strcmp(why_not, detail) ? "" : detail);
        kv_row(f, "Check", buf);
    }
    snprintf(buf, sizeof(buf), "%lld requested, %lld established, %lld reconnects, %lld failed",
             (long long)num(run, "connections.requested"),
             (long long)num(run, "connections.established"),
             (long long)num(run, "connections.reconnects"),
             (long long)num(run, "connections.failed"));
    kv_row(f, "Connections", buf);
    if (json_is_true(at(run, "tls.enabled"))) {
        snprintf(buf, sizeof(buf), "%lld full and %lld resumed handshakes; certificate %s",
                 (long long)num(run, "tls.full_handshakes"),
                 (long long)num(run, "tls.resumed_handshakes"),
                 json_is_true(at(run, "tls.verified")) ? "verified" : "NOT verified (-k)");
        kv_row(f, "TLS", buf);
    }
    snprintf(buf, sizeof(buf), "%.3f s", num(run, "wall_seconds"));
    kv_row(f, "Wall time", buf);
    snprintf(buf, sizeof(buf), "%.1f %s/s%s", num(run, "throughput_rps"),
             is_get(run) ? "requests" : "actions", num(run, "rate.target") > 0 ? "" : "");
    if (num(run, "rate.target") > 0) {
        size_t n = strlen(buf);
        snprintf(buf + n, sizeof(buf) - n, " (target %.0f/s, open loop; hammer at %.0f%% CPU)",
                 num(run, "rate.target"), num(run, "rate.client_cpu_pct"));
    }
    kv_row(f, "Throughput", buf);
    if (at(run, "bytes")) {
        hm_format_bytes(a, sizeof(a), num(run, "bytes.read"));
        hm_format_bytes(b, sizeof(b), num(run, "bytes.read_per_s"));
        hm_format_bytes(c, sizeof(c), num(run, "bytes.written"));
        snprintf(buf, sizeof(buf), "%s read (%s/s), %s written", a, b, c);
        kv_row(f, "Transfer", buf);
    }
    size_t i;
    json_t *th;
    json_array_foreach(json_object_get(run, "thresholds"), i, th)
    {
        const char *text = str(th, "threshold");
        bool latency = text && strncmp(text, "ok", 2) && strncmp(text, "rps", 3);
        if (latency)
            lat(a, sizeof(a), num(th, "value"));
        else
            snprintf(a, sizeof(a), "%.3f", num(th, "value"));
        snprintf(buf, sizeof(buf), "%s: %s (measured %s)", text ? text : "?",
                 json_is_true(json_object_get(th, "passed")) ? "PASS" : "FAIL", a);
        kv_row(f, "Threshold", buf);
    }
    fputs("</table></div>\n", f);
}

/* One row of the table by request kind: its count, rate over the run, the
 * share that succeeded when the document says (ok < 0: it does not), and
 * its latency (l NULL: none recorded). */
static void kind_row(FILE *f, json_t *run, const char *kind, const char *label, double count,
                     double ok, json_t *l)
{
    double wall = num(run, "wall_seconds");
    char cnt[32], rate[32], pct[32];
    grouped(cnt, sizeof(cnt), count);
    snprintf(rate, sizeof(rate), "%.1f/s", wall > 0 ? count / wall : 0);
    if (ok >= 0 && count > 0)
        snprintf(pct, sizeof(pct), "%.2f%%", 100 * ok / count);
    else
        snprintf(pct, sizeof(pct), "—");
    fputs("<tr data-kind=\"", f);
    hm_html_text(f, kind);
    fputs("\"><td>", f);
    hm_html_text(f, label);
    fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n%s\">%s</td>", cnt,
            rate, ok >= 0 && ok < count ? " fail" : "", pct);
    const char *keys[] = {"p50", "p90", "p99", "p999", "max", "mean"};
    for (size_t k = 0; k < HM_ARRAY_LEN(keys); k++) {
        char v[32] = "—";
        if (l && num(l, "count") > 0) lat(v, sizeof(v), num(l, keys[k]));
        fprintf(f, "<td class=\"n\">%s</td>", v);
    }
    fputs("</tr>\n", f);
}

/* Every kind of request the run made (and the phases timed within them),
 * each flow step included: how many, how fast, how many succeeded, how
 * long they took. OK % is left out (—) where the document has no count
 * of failures for the kind. */
static void kinds_table(FILE *f, json_t *run)
{
    fputs("<h2>By request kind</h2>\n<div class=\"tbl\"><table class=\"kinds\"><tr><th>kind</th>"
          "<th class=\"n\">count</th><th class=\"n\">rate</th><th class=\"n\">OK</th>"
          "<th class=\"n\">p50</th><th class=\"n\">p90</th><th class=\"n\">p99</th>"
          "<th class=\"n\">p99.9</th><th class=\"n\">max</th><th class=\"n\">mean</th></tr>\n",
          f);
    json_t *lats = json_object_get(run, "latency_us");
    for (size_t p = 0; p < HM_ARRAY_LEN(phases); p++) {
        const char *key = phases[p].key;
        json_t *l = json_object_get(lats, key);
        bool action = !strcmp(key, "action");
        double count = action ? num(run, "actions.sent") : num(l, "count");
        if (count <= 0) continue;
        double ok = -1;
        if (action) ok = num(run, "actions.ok");
        /* a connect timed is one established; the failed ones got no time */
        if (!strcmp(key, "connect") && json_is_number(at(run, "connections.failed"))) {
            ok = count;
            count += num(run, "connections.failed");
        }
        kind_row(f, run, action && is_get(run) ? "request" : key, phase_label(run, p), count, ok,
                 l);
    }
    json_t *sse = json_object_get(run, "sse");
    if (num(sse, "opened") > 0 || json_object_size(json_object_get(sse, "failures"))) {
        double failed = 0;
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(sse, "failures"), k, v) failed += json_number_value(v);
        if (num(sse, "opened") + failed > 0)
            kind_row(f, run, "sse", "SSE stream", num(sse, "opened") + failed, num(sse, "opened"),
                     NULL);
    }
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(run, "steps"), i, o)
    {
        char label[256];
        snprintf(label, sizeof(label), "step %s: %s", str(o, "flow") ? str(o, "flow") : "?",
                 str(o, "name") ? str(o, "name") : "?");
        kind_row(f, run, "step", label, num(o, "count"), num(o, "count") - num(o, "failed"),
                 json_object_get(o, "latency_us"));
    }
    fputs("</table></div>\n<p class=\"muted\">Rate: count over the wall time. OK: the share "
          "that succeeded (a 2xx; a connection established; an SSE stream opened; a step "
          "without failure); — where the document counts no failures of that kind.</p>\n",
          f);
}

/* Responses by status code and the requests that got none, by kind of
 * failure: what every request ended as, with its share of those sent. */
static void status_section(FILE *f, json_t *run)
{
    json_t *by_status = at(run, "actions.by_status"), *errors = json_object_get(run, "errors");
    const char *keys[MAX_KEYS];
    double sent = num(run, "actions.sent");
    if (sent <= 0) return;
    fputs("<h2>Status codes</h2>\n<div class=\"tbl\"><table class=\"status\"><tr><th>outcome"
          "</th><th class=\"n\">count</th><th class=\"n\">share</th><th></th></tr>\n",
          f);
    for (int pass = 0; pass < 2; pass++) {
        json_t *o = pass ? errors : by_status;
        size_t nk = sorted_keys(o, keys, MAX_KEYS);
        for (size_t i = 0; i < nk; i++) {
            double c = (double)json_integer_value(json_object_get(o, keys[i]));
            if (c <= 0) continue;
            int s = atoi(keys[i]);
            bool good = !pass && s >= 200 && s < 300;
            char cnt[32];
            grouped(cnt, sizeof(cnt), c);
            fprintf(f, "<tr data-status=\"%s", pass ? "no response: " : "");
            hm_html_text(f, keys[i]);
            fprintf(f, "\"><td%s>%s", good ? "" : " class=\"fail\"",
                    pass ? "no response: " : "HTTP ");
            hm_html_text(f, keys[i]);
            fprintf(f,
                    "</td><td class=\"n\">%s</td><td class=\"n\">%.2f%%</td><td class=\"w\">"
                    "<span class=\"bar\" style=\"width:%.1f%%;background:%s\"></span></td></tr>\n",
                    cnt, 100 * c / sent, 100 * c / sent, good ? "#009e73" : "#b3261e");
        }
    }
    char all[32];
    grouped(all, sizeof(all), sent);
    fprintf(f,
            "</table></div>\n<p class=\"muted\">Shares are of the %s %s sent; "
            "\"no response\" is a request that got no status (docs/output.md, errors).</p>\n",
            all, is_get(run) ? "requests" : "actions");
}

static void distribution(FILE *f, json_t *run)
{
    hm_html_curve curves[HM_ARRAY_LEN(phases)];
    int n = 0;
    for (size_t p = 0; p < HM_ARRAY_LEN(phases); p++) {
        json_t *l = at(json_object_get(run, "latency_us"), phases[p].key);
        if (!l || num(l, "count") <= 0) continue;
        curves[n] = (hm_html_curve){.name = phase_label(run, p),
                                    .percentiles = json_object_get(l, "percentiles"),
                                    .count = (long long)num(l, "count"),
                                    .color = (int)p};
        n++;
    }
    fputs("<h2>Latency distribution</h2>\n<p class=\"muted\">Each curve is one phase's "
          "latency at every percentile; the axis gives each \"nine\" the same width, so the "
          "tail is as visible as the median. A curve ends where its samples do (beyond "
          "1 − 1/count every percentile is the maximum, marked with a dot).</p>\n",
          f);
    hm_html_percentile_chart(f, curves, n);
}

/* Bucket edges of the latency histogram in µs: 1, 2, 5 times each power of
 * ten, so each bar covers a similar share of a log axis. */
static double bucket_edge(int i)
{
    static const double mant[] = {1, 2, 5};
    return mant[i % 3] * pow(10, i / 3);
}

#define HIST_BUCKETS 31 /* 1 µs .. 1000 s */

/* The action (request) latency as bars by bucket, counted from the
 * document's own histogram (latency_us.action.hdr): each sample in the
 * bucket whose upper edge is the first at or above its slot's middle. */
static void histogram(FILE *f, json_t *run)
{
    hm_hdr h;
    if (hm_hdr_json_decode(at(run, "latency_us.action"), &h) < 0) return;
    double counts[HIST_BUCKETS] = {0};
    for (int32_t i = 0; i < h.counts_len; i++) {
        if (!h.counts[i]) continue;
        double v = (double)hm_hdr_median_equivalent(&h, hm_hdr_value_at_index(&h, i));
        int b = 0;
        while (b < HIST_BUCKETS - 1 && bucket_edge(b) < v)
            b++;
        counts[b] += (double)h.counts[i];
    }
    hm_hdr_destroy(&h);
    int lo = 0, hi = HIST_BUCKETS - 1;
    while (lo < hi && counts[lo] == 0)
        lo++;
    while (hi > lo && counts[hi] == 0)
        hi--;
    if (counts[lo] == 0) return;
    double upper[HIST_BUCKETS];
    for (int b = lo; b <= hi; b++)
        upper[b - lo] = bucket_edge(b);
    const char *what = is_get(run) ? "request" : "action";
    fprintf(f,
            "<h2>Latency histogram</h2>\n<p class=\"muted\">Every %s by its latency, in "
            "buckets of 1, 2 and 5 times a power of ten (each bar counts those above the "
            "bar to its left and at most its label), with its share of all of them.</p>\n",
            what);
    hm_html_bar_chart(f, "histogram", what, "latency bucket (at most)", HM_HTML_LATENCY, upper,
                      counts + lo, hi - lo + 1, 0);
}

/* The intervals' x (seconds) and one series per key; NAN where missing. */
static double *series(json_t *iv, const char *key, bool per_second)
{
    size_t n = json_array_size(iv);
    double *v = hm_calloc(n ? n : 1, sizeof(double));
    for (size_t i = 0; v && i < n; i++) {
        json_t *pt = json_array_get(iv, i), *x = at(pt, key);
        double dt = num(pt, "dt");
        v[i] = json_is_number(x) ? json_number_value(x) : NAN;
        if (per_second && !isnan(v[i])) v[i] = dt > 0 ? v[i] / dt : NAN;
    }
    return v;
}

/* What php-via's and bench_app's /_health fields mean, in words, and how
 * they are drawn: what the server holds for clients (counts that should
 * come back down), cumulative counters (drawn per second), and states
 * (0/1, said in a line). A field not listed keeps its name and is drawn
 * as a count, held or not by hm_server_watch_is_held; a name ending in
 * _bytes is drawn in bytes. */
typedef enum { FIELD_HELD, FIELD_COUNT, FIELD_COUNTER, FIELD_BYTES, FIELD_STATE } field_unit;

static const struct {
    const char *name, *words;
    field_unit unit;
} known_fields[] = {
    {"broker_connected", "broker connected", FIELD_STATE},
    {"connections_contexts", "contexts (connections)", FIELD_HELD},
    {"connections_sse", "SSE streams (connections)", FIELD_HELD},
    {"workers_contexts", "contexts (workers' sum)", FIELD_HELD},
    {"workers_sse", "SSE streams (workers' sum)", FIELD_HELD},
    {"workers_requests", "requests served (workers' sum)", FIELD_COUNTER},
    {"contexts", "contexts", FIELD_HELD},
    {"sse", "SSE streams", FIELD_HELD},
    {"requests", "requests served", FIELD_COUNTER},
};

static field_unit field_kind(const char *name, const char **words)
{
    *words = name;
    for (size_t i = 0; i < HM_ARRAY_LEN(known_fields); i++)
        if (!strcmp(known_fields[i].name, name)) {
            *words = known_fields[i].words;
            return known_fields[i].unit;
        }
    size_t len = strlen(name);
    if (len > 6 && !strcmp(name + len - 6, "_bytes")) return FIELD_BYTES;
    return hm_server_watch_is_held(name) ? FIELD_HELD : FIELD_COUNT;
}

static bool same_series(const double *a, const double *b, int n)
{
    for (int i = 0; i < n; i++)
        if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i])))) return false;
    return true;
}

/* "contexts (connections)" and "contexts (workers' sum)", drawn as one
 * line: "contexts (connections = workers' sum)". False (name unchanged)
 * unless both name the same thing. */
static bool merge_name(char *name, size_t len, const char *other)
{
    const char *open = strstr(name, " ("), *o_open = strstr(other, " (");
    size_t n = strlen(name);
    if (!open || !o_open || open - name != o_open - other ||
        strncmp(name, other, (size_t)(open - name)) || name[n - 1] != ')')
        return false;
    snprintf(name + n - 1, len - (n - 1), " = %s", o_open + 2);
    return true;
}

/* A state field in one line: at 1 throughout, or where it was not. */
static void state_line(FILE *f, const char *words, const double *v, const double *xs, int nx)
{
    int off = 0, seen = 0;
    double first_off = 0;
    for (int k = 0; k < nx; k++) {
        if (isnan(v[k])) continue;
        seen++;
        if (v[k] == 0 && off++ == 0) first_off = xs[k];
    }
    if (!seen) return;
    fputs(off ? "<p class=\"warn\">Server watch: " : "<p class=\"muted\">Server watch: ", f);
    hm_html_text(f, words);
    if (off)
        fprintf(f, ": 0 in %d of %d samples, first at %.1f s.</p>\n", off, seen, first_off);
    else
        fprintf(f, ": 1 in each of the %d samples.</p>\n", seen);
}

/* The server watch: one chart per unit — what the server holds for
 * clients (contexts, SSE streams), its cumulative counters per second,
 * its other counts, bytes — with the fields named in words and a field
 * equal to another at every sample drawn once, under both names. Each
 * goes on past the run with the samples taken after it; the first is
 * followed by the verdict. With states, the state fields' lines instead. */
static void server_watch_charts(FILE *f, json_t *run, json_t *iv, const double *x, int n,
                                bool states)
{
    json_t *fields = at(run, "server_watch.fields");
    json_t *after = at(run, "server_watch.after_run");
    int na = (int)json_array_size(after), nx = n + na;
    double *xs = hm_calloc((size_t)nx, sizeof(double));
    if (!xs) return;
    for (int i = 0; i < n; i++)
        xs[i] = x[i];
    double end = n ? x[n - 1] : 0; /* the last interval ends with the run */
    for (int k = 0; k < na; k++)
        xs[n + k] = end + num(json_array_get(after, (size_t)k), "after_s");
    const char *verdict = str(at(run, "server_watch"), "verdict_text");
    const char *level = str(at(run, "server_watch"), "verdict_level");
    static const struct {
        field_unit unit;
        const char *kind, *caption, *y_label;
    } charts[] = {
        {FIELD_HELD, "server", "contexts and SSE streams it holds", "held for clients"},
        {FIELD_COUNTER, "server-rate", "its counters, per second", "per second"},
        {FIELD_COUNT, "server-other", "its other fields", "as the server reports"},
        {FIELD_BYTES, "server-bytes", "bytes", "bytes"},
    };
    for (size_t c = 0; c < (states ? 1 : HM_ARRAY_LEN(charts)); c++) {
        hm_html_line sl[8];
        double *sv[8];
        char names[8][200];
        int ns = 0;
        size_t i;
        json_t *name;
        json_array_foreach(fields, i, name)
        {
            const char *nm = json_string_value(name), *words;
            if (ns == 8 || !nm) continue;
            if (hm_resources_is_field(nm)) continue; /* server_resources_section's */
            field_unit u = field_kind(nm, &words);
            if (states ? u != FIELD_STATE : u != charts[c].unit) continue;
            char key[128];
            snprintf(key, sizeof(key), "server.%s", nm);
            double *during = series(iv, key, false);
            double *v = hm_calloc((size_t)nx, sizeof(double));
            for (int k = 0; v && k < nx; k++) {
                json_t *a =
                    k < n ? NULL : json_object_get(json_array_get(after, (size_t)(k - n)), nm);
                v[k] = k < n ? during[k] : json_is_number(a) ? json_number_value(a) : NAN;
            }
            hm_free(during);
            if (!v) continue;
            if (states) {
                state_line(f, words, v, xs, nx);
                hm_free(v);
                continue;
            }
            if (u == FIELD_COUNTER) {
                /* The growth per second since the last sample (the
                 * baseline at 0 s for the first); a sample much closer
                 * than an interval to the last (one right after the run)
                 * is left out, its growth counted with the next. */
                json_t *b = json_object_get(at(run, "server_watch.baseline"), nm);
                double prev = json_is_number(b) ? json_number_value(b) : NAN, prev_t = 0;
                double min_span = 0.25 * num(run, "interval_s");
                for (int k = 0; k < nx; k++) {
                    double cur = v[k];
                    bool far = xs[k] - prev_t >= min_span && xs[k] > prev_t;
                    v[k] = !isnan(cur) && !isnan(prev) && far && cur >= prev
                               ? (cur - prev) / (xs[k] - prev_t)
                               : NAN;
                    if (!isnan(cur) && (far || isnan(prev))) prev = cur, prev_t = xs[k];
                }
            }
            bool merged = false; /* one line under both names, not two on top of each other */
            for (int k = 0; k < ns && !merged; k++)
                merged = same_series(sv[k], v, nx) && merge_name(names[k], sizeof(names[k]), words);
            if (merged) {
                hm_free(v);
                continue;
            }
            snprintf(names[ns], sizeof(names[ns]), "%s", words);
            sv[ns] = v;
            sl[ns] = (hm_html_line){names[ns], v, ns,
                                    ns % 2 == 1}; /* dashed: equal lines stay visible */
            ns++;
        }
        if (!ns) continue;
        fprintf(f, "<figure><figcaption>Server watch: %s", charts[c].caption);
        if (na)
            fprintf(f, " (the run ended at %.1f s; %d sample%s after it)", end, na,
                    na == 1 ? "" : "s");
        fputs("</figcaption>\n", f);
        hm_html_time_chart(f, charts[c].kind, charts[c].y_label, HM_HTML_COUNT, xs, nx, sl, ns);
        if (charts[c].unit == FIELD_HELD && verdict) {
            fprintf(f, "<p%s>After the run: ",
                    level && !strcmp(level, "warning") ? " class=\"warn\"" : "");
            hm_html_text(f, verdict);
            fputs("</p>\n", f);
        }
        for (int k = 0; k < ns; k++)
            hm_free(sv[k]);
        fputs("</figure>\n", f);
    }
    hm_free(xs);
}

/* Whether the last interval is partial: shorter than the one before it
 * (the run's end cut it; the intervals record their length as dt). */
static bool last_partial(json_t *iv)
{
    size_t n = json_array_size(iv);
    if (n < 2) return false;
    double last = num(json_array_get(iv, n - 1), "dt"), prev = num(json_array_get(iv, n - 2), "dt");
    return last > 0 && prev > 0 && last < 0.9 * prev;
}

static void over_time(FILE *f, json_t *run)
{
    json_t *iv = json_object_get(run, "intervals");
    int n = (int)json_array_size(iv);
    if (n == 0) return;
    fputs("<h2>Over time</h2>\n", f);
    hm_html_time_style how = {.last_partial = last_partial(iv)};
    if (how.last_partial)
        fprintf(f,
                "<p class=\"muted partial-note\">The last point (dotted, hollow) is the run's "
                "final, partial interval: %.2f s of the %.2f s the others span, and it holds "
                "the stop, so its rates are per second of its own length and its gauges are "
                "read after the load ended.</p>\n",
                num(json_array_get(iv, (size_t)n - 1), "dt"),
                num(json_array_get(iv, (size_t)n - 2), "dt"));
    double *x = series(iv, "t", false);
    const char *unit = is_get(run) ? "requests" : "actions";
    char label[64];
    /* not 2xx = error statuses + requests without a response, by kind */
    double *failed = series(iv, "failed", true), any = 0;
    for (int i = 0; i < n; i++)
        any += failed[i] > 0;
    if (!any) fputs("<p class=\"muted no-errors\">No errors during the run.</p>\n", f);
    fputs("<div class=\"charts\">\n<figure><figcaption>Throughput</figcaption>\n", f);
    double *sent = series(iv, "sent", true), *ok = series(iv, "ok", true);
    snprintf(label, sizeof(label), "%s per second", unit);
    hm_html_line tl[] = {{"sent per second", sent, 0, false}, {"OK per second", ok, 2, true}};
    hm_html_time_chart_styled(f, "throughput", label, HM_HTML_COUNT, x, n, tl, 2, &how);
    fputs("</figure>\n<figure><figcaption>Response time bands (each interval's own p50, p90, "
          "p99)</figcaption>\n",
          f);
    double *p50 = series(iv, "latency_us.p50", false), *p99 = series(iv, "latency_us.p99", false);
    double *p90 = series(iv, "latency_us.p90", false);
    for (int i = 0; i < n; i++) /* an interval without samples has no latency */
        if (num(json_array_get(iv, (size_t)i), "latency_us.count") <= 0)
            p50[i] = p90[i] = p99[i] = NAN;
    hm_html_line ll[] = {{"p50", p50, 0, false}, {"p90", p90, 4, true}, {"p99", p99, 1, false}};
    hm_html_time_style bands = how;
    bands.bands = true;
    hm_html_time_chart_styled(f, "latency", "latency", HM_HTML_LATENCY, x, n, ll, 3, &bands);
    fputs("</figure>\n", f);
    hm_html_line el[HM_FAIL__COUNT + 1];
    double *ev[HM_FAIL__COUNT + 1] = {0};
    int ne = 0;
    if (any) {
        fputs("<figure><figcaption>Errors per second</figcaption>\n", f);
        double *status_errs = hm_calloc((size_t)n, sizeof(double));
        for (int i = 0; i < n; i++)
            status_errs[i] = failed[i];
        for (int k = 1; k < HM_FAIL__COUNT; k++) {
            const char *name = hm_fail_kind_name((hm_fail_kind)k);
            char key[64];
            snprintf(key, sizeof(key), "errors.%s", name);
            bool seen = false;
            for (int i = 0; i < n; i++)
                seen = seen || json_is_number(at(json_array_get(iv, (size_t)i), key));
            if (!seen) continue;
            double *v = hm_calloc((size_t)n, sizeof(double));
            for (int i = 0; i < n; i++) {
                json_t *pt = json_array_get(iv, (size_t)i);
                double dt = num(pt, "dt");
                v[i] = dt > 0 ? num(pt, key) / dt : 0;
                status_errs[i] -= v[i];
            }
            ev[ne] = v;
            el[ne] = (hm_html_line){name, v, k, false};
            ne++;
        }
        el[ne] = (hm_html_line){"HTTP status not 2xx", status_errs, 3, false};
        ev[ne++] = status_errs;
        hm_html_time_chart_styled(f, "errors", "per second", HM_HTML_COUNT, x, n, el, ne, &how);
        fputs("</figure>\n", f);
    }
    /* apart from the VUs: with -c 200 and 20 in flight, one line would
     * flatten the other */
    fputs("<figure><figcaption>Requests in flight</figcaption>\n", f);
    double *inf = series(iv, "in_flight", false), *vus = series(iv, "vus", false);
    double *sse = series(iv, "sse_open", false);
    hm_html_line il[] = {{"requests in flight", inf, 0, false}};
    hm_html_time_chart_styled(f, "in-flight", "sent, not yet answered", HM_HTML_COUNT, x, n, il, 1,
                              &how);
    fputs("</figure>\n<figure><figcaption>Virtual users and SSE streams</figcaption>\n", f);
    hm_html_line gl[] = {{"virtual users (senders)", vus, 4, true},
                         {"SSE streams open", sse, 2, false}};
    hm_html_time_chart_styled(f, "gauges", "count", HM_HTML_COUNT, x, n, gl, 2, &how);
    fputs("</figure>\n", f);
    server_watch_charts(f, run, iv, x, n, false);
    fputs("</div>\n", f);
    server_watch_charts(f, run, iv, x, n, true);
    for (int k = 0; k < ne; k++)
        hm_free(ev[k]);
    double *all[] = {x, sent, ok, p50, p90, p99, failed, inf, vus, sse};
    for (size_t k = 0; k < HM_ARRAY_LEN(all); k++)
        hm_free(all[k]);
}

/* "Server resources" (by pid) or "Server exporter" (--server-metrics):
 * what the server's processes used (RSS with the fitted trend line, CPU as
 * a share of one core, fds and threads), CPU per action, memory per
 * context, and the leak verdict of each trend; a section per source. */
static void server_resources_section(FILE *f, json_t *run, hm_res_source src)
{
    const hm_res_names *nm = hm_res_names_of(src);
    json_t *res = json_object_get(run, nm->json_key);
    json_t *iv = json_object_get(run, "intervals");
    int n = (int)json_array_size(iv);
    if (!res || n == 0) return;
    fprintf(f, "<h2>%s</h2>\n<p>", nm->heading);
    if (src == HM_RES_EXPORTER) fputs("As the server's exporter says (--server-metrics): ", f);
    double rss = num(res, "resident_bytes"), cpa = num(res, "cpu_seconds_per_action");
    fprintf(f, "RSS %.1f MiB at the end (peak %.1f MiB)", rss / 1048576,
            num(res, "resident_bytes_max") / 1048576);
    if (json_is_number(json_object_get(res, "cpu_seconds_per_action")))
        fprintf(f, "; server CPU %.1f µs per %s (%.2f s in all)", cpa * 1e6,
                is_get(run) ? "request" : "action", num(res, "cpu_seconds"));
    if (json_is_number(json_object_get(res, "resident_bytes_per_context")))
        fprintf(f, "; RSS growth %.1f KiB per context (at most %.0f, by /_health)",
                num(res, "resident_bytes_per_context") / 1024, num(res, "contexts_max"));
    fputs(".</p>\n", f);
    static const char *const kinds[] = {"resident_bytes", "open_fds", "contexts"};
    static const char *const labels[] = {"RSS", "Open fds", "Contexts"};
    for (size_t k = 0; k < HM_ARRAY_LEN(kinds); k++) {
        json_t *t = at(json_object_get(res, "trends"), kinds[k]);
        const char *text = str(t, "text");
        if (!text) continue;
        bool warn = json_is_true(json_object_get(t, "warning"));
        fprintf(f, "<p%s>%s%s: ", warn ? " class=\"warn\"" : "", warn ? "WARNING: " : "",
                labels[k]);
        hm_html_text(f, text);
        fputs("</p>\n", f);
    }
    double *x = series(iv, "t", false);
    char key[64], id[32];
    snprintf(key, sizeof(key), "server.%s", nm->rss);
    double *mib = series(iv, key, false);
    double *fit = hm_calloc((size_t)n, sizeof(double));
    json_t *rt = at(res, "trends.resident_bytes");
    for (int i = 0; fit && mib && i < n; i++) {
        mib[i] /= 1048576;
        fit[i] = rt && x[i] >= num(rt, "warmup_s")
                     ? (num(rt, "intercept") + num(rt, "slope_per_hour") / 3600 * x[i]) / 1048576
                     : NAN;
    }
    /* The exporter's charts get ids of their own beside the pid source's. */
    const char *id_pre = src == HM_RES_EXPORTER ? "exporter" : "server";
    fprintf(f,
            "<div class=\"charts\">\n<figure><figcaption>%s RSS and its trend after the "
            "warm-up</figcaption>\n",
            nm->prefix);
    hm_html_line ml[] = {{"RSS (MiB)", mib, 0, false}, {"fitted trend", fit, 1, true}};
    snprintf(id, sizeof(id), "%s-rss", id_pre);
    hm_html_time_chart(f, id, "MiB", HM_HTML_COUNT, x, n, ml, rt ? 2 : 1);
    /* CPU seconds per interval over its length: the share of one core. */
    snprintf(key, sizeof(key), "server.%s", nm->cpu);
    double *cpu = series(iv, key, false);
    for (int i = n - 1; cpu && i >= 0; i--) {
        double dt = num(json_array_get(iv, (size_t)i), "dt");
        cpu[i] = i > 0 && dt > 0 ? 100 * (cpu[i] - cpu[i - 1]) / dt : NAN;
    }
    fprintf(f, "</figure>\n<figure><figcaption>%s CPU (%% of one core)</figcaption>\n", nm->prefix);
    hm_html_line cl[] = {{"CPU %", cpu, 2, false}};
    snprintf(id, sizeof(id), "%s-cpu", id_pre);
    hm_html_time_chart(f, id, "% of one core", HM_HTML_COUNT, x, n, cl, 1);
    snprintf(key, sizeof(key), "server.%s", nm->fds);
    double *fds = series(iv, key, false);
    snprintf(key, sizeof(key), "server.%s", nm->threads);
    double *thr = series(iv, key, false);
    fprintf(f, "</figure>\n<figure><figcaption>%s open fds and threads</figcaption>\n", nm->prefix);
    hm_html_line fl[] = {{"open fds", fds, 3, false}, {"threads", thr, 4, true}};
    snprintf(id, sizeof(id), "%s-fds", id_pre);
    hm_html_time_chart(f, id, "count", HM_HTML_COUNT, x, n, fl, 2);
    fputs("</figure>\n</div>\n", f);
    double *all[] = {x, mib, fit, cpu, fds, thr};
    for (size_t k = 0; k < HM_ARRAY_LEN(all); k++)
        hm_free(all[k]);
}

/* An example of a failure, whatever shape the document gives it: a
 * string, or an object whose string and number fields are listed. */
static void example_text(FILE *f, json_t *ex)
{
    if (json_is_array(ex)) ex = json_array_get(ex, 0);
    if (json_is_string(ex)) {
        fputs("<code>", f);
        hm_html_text(f, json_string_value(ex));
        fputs("</code>", f);
        return;
    }
    const char *keys[MAX_KEYS];
    size_t nk = sorted_keys(ex, keys, MAX_KEYS);
    bool first = true;
    for (size_t i = 0; i < nk; i++) {
        const char *k = keys[i];
        json_t *v = json_object_get(ex, k);
        char num_buf[48];
        const char *text = json_string_value(v);
        if (json_is_number(v)) {
            snprintf(num_buf, sizeof(num_buf), "%g", json_number_value(v));
            text = num_buf;
        }
        if (!text) continue;
        fputs(first ? "" : "; ", f);
        hm_html_text(f, k);
        fputs(": <code>", f);
        hm_html_text(f, text);
        fputs("</code>", f);
        first = false;
    }
}

static void errors_section(FILE *f, json_t *run)
{
    fputs("<h2>Errors</h2>\n", f);
    json_t *reasons = json_object_get(run, "error_reasons");
    json_t *by_status = at(run, "actions.by_status"), *errors = json_object_get(run, "errors");
    const char *keys[MAX_KEYS];
    char errs[1024];
    errors_text(run, errs, sizeof(errs));
    if (!strcmp(errs, "none")) {
        fputs("<p class=\"muted\">None: every request got a 2xx response.</p>\n", f);
        return;
    }
    fputs("<div class=\"tbl\"><table><tr><th>what</th><th class=\"n\">count</th>"
          "<th>example</th></tr>\n",
          f);
    size_t nk = sorted_keys(by_status, keys, MAX_KEYS);
    for (size_t i = 0; i < nk; i++) {
        const char *k = keys[i];
        json_t *v = json_object_get(by_status, k);
        int s = atoi(k);
        if (s >= 200 && s < 300) continue;
        char cnt[32], key[32];
        grouped(cnt, sizeof(cnt), (double)json_integer_value(v));
        fprintf(f, "<tr><td>HTTP ");
        hm_html_text(f, k);
        fprintf(f, "</td><td class=\"n\">%s</td><td>", cnt);
        snprintf(key, sizeof(key), "http_%s", k);
        example_text(f, json_object_get(reasons, key) ? json_object_get(reasons, key)
                                                      : json_object_get(reasons, k));
        fputs("</td></tr>\n", f);
    }
    nk = sorted_keys(errors, keys, MAX_KEYS);
    for (size_t i = 0; i < nk; i++) {
        const char *k = keys[i];
        json_t *v = json_object_get(errors, k);
        if (!json_integer_value(v)) continue;
        char cnt[32];
        grouped(cnt, sizeof(cnt), (double)json_integer_value(v));
        fputs("<tr><td>", f);
        hm_html_text(f, k);
        fprintf(f, "</td><td class=\"n\">%s</td><td>", cnt);
        example_text(f, json_object_get(reasons, k));
        if (!strcmp(k, "tls") && str(run, "tls.first_failure")) {
            fputs(" first: <code>", f);
            hm_html_text(f, str(run, "tls.first_failure"));
            fputs("</code>", f);
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</table></div>\n", f);
}

/* Flows: each step's row and each expectation (docs/flows.md). */
static void steps_section(FILE *f, json_t *run)
{
    json_t *steps = json_object_get(run, "steps"), *checks = json_object_get(run, "checks");
    if (!json_array_size(steps) && !json_array_size(checks)) return;
    size_t i;
    json_t *o;
    if (json_array_size(steps)) {
        fputs("<h2>Steps</h2>\n<div class=\"tbl\"><table><tr><th>flow</th><th>step</th>"
              "<th class=\"n\">count</th><th class=\"n\">failed</th><th class=\"n\">p50</th>"
              "<th class=\"n\">p99</th><th class=\"n\">max</th><th>first failure</th></tr>\n",
              f);
        json_array_foreach(steps, i, o)
        {
            char cnt[32], failed[32], p50[32], p99[32], mx[32];
            grouped(cnt, sizeof(cnt), num(o, "count"));
            grouped(failed, sizeof(failed), num(o, "failed"));
            lat(p50, sizeof(p50), num(o, "latency_us.p50"));
            lat(p99, sizeof(p99), num(o, "latency_us.p99"));
            lat(mx, sizeof(mx), num(o, "latency_us.max"));
            fputs("<tr><td>", f);
            hm_html_text(f, str(o, "flow"));
            fputs("</td><td>", f);
            hm_html_text(f, str(o, "name"));
            fprintf(f,
                    "</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
                    "<td class=\"n\">%s</td><td class=\"n\">%s</td><td>",
                    cnt, failed, p50, p99, mx);
            hm_html_text(f, str(o, "first_failure"));
            fputs("</td></tr>\n", f);
        }
        fputs("</table></div>\n", f);
    }
    if (json_array_size(checks)) {
        fputs("<h2>Checks</h2>\n<div class=\"tbl\"><table><tr><th>flow</th><th>check</th>"
              "<th class=\"n\">held</th><th class=\"n\">failed</th><th>first failure</th>"
              "</tr>\n",
              f);
        json_array_foreach(checks, i, o)
        {
            char held[32], failed[32];
            grouped(held, sizeof(held), num(o, "passed"));
            grouped(failed, sizeof(failed), num(o, "failed"));
            fputs("<tr><td>", f);
            hm_html_text(f, str(o, "flow"));
            fputs("</td><td>", f);
            hm_html_text(f, str(o, "name"));
            fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n%s\">%s</td><td>", held,
                    num(o, "failed") > 0 ? " fail" : "", failed);
            hm_html_text(f, str(o, "first_failure"));
            fputs("</td></tr>\n", f);
        }
        fputs("</table></div>\n", f);
    }
}

static void command_section(FILE *f, json_t *run)
{
    json_t *argv = json_object_get(run, "command_line");
    if (!json_array_size(argv)) return;
    /* As a shell needs it, so it can be pasted and run again. */
    char *line = NULL;
    size_t len = 0;
    FILE *words = open_memstream(&line, &len);
    if (words) {
        hm_shell_words(words, argv);
        fclose(words);
    }
    fputs("<h2>Command</h2>\n<p><code>", f);
    hm_html_text(f, line ? line : "");
    fputs("</code></p>\n", f);
    free(line);
    json_t *opts = json_object_get(run, "options");
    if (!json_object_size(opts)) return;
    fputs("<details><summary>Every option as the run used it</summary>\n"
          "<div class=\"tbl\"><table class=\"kv\">\n",
          f);
    const char *keys[MAX_KEYS];
    size_t nk = sorted_keys(opts, keys, MAX_KEYS);
    for (size_t k = 0; k < nk; k++) {
        char *text = json_dumps(json_object_get(opts, keys[k]), JSON_ENCODE_ANY | JSON_COMPACT);
        kv_row(f, keys[k], text ? text : "?");
        free(text);
    }
    fputs("</table></div></details>\n", f);
}

static void run_sections(FILE *f, json_t *run, const char *pass)
{
    header(f, run, pass);
    cards(f, run);
    summary_table(f, run);
    status_section(f, run);
    kinds_table(f, run);
    distribution(f, run);
    histogram(f, run);
    over_time(f, run);
    for (int src = 0; src < HM_RES__SOURCES; src++)
        server_resources_section(f, run, (hm_res_source)src);
    steps_section(f, run);
    errors_section(f, run);
    command_section(f, run);
}

/* --passes: the comparison first, then each pass. */
static void passes_page(FILE *f, json_t *doc)
{
    json_t *passes = json_object_get(doc, "passes");
    bool passed = json_is_true(json_object_get(doc, "passed"));
    json_t *first = json_array_get(passes, 0);
    fputs("<h1>", f);
    fprintf(f, "%zu passes of scenario ", json_array_size(passes));
    hm_html_text(f, str(first, "scenario"));
    fprintf(f, " <span class=\"badge%s\">%s</span></h1>\n", passed ? "" : " fail",
            passed ? "PASS" : "FAIL");
    fputs("<p class=\"muted\">", f);
    hm_html_text(f, str(first, "target"));
    fputs("</p>\n<div class=\"tbl\"><table><tr><th>pass</th><th class=\"n\">throughput</th>"
          "<th class=\"n\">HTTP OK</th><th class=\"n\">p50</th><th class=\"n\">p99</th>"
          "<th>result</th></tr>\n",
          f);
    size_t i;
    json_t *run;
    hm_html_curve curves[16];
    int n = 0;
    json_array_foreach(passes, i, run)
    {
        char p50[32], p99[32];
        lat(p50, sizeof(p50), num(run, "latency_us.action.p50"));
        lat(p99, sizeof(p99), num(run, "latency_us.action.p99"));
        double sent = num(run, "actions.sent");
        fputs("<tr><td>", f);
        hm_html_text(f, str(run, "pass"));
        fprintf(f,
                "</td><td class=\"n\">%.1f/s</td><td class=\"n\">%.2f%%</td><td "
                "class=\"n\">%s</td><td class=\"n\">%s</td><td>%s</td></tr>\n",
                num(run, "throughput_rps"), sent > 0 ? 100 * num(run, "actions.ok") / sent : 0, p50,
                p99, json_is_true(json_object_get(run, "passed")) ? "PASS" : "FAIL");
        if (n < 16)
            curves[n] = (hm_html_curve){.name = str(run, "pass") ? str(run, "pass") : "?",
                                        .percentiles = at(run, "latency_us.action.percentiles"),
                                        .count = (long long)num(run, "latency_us.action.count"),
                                        .color = n,
                                        .dashed = n % 2 == 1},
            n++;
    }
    fputs("</table></div>\n", f);
    json_array_foreach(json_object_get(doc, "changes"), i, run)
    {
        fputs("<p>", f);
        hm_html_text(f, str(run, "from"));
        fputs(" → ", f);
        hm_html_text(f, str(run, "to"));
        fprintf(f, ": throughput %+.1f%%, p99 %+.1f%%</p>\n", num(run, "throughput_pct"),
                num(run, "p99_pct"));
    }
    fputs("<h2>Action latency of each pass</h2>\n", f);
    hm_html_percentile_chart(f, curves, n);
    json_array_foreach(passes, i, run)
    {
        fputs("<hr>\n", f);
        run_sections(f, run, str(run, "pass"));
    }
}

int hm_report_html(FILE *f, json_t *doc)
{
    bool passes = json_is_array(json_object_get(doc, "passes"));
    json_t *first = passes ? json_array_get(json_object_get(doc, "passes"), 0) : doc;
    char title[256];
    snprintf(title, sizeof(title), "hammer — scenario %s",
             str(first, "scenario") ? str(first, "scenario") : "?");
    hm_html_head(f, title);
    if (passes)
        passes_page(f, doc);
    else
        run_sections(f, doc, NULL);
    fputs("<p class=\"muted\">Written by hammer from the run's JSON document, which is "
          "embedded below (docs/reports.md says how to read this page).</p>\n",
          f);
    /* The data, for anyone who wants to redraw it. */
    if (hm_html_embed_json(f, "hammer-run-data", doc) < 0) return -ENOMEM;
    fputs("</body></html>\n", f);
    return ferror(f) ? -EIO : 0;
}

static int render_html(FILE *f, void *doc)
{
    return hm_report_html(f, doc);
}

int hm_report_html_write(const char *path, json_t *doc)
{
    return hm_file_replace(path, render_html, doc);
}

#define REPORT_USAGE "usage: hammer report RUN.json [--html FILE] [--markdown FILE]"

/* Writes doc's Markdown summary into path ("-": stdout). 0 or a negative errno. */
static int write_markdown(const char *path, json_t *doc)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
    if (!f) return -errno;
    int rc = hm_merge_markdown(f, doc);
    if (f != stdout && fclose(f) != 0 && rc == 0) rc = -errno;
    return rc;
}

int hm_report_main(int argc, char **argv)
{
    const char *in = NULL, *html = NULL, *markdown = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--html") && i + 1 < argc) {
            html = argv[++i];
        } else if (!strcmp(argv[i], "--markdown") && i + 1 < argc) {
            markdown = argv[++i];
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf(REPORT_USAGE
                   "\n"
                   "Prints a saved run's summary (a run's --json, or hammer merge's) and, as\n"
                   "asked, renders it as the HTML report --html writes during a run\n"
                   "(docs/reports.md) or as Markdown (--markdown -: on stdout).\n");
            return 0;
        } else if (argv[i][0] == '-' || in) {
            fprintf(stderr, "hammer: report: unexpected '%s' (" REPORT_USAGE ")\n", argv[i]);
            return 2;
        } else {
            in = argv[i];
        }
    }
    if (!in) {
        fprintf(stderr, "hammer: " REPORT_USAGE "\n");
        return 2;
    }
    char why[4200];
    json_t *doc = hm_json_file_load(in, why, sizeof(why));
    if (!doc) {
        fprintf(stderr, "hammer: report: %s\n", why);
        return 2;
    }
    if (!json_object_get(doc, "latency_us") && !json_object_get(doc, "passes")) {
        fprintf(stderr, "hammer: report: %s is not a hammer run's JSON document\n", in);
        json_decref(doc);
        return 2;
    }
    int rc = 0;
    const char *failed = NULL;
    if (!markdown || strcmp(markdown, "-")) rc = hm_merge_print(stdout, doc);
    if (rc == 0 && html && (rc = hm_report_html_write(html, doc)) < 0) failed = html;
    if (rc == 0 && markdown && (rc = write_markdown(markdown, doc)) < 0) failed = markdown;
    json_decref(doc);
    if (rc < 0) {
        fprintf(stderr, "hammer: report: cannot write %s: %s\n", failed ? failed : "stdout",
                hm_strerror(rc));
        return 1;
    }
    return 0;
}
