/* The JSON report of a run (docs/output.md, "JSON"): counts, latency
 * histograms (with their lossless HdrHistogram form), intervals, the server
 * watch, disruption, and the comparison of passes. */
#include "stats/results.h"
#include "stats/resources.h"
#include "stats/results_internal.h"

#include "base/hm_file.h"
#include "stats/hdr_json.h"
#include "stats/json_text.h"
#include "stats/steps.h"

#include <jansson.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static json_t *server_values(const hm_server_report *w, const double *v)
{
    json_t *o = json_object();
    for (int i = 0; i < w->n; i++)
        if (!isnan(v[i])) json_object_set_new(o, w->names[i], json_real(v[i]));
    return o;
}

/* "server_watch": the fields the series carries, and the end check. */
static json_t *server_watch_json(const hm_results *r)
{
    const hm_server_report *w = &r->server;
    const hm_interval_series *s = &r->intervals;
    if (!s->n_server && !w->sampled && !w->stopped[0]) return NULL;
    json_t *o = json_object();
    json_t *names = json_array();
    for (int i = 0; i < s->n_server; i++)
        json_array_append_new(names, hm_json_text(s->server_names[i]));
    json_object_set_new(o, "fields", names);
    json_object_set_new(o, "baseline", w->sampled ? server_values(w, w->before) : json_null());
    bool any_after = false;
    for (int i = 0; i < w->n; i++)
        any_after = any_after || !isnan(w->after[i]);
    json_object_set_new(o, "end", any_after ? server_values(w, w->after) : json_null());
    json_t *held = json_array();
    for (int i = 0; i < w->n; i++)
        if (w->held[i]) json_array_append_new(held, hm_json_text(w->names[i]));
    json_object_set_new(o, "held", held);
    json_object_set_new(o, "checked", json_boolean(w->checked));
    json_object_set_new(o, "grace_s", json_real(w->grace_s));
    json_object_set_new(o, "waited_s", json_real(w->waited_s));
    json_object_set_new(o, "came_back", w->checked ? json_boolean(w->came_back) : json_null());
    json_object_set_new(o, "waited", json_boolean(w->waited));
    json_object_set_new(o, "skipped", json_boolean(w->skipped));
    json_object_set_new(o, "own",
                        json_pack("{s:I,s:I}", "contexts", (json_int_t)w->own_contexts, "streams",
                                  (json_int_t)w->own_streams));
    const char *verdict = hm_server_verdict_name(w->verdict);
    const char *level = hm_server_verdict_level(w->verdict);
    char text[600];
    hm_server_verdict_text(w, text, sizeof(text));
    json_object_set_new(o, "verdict", verdict ? json_string(verdict) : json_null());
    json_object_set_new(o, "verdict_level", level ? json_string(level) : json_null());
    json_object_set_new(o, "verdict_text", text[0] ? hm_json_text(text) : json_null());
    json_t *after = json_array();
    for (int k = 0; k < w->n_after; k++) {
        json_t *pt = server_values(w, w->after_v[k]);
        json_object_set_new(pt, "after_s", json_real(w->after_t[k]));
        json_array_append_new(after, pt);
    }
    json_object_set_new(o, "after_run", after);
    json_object_set_new(o, "stopped", w->stopped[0] ? hm_json_text(w->stopped) : json_null());
    return o;
}

/* Every histogram carries its V2 encoding too, so runs merge losslessly. */
static json_t *latency_json(const hm_hdr *h)
{
    return hm_hdr_json(h);
}

/* "2026-12-01T09:30:05.123Z" */
static json_t *rfc3339(struct timespec ts)
{
    struct tm tm;
    char buf[48], out[64];
    time_t t = ts.tv_sec;
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", gmtime_r(&t, &tm));
    snprintf(out, sizeof(out), "%s.%03ldZ", buf, ts.tv_nsec / 1000000);
    return json_string(out);
}

static json_t *interval_json(const hm_interval_series *s, const hm_interval_point *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "t", json_real(p->t));
    json_object_set_new(o, "dt", json_real(p->dt));
    json_object_set_new(o, "sent", json_integer((json_int_t)p->sent));
    json_object_set_new(o, "ok", json_integer((json_int_t)p->ok));
    json_object_set_new(o, "failed", json_integer((json_int_t)(p->sent - p->ok)));
    json_t *errs = json_object();
    for (int k = 1; k < HM_FAIL__COUNT; k++)
        if (p->errors[k])
            json_object_set_new(errs, hm_fail_kind_name((hm_fail_kind)k),
                                json_integer((json_int_t)p->errors[k]));
    json_object_set_new(o, "errors", errs);
    json_object_set_new(o, "rate", json_real(p->dt > 0 ? (double)p->sent / p->dt : 0));
    json_object_set_new(o, "bytes_read", json_integer((json_int_t)p->bytes_read));
    json_object_set_new(o, "latency_us",
                        json_pack("{s:I, s:I, s:I, s:I, s:I}", "count", (json_int_t)p->count, "p50",
                                  (json_int_t)p->p50_us, "p90", (json_int_t)p->p90_us, "p99",
                                  (json_int_t)p->p99_us, "max", (json_int_t)p->max_us));
    json_object_set_new(o, "sse_open", json_integer(p->sse_open));
    json_object_set_new(o, "reconnects", json_integer(p->reconnects));
    json_object_set_new(o, "in_flight", json_integer(p->in_flight));
    json_object_set_new(o, "vus", json_integer(p->vus));
    json_object_set_new(o, "reloads", json_integer(p->reloads));
    if (s->n_server) {
        json_t *srv = json_object();
        for (int i = 0; i < s->n_server; i++)
            if (!isnan(p->server[i]))
                json_object_set_new(srv, s->server_names[i], json_real(p->server[i]));
        json_object_set_new(o, "server", srv);
    }
    return o;
}

/* {"reason", "where", "bytes"} (and "kind" when given) of a first example. */
static json_t *example_json(const hm_fail_example *ex, const char *kind)
{
    json_t *o = json_object();
    if (kind) json_object_set_new(o, "kind", json_string(kind));
    json_object_set_new(o, "reason", hm_json_text(ex->reason));
    json_object_set_new(o, "where", hm_json_text(ex->where));
    json_object_set_new(o, "bytes", hm_json_text(ex->bytes));
    return o;
}

/* The outage window, context losses, reloads and recovery times. */
static json_t *disruption_json(const hm_results *r)
{
    const hm_thread_stats *t = &r->total;
    json_t *d = json_object();
    json_t *outage = json_null();
    if (t->fail_first_ns)
        outage = json_pack("{s:f, s:f, s:f}", "first_failure_s", since_start_s(r, t->fail_first_ns),
                           "last_failure_s", since_start_s(r, t->fail_last_ns), "duration_s",
                           (double)(t->fail_last_ns - t->fail_first_ns) / 1e9);
    json_object_set_new(d, "outage", outage);
    json_object_set_new(d, "context_lost", json_integer((json_int_t)t->ctx_lost));
    json_object_set_new(d, "reloads", json_integer((json_int_t)t->reloads));
    json_object_set_new(d, "reload_failures", json_integer((json_int_t)t->reload_failed));
    json_object_set_new(d, "swallowed_actions", json_integer((json_int_t)t->swallowed));
    json_object_set_new(d, "reconnects", json_integer((json_int_t)t->reconnects));
    json_object_set_new(d, "connect_failures", json_integer((json_int_t)t->connect_failed));
    json_object_set_new(d, "recovery_us", latency_json(&t->recovery_us));
    return d;
}

json_t *hm_report_json(const hm_results *r)
{
    const hm_thread_stats *t = &r->total;
    json_t *root = json_object();
    json_object_set_new(root, "schema", json_integer(HM_JSON_SCHEMA));
    json_object_set_new(root, "hammer_version", json_string(HM_VERSION));
    json_object_set_new(root, "started", rfc3339(r->started));
    json_t *argv = json_array();
    for (int i = 0; i < r->argc; i++)
        json_array_append_new(argv, hm_json_text(r->argv[i]));
    json_object_set_new(root, "command_line", argv);
    json_object_set_new(root, "options", r->options ? json_deep_copy(r->options) : json_object());
    json_object_set_new(root, "scenario", hm_json_text(r->scenario));
    json_object_set_new(root, "target", hm_json_text(r->target));
    json_object_set_new(root, "engine", json_string(r->engine));
    json_object_set_new(root, "threads", json_integer(r->threads));
    json_object_set_new(root, "concurrency", json_integer(r->concurrency));
    json_object_set_new(root, "interrupted", json_boolean(r->interrupted));
    json_object_set_new(root, "interrupted_at_s",
                        r->interrupted ? json_real(r->interrupted_at_s) : json_null());
    hm_verdict verdict;
    hm_results_verdict(r, &verdict);
    json_object_set_new(root, "passed", json_boolean(verdict.passed));
    json_t *result = json_object(), *why = json_array();
    for (int i = 0; i < verdict.n; i++)
        json_array_append_new(why, hm_json_text(verdict.reasons[i]));
    if (verdict.n_dropped)
        json_array_append_new(why, json_sprintf("and %d more", verdict.n_dropped));
    json_object_set_new(result, "passed", json_boolean(verdict.passed));
    json_object_set_new(result, "reasons", why);
    json_object_set_new(root, "result", result);
    json_object_set_new(root, "fatal", hm_json_text(r->fatal));

    json_t *actions = json_object();
    json_object_set_new(actions, "sent", json_integer((json_int_t)t->sent));
    json_object_set_new(actions, "ok", json_integer((json_int_t)t->ok));
    json_object_set_new(actions, "failed", json_integer((json_int_t)t->failed));
    json_t *by_status = json_object();
    for (int s = 0; s < HM_STATUS_MAX; s++) {
        if (!t->by_status[s]) continue;
        char key[8];
        snprintf(key, sizeof(key), "%d", s);
        json_object_set_new(by_status, key, json_integer((json_int_t)t->by_status[s]));
    }
    json_object_set_new(actions, "by_status", by_status);
    json_object_set_new(root, "actions", actions);

    json_t *errors = json_object();
    for (int k = 1; k < HM_FAIL__COUNT; k++)
        json_object_set_new(errors, hm_fail_kind_name((hm_fail_kind)k),
                            json_integer((json_int_t)t->by_fail[k]));
    json_object_set_new(root, "errors", errors);
    json_t *reasons = json_object();
    for (int k = 1; k < HM_FAIL__COUNT; k++)
        if (t->by_fail[k] && t->fail_first[k].reason[0])
            json_object_set_new(reasons, hm_fail_kind_name((hm_fail_kind)k),
                                example_json(&t->fail_first[k], NULL));
    json_object_set_new(root, "error_reasons", reasons);
    json_t *status_ex = json_object();
    for (int i = 0; i < HM_STATUS_EXAMPLES && t->status_first_code[i]; i++) {
        char key[8];
        snprintf(key, sizeof(key), "%d", t->status_first_code[i]);
        json_object_set_new(status_ex, key, example_json(&t->status_first[i], NULL));
    }
    json_object_set_new(root, "status_examples", status_ex);
    json_t *sse = json_object();
    json_object_set_new(sse, "opened", json_integer((json_int_t)t->sse_opened));
    json_t *sse_fail = json_object();
    for (int k = 1; k < HM_SSE_FAIL__COUNT; k++)
        json_object_set_new(sse_fail, hm_sse_fail_name((hm_sse_fail)k),
                            json_integer((json_int_t)t->sse_fail[k]));
    json_object_set_new(sse, "failures", sse_fail);
    json_object_set_new(sse, "ended_mid_event", json_integer((json_int_t)t->sse_cut));
    json_object_set_new(sse, "ended_comments_only", json_integer((json_int_t)t->sse_comments_only));
    json_object_set_new(sse, "ended_mid_event_bytes", json_integer((json_int_t)t->sse_cut_bytes));
    json_object_set_new(sse, "first_failure",
                        t->sse_first.reason[0]
                            ? example_json(&t->sse_first, hm_sse_fail_name(t->sse_first_kind))
                            : json_null());
    json_object_set_new(root, "sse", sse);

    json_t *patches = json_object();
    json_object_set_new(patches, "observed", json_integer((json_int_t)r->patches_observed));
    json_object_set_new(patches, "opening", json_integer((json_int_t)r->patches_opening));
    json_object_set_new(patches, "extra", json_integer((json_int_t)r->patches_extra));
    json_object_set_new(patches, "observers", json_integer(r->observers));
    json_object_set_new(patches, "observers_connected", json_integer(r->observers_connected));
    json_object_set_new(root, "patches", patches);

    json_t *sig = json_object();
    json_object_set_new(sig, "name", hm_json_text(r->signal_name));
    json_object_set_new(sig, "baseline",
                        r->has_signal && r->baseline_known ? json_integer(r->baseline)
                                                           : json_null());
    json_object_set_new(
        sig, "final", r->has_signal && r->final_known ? json_integer(r->final_value) : json_null());
    json_object_set_new(sig, "net_increment",
                        r->has_signal && r->baseline_known && r->final_known
                            ? json_integer(r->final_value - r->baseline)
                            : json_null());
    json_object_set_new(sig, "matches_ok", json_boolean(r->has_signal && r->matches_ok));
    json_object_set_new(root, "signal", sig);
    if (r->mode) json_object_set_new(root, "mode", json_string(r->mode));
    json_t *check = json_object();
    json_object_set_new(check, "name", r->has_check ? hm_json_text(r->check_name) : json_null());
    char not_evaluated[300];
    hm_check_state cs = hm_results_check_state(r, not_evaluated, sizeof(not_evaluated));
    json_object_set_new(check, "passed", json_boolean(cs == HM_CHECK_STATE_PASS));
    json_object_set_new(check, "detail", hm_json_text(r->check_detail));
    json_object_set_new(check, "evaluated",
                        json_boolean(cs == HM_CHECK_STATE_PASS || cs == HM_CHECK_STATE_FAIL));
    json_object_set_new(check, "not_evaluated",
                        cs == HM_CHECK_STATE_NOT_EVALUATED ? json_string(not_evaluated)
                                                           : json_null());
    json_object_set_new(root, "check", check);

    json_t *conns = json_object();
    json_object_set_new(conns, "requested", json_integer((json_int_t)r->conns_requested));
    json_object_set_new(conns, "established", json_integer((json_int_t)t->connects));
    json_object_set_new(conns, "reconnects", json_integer((json_int_t)t->reconnects));
    json_object_set_new(conns, "retries", json_integer((json_int_t)t->retries));
    json_object_set_new(conns, "protocol", json_string(r->protocol ? r->protocol : "http/1.1"));
    json_object_set_new(conns, "streams", json_integer(r->streams > 1 ? r->streams : 1));
    json_object_set_new(conns, "failed",
                        json_integer((json_int_t)(t->connect_failed + t->by_fail[HM_FAIL_CONNECT] +
                                                  t->by_fail[HM_FAIL_TLS])));
    json_object_set_new(root, "connections", conns);
    json_t *tls = json_object();
    json_object_set_new(tls, "enabled", json_boolean(r->tls));
    json_object_set_new(tls, "verified", json_boolean(r->tls && !r->tls_insecure));
    json_object_set_new(tls, "full_handshakes", json_integer((json_int_t)t->tls_full));
    json_object_set_new(tls, "resumed_handshakes", json_integer((json_int_t)t->tls_resumed));
    json_object_set_new(tls, "unfinished_handshakes", json_integer((json_int_t)t->tls_unfinished));
    json_t *tf = json_object();
    for (int k = 1; k < (int)HM_ARRAY_LEN(t->tls_fail); k++)
        json_object_set_new(tf, hm_tls_fail_name((hm_tls_fail)k),
                            json_integer((json_int_t)t->tls_fail[k]));
    json_object_set_new(tls, "failures", tf);
    json_object_set_new(tls, "first_failure",
                        t->tls_first_reason[0] ? hm_json_text(t->tls_first_reason) : json_null());
    json_object_set_new(root, "tls", tls);
    json_object_set_new(root, "disruption", disruption_json(r));

    if (r->n_variants) {
        json_t *vars = json_object();
        for (int i = 0; i < r->n_variants; i++) {
            const hm_variant_result *v = &r->variants[i];
            json_t *o = json_object(), *bs = json_object(), *ws = json_object();
            json_object_set_new(o, "sent", json_integer((json_int_t)v->stats.sent));
            json_object_set_new(o, "ok", json_integer((json_int_t)v->stats.ok));
            json_object_set_new(o, "ok_pct", json_real(pct(v->stats.ok, v->stats.sent)));
            for (int s = 0; s < HM_STATUS_MAX; s++) {
                if (!v->stats.by_status[s]) continue;
                char key[8];
                snprintf(key, sizeof(key), "%d", s);
                json_object_set_new(bs, key, json_integer((json_int_t)v->stats.by_status[s]));
            }
            for (int w = 0; w < HM_MAX_WORKERS; w++) {
                if (!v->workers[w]) continue;
                char key[8];
                snprintf(key, sizeof(key), "%d", w);
                json_object_set_new(ws, key, json_integer((json_int_t)v->workers[w]));
            }
            json_object_set_new(o, "by_status", bs);
            json_object_set_new(o, "workers", ws);
            json_object_set_new(o, "sse_ok", json_integer((json_int_t)v->sse_ok));
            json_object_set_new(o, "sse_failed", json_integer((json_int_t)v->sse_failed));
            json_t *so = json_object();
            for (int k = 0; k < HM_SSE_OUTCOME__COUNT; k++)
                json_object_set_new(so, hm_sse_outcome_name((hm_sse_outcome)k),
                                    json_integer((json_int_t)v->sse_outcome[k]));
            json_object_set_new(o, "sse_outcomes", so);
            json_object_set_new(
                o, "throughput_rps",
                json_real(v->wall_seconds > 0 ? (double)v->stats.sent / v->wall_seconds : 0));
            json_object_set_new(o, "latency_us", latency_json(&v->stats.action_us));
            json_object_set_new(vars, v->name, o);
        }
        json_object_set_new(root, "variants", vars);
        json_object_set_new(root, "sticky",
                            json_pack("{s:o}", "diagnosis",
                                      r->variants_diagnosis[0] ? hm_json_text(r->variants_diagnosis)
                                                               : json_null()));
    }
    json_t *ths = json_array();
    for (int i = 0; i < r->n_thresholds; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "threshold", hm_json_text(r->thresholds[i].text));
        json_object_set_new(o, "passed", json_boolean(r->thresholds[i].passed));
        json_object_set_new(o, "value", json_real(r->thresholds[i].value));
        json_array_append_new(ths, o);
    }
    json_object_set_new(root, "thresholds", ths);
    json_t *rate = json_object();
    json_object_set_new(rate, "target", json_real(r->rate_target));
    json_object_set_new(rate, "client_cpu_pct", json_real(r->client_cpu_pct));
    json_object_set_new(root, "rate", rate);
    json_object_set_new(root, "wall_seconds", json_real(r->wall_seconds));
    json_object_set_new(root, "throughput_rps",
                        json_real(r->wall_seconds > 0 ? (double)t->sent / r->wall_seconds : 0));
    json_object_set_new(
        root, "bytes",
        json_pack("{s:I, s:I, s:f, s:I, s:I}", "read", (json_int_t)t->bytes_read, "written",
                  (json_int_t)t->bytes_written, "read_per_s",
                  r->wall_seconds > 0 ? (double)t->bytes_read / r->wall_seconds : 0.0, "compressed",
                  (json_int_t)t->coded_wire, "decompressed", (json_int_t)t->coded_decoded));
    json_t *lat = json_object();
    for (int p = 0; p < HM_PHASE__COUNT; p++) {
        /* Service latency differs from the action's only with -R. */
        if (p == HM_PHASE_SERVICE && !(r->rate_target > 0)) continue;
        json_object_set_new(lat, hm_phase_name((hm_phase)p),
                            latency_json(hm_thread_stats_hist_c(t, (hm_phase)p)));
    }
    json_object_set_new(root, "latency_us", lat);
    if (r->steps) hm_steps_json(root, r->steps);
    json_object_set_new(root, "interval_s", json_real(r->intervals.interval_s));
    json_t *iv = json_array();
    for (size_t i = 0; i < r->intervals.n; i++)
        json_array_append_new(iv, interval_json(&r->intervals, &r->intervals.points[i]));
    json_object_set_new(root, "intervals", iv);
    json_t *watch = server_watch_json(r);
    if (watch) json_object_set_new(root, "server_watch", watch);
    for (int src = 0; src < HM_RES__SOURCES; src++) {
        json_t *res = hm_resources_json(r, (hm_res_source)src);
        if (res) json_object_set_new(root, hm_res_names_of((hm_res_source)src)->json_key, res);
    }
    return root;
}

/* DBL_DIG significant digits: any number written with that many reads
 * back as written, and a wall-clock time in epoch seconds (the shard's
 * start_at and started) keeps 10 µs, where 12 digits kept only 10 ms. */
static int dump_json(FILE *f, void *root)
{
    return json_dumpf(root, f, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(DBL_DIG)) == 0
               ? 0
               : -ENOMEM;
}

int hm_json_write_atomic(const char *path, json_t *root)
{
    return hm_file_replace(path, dump_json, root);
}

int hm_report_write_json(const char *path, const hm_results *r)
{
    json_t *root = hm_report_json(r);
    int rc = hm_json_write_atomic(path, root);
    json_decref(root);
    return rc;
}

static double change_pct(double from, double to)
{
    return from > 0 ? 100.0 * (to - from) / from : 0;
}

static double rps_of(const hm_results *r)
{
    return r->wall_seconds > 0 ? (double)r->total.sent / r->wall_seconds : 0;
}

void hm_report_print_passes(FILE *f, const hm_results *runs, int n)
{
    fprintf(f, "\n%-16s %12s %8s %10s %10s\n", "pass", "actions/s", "OK %", "p50", "p99");
    for (int i = 0; i < n; i++) {
        const hm_thread_stats *t = &runs[i].total;
        char p50[32], p99[32];
        hm_format_us(p50, sizeof(p50), (double)hm_hdr_value_at_percentile(&t->action_us, 50), 10);
        hm_format_us(p99, sizeof(p99), (double)hm_hdr_value_at_percentile(&t->action_us, 99), 10);
        fprintf(f, "%-16s %12.1f %7.2f%% %s %s\n", runs[i].pass, rps_of(&runs[i]),
                pct(t->ok, t->sent), p50, p99);
    }
    for (int i = 1; i < n; i++)
        fprintf(f, "%s -> %s: throughput %+.1f%%, p99 %+.1f%%\n", runs[i - 1].pass, runs[i].pass,
                change_pct(rps_of(&runs[i - 1]), rps_of(&runs[i])),
                change_pct((double)hm_hdr_value_at_percentile(&runs[i - 1].total.action_us, 99),
                           (double)hm_hdr_value_at_percentile(&runs[i].total.action_us, 99)));
}

json_t *hm_report_passes_json(const hm_results *runs, int n)
{
    json_t *root = json_object(), *arr = json_array(), *changes = json_array();
    for (int i = 0; i < n; i++) {
        json_t *one = hm_report_json(&runs[i]);
        json_object_set_new(one, "pass", hm_json_text(runs[i].pass));
        json_array_append_new(arr, one);
    }
    for (int i = 1; i < n; i++) {
        json_t *c = json_object();
        json_object_set_new(c, "from", hm_json_text(runs[i - 1].pass));
        json_object_set_new(c, "to", hm_json_text(runs[i].pass));
        json_object_set_new(c, "throughput_pct",
                            json_real(change_pct(rps_of(&runs[i - 1]), rps_of(&runs[i]))));
        json_object_set_new(
            c, "p99_pct",
            json_real(
                change_pct((double)hm_hdr_value_at_percentile(&runs[i - 1].total.action_us, 99),
                           (double)hm_hdr_value_at_percentile(&runs[i].total.action_us, 99))));
        json_array_append_new(changes, c);
    }
    json_object_set_new(root, "passes", arr);
    json_object_set_new(root, "changes", changes);
    bool all = n > 0;
    for (int i = 0; i < n; i++)
        all = all && hm_results_passed(&runs[i]);
    json_object_set_new(root, "passed", json_boolean(all));
    return root;
}
