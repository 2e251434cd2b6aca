/* Per-thread counters, their merge, and the summary and JSON reports. */
#include "stats/results.h"

#include "stats/hdr_json.h"
#include "stats/steps.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int hm_thread_stats_init(hm_thread_stats *s)
{
    memset(s, 0, sizeof(*s));
    hm_hdr *h[] = {&s->action_us, &s->patch_us,    &s->connect_us, &s->page_us,
                   &s->tls_us,    &s->interval_us, &s->service_us};
    for (size_t i = 0; i < HM_ARRAY_LEN(h); i++) {
        int rc = hm_hdr_init(h[i], 1, HM_HDR_HIGHEST_US, 3);
        if (rc < 0) {
            hm_thread_stats_destroy(s);
            return rc;
        }
    }
    return 0;
}

void hm_thread_stats_destroy(hm_thread_stats *s)
{
    hm_hdr_destroy(&s->action_us);
    hm_hdr_destroy(&s->patch_us);
    hm_hdr_destroy(&s->connect_us);
    hm_hdr_destroy(&s->page_us);
    hm_hdr_destroy(&s->tls_us);
    hm_hdr_destroy(&s->interval_us);
    hm_hdr_destroy(&s->service_us);
}

void hm_thread_stats_record_scheduled(hm_thread_stats *s, int64_t corrected_us, int64_t service_us)
{
    hm_thread_stats_record_action(s, corrected_us);
    hm_hdr_record(&s->service_us, service_us);
}

void hm_thread_stats_record_action(hm_thread_stats *s, int64_t us)
{
    hm_hdr_record(&s->action_us, us);
    /* Uncontended except once per interval, when the reporter swaps. */
    while (atomic_flag_test_and_set_explicit(&s->interval_lock, memory_order_acquire)) {
    }
    hm_hdr_record(&s->interval_us, us);
    atomic_flag_clear_explicit(&s->interval_lock, memory_order_release);
}

void hm_thread_stats_merge(hm_thread_stats *dst, const hm_thread_stats *src)
{
    hm_hdr_add(&dst->action_us, &src->action_us);
    hm_hdr_add(&dst->service_us, &src->service_us);
    hm_hdr_add(&dst->patch_us, &src->patch_us);
    hm_hdr_add(&dst->connect_us, &src->connect_us);
    hm_hdr_add(&dst->page_us, &src->page_us);
    hm_hdr_add(&dst->tls_us, &src->tls_us);
    dst->tls_full += src->tls_full;
    dst->tls_resumed += src->tls_resumed;
    for (size_t i = 0; i < HM_ARRAY_LEN(dst->tls_fail); i++)
        dst->tls_fail[i] += src->tls_fail[i];
    if (!dst->tls_first_reason[0])
        memcpy(dst->tls_first_reason, src->tls_first_reason, sizeof(dst->tls_first_reason));
    dst->sent += src->sent;
    dst->ok += src->ok;
    dst->failed += src->failed;
    for (int i = 0; i < HM_STATUS_MAX; i++)
        dst->by_status[i] += src->by_status[i];
    for (int i = 0; i < HM_FAIL__COUNT; i++)
        dst->by_fail[i] += src->by_fail[i];
    dst->connects += src->connects;
    dst->reconnects += src->reconnects;
    dst->retries += src->retries;
}

void hm_thread_stats_count(hm_thread_stats *s, int status, hm_fail_kind fail)
{
    s->sent++;
    atomic_store_explicit(&s->live_sent, s->sent, memory_order_relaxed);
    if (status >= 200 && status < 300) {
        s->ok++;
        atomic_store_explicit(&s->live_ok, s->ok, memory_order_relaxed);
    } else {
        s->failed++;
    }
    if (status > 0 && status < HM_STATUS_MAX)
        s->by_status[status]++;
    else
        s->by_fail[fail ? fail : HM_FAIL_OTHER]++;
}

static double pct(uint64_t a, uint64_t b);

int hm_threshold_parse(const char *text, hm_threshold *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof(*out));
    out->text = text;
    size_t m = strspn(text, "abcdefghijklmnopqrstuvwxyz_0123456789");
    if (m == 0 || m >= sizeof(out->metric)) goto bad;
    memcpy(out->metric, text, m);
    const char *p = text + m;
    size_t oplen = strspn(p, "<>=");
    if (oplen == 0 || oplen > 2) goto bad;
    memcpy(out->op, p, oplen);
    if (strcmp(out->op, "<") && strcmp(out->op, "<=") && strcmp(out->op, ">") &&
        strcmp(out->op, ">="))
        goto bad;
    p += oplen;
    char *end;
    double v = strtod(p, &end);
    if (end == p) goto bad;
    bool latency = !strcmp(out->metric, "max") || !strcmp(out->metric, "mean") ||
                   (out->metric[0] == 'p' &&
                    strspn(out->metric + 1, "0123456789") == strlen(out->metric + 1)) ||
                   !strncmp(out->metric, "patch_", 6);
    if (latency) {
        if (!strcmp(end, "ms"))
            v *= 1000;
        else if (!strcmp(end, "s"))
            v *= 1e6;
        else if (strcmp(end, "us"))
            goto bad;
    } else if (!strcmp(out->metric, "ok")) {
        if (strcmp(end, "%")) goto bad;
    } else if (!strcmp(out->metric, "rps")) {
        if (*end) goto bad;
    } else {
        goto bad;
    }
    out->limit = v;
    return 0;
bad:
    snprintf(why, whylen,
             "bad --threshold '%s' (e.g. p99<50ms, patch_p99<200ms, max<1s, mean<5ms, "
             "ok>=100%%, rps>=1000)",
             text);
    return -EINVAL;
}

static double latency_metric(const hm_hdr *h, const char *m)
{
    if (!strcmp(m, "max")) return (double)hm_hdr_max(h);
    if (!strcmp(m, "mean")) return hm_hdr_mean(h);
    /* pNN: p50, p90, p99, p999 (99.9), p9999 (99.99) */
    const char *d = m + 1;
    double pct = strlen(d) <= 2 ? atof(d) : atof(d) / pow(10, (double)strlen(d) - 2);
    return (double)hm_hdr_value_at_percentile(h, pct);
}

void hm_threshold_evaluate(hm_threshold *th, const hm_hdr *action, const hm_hdr *patch, uint64_t ok,
                           uint64_t sent, double wall_seconds)
{
    const char *m = th->metric;
    if (!strcmp(m, "ok"))
        th->value = pct(ok, sent);
    else if (!strcmp(m, "rps"))
        th->value = wall_seconds > 0 ? (double)sent / wall_seconds : 0;
    else if (!strncmp(m, "patch_", 6))
        th->value = latency_metric(patch, m + 6);
    else
        th->value = latency_metric(action, m);
    double v = th->value, l = th->limit;
    th->passed = !strcmp(th->op, "<")    ? v < l
                 : !strcmp(th->op, "<=") ? v <= l
                 : !strcmp(th->op, ">")  ? v > l
                                         : v >= l;
}

void hm_thresholds_evaluate(hm_results *r)
{
    const hm_thread_stats *t = &r->total;
    for (int i = 0; i < r->n_thresholds; i++)
        hm_threshold_evaluate(&r->thresholds[i], &t->action_us, &t->patch_us, t->ok, t->sent,
                              r->wall_seconds);
}

bool hm_results_passed(const hm_results *r)
{
    for (int i = 0; i < r->n_thresholds; i++)
        if (!r->thresholds[i].passed) return false;
    if (r->fatal || r->interrupted) return false;
    if (r->total.sent == 0) return false;
    if (r->total.failed > 0 && !r->total_is_informational) return false;
    if (r->has_signal && !r->matches_ok) return false;
    if (r->has_check && !r->check_passed) return false;
    return hm_steps_passed(r->steps);
}

static double pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void print_latency_row(FILE *f, const char *name, const hm_hdr *h)
{
    if (hm_hdr_count(h) == 0) {
        fprintf(f, "  %-14s %9s\n", name, "-");
        return;
    }
    double q[] = {50, 90, 99, 99.9};
    fprintf(f, "  %-14s", name);
    for (size_t i = 0; i < HM_ARRAY_LEN(q); i++)
        fprintf(f, " %9.3f", (double)hm_hdr_value_at_percentile(h, q[i]) / 1000.0);
    fprintf(f, " %9.3f %9.3f %9lld\n", (double)hm_hdr_max(h) / 1000.0, hm_hdr_mean(h) / 1000.0,
            (long long)hm_hdr_count(h));
}

static void print_variants(FILE *f, const hm_results *r)
{
    fprintf(f, "\n%-10s %8s %8s %8s %9s %9s %9s  %-22s %s\n", "variant", "sent", "OK", "OK %",
            "actions/s", "p50 ms", "p99 ms", "failures", "per worker (X-Via-Worker)");
    for (int i = 0; i < r->n_variants; i++) {
        const hm_variant_result *v = &r->variants[i];
        const hm_thread_stats *t = &v->stats;
        char fails[128] = "", workers[256] = "";
        size_t n = 0;
        for (int s = 0; s < HM_STATUS_MAX && n < sizeof(fails) - 24; s++)
            if (t->by_status[s] && (s < 200 || s >= 300))
                n += (size_t)snprintf(fails + n, sizeof(fails) - n, "%s%d×%llu", n ? " " : "", s,
                                      (unsigned long long)t->by_status[s]);
        for (int k = 1; k < HM_FAIL__COUNT && n < sizeof(fails) - 24; k++)
            if (t->by_fail[k])
                n += (size_t)snprintf(fails + n, sizeof(fails) - n, "%s%s×%llu", n ? " " : "",
                                      hm_fail_kind_name((hm_fail_kind)k),
                                      (unsigned long long)t->by_fail[k]);
        n = 0;
        for (int w = 0; w < HM_MAX_WORKERS && n < sizeof(workers) - 24; w++)
            if (v->workers[w])
                n += (size_t)snprintf(workers + n, sizeof(workers) - n, "%s%d:%llu", n ? " " : "",
                                      w, (unsigned long long)v->workers[w]);
        fprintf(f, "%-10s %8llu %8llu %7.2f%% %9.0f %9.3f %9.3f  %-22s %s\n", v->name,
                (unsigned long long)t->sent, (unsigned long long)t->ok, pct(t->ok, t->sent),
                v->wall_seconds > 0 ? (double)t->sent / v->wall_seconds : 0.0,
                (double)hm_hdr_value_at_percentile(&t->action_us, 50) / 1000.0,
                (double)hm_hdr_value_at_percentile(&t->action_us, 99) / 1000.0,
                fails[0] ? fails : "none", workers[0] ? workers : "-");
    }
    fputc('\n', f);
}

void hm_report_print(FILE *f, const hm_results *r)
{
    const hm_thread_stats *t = &r->total;
    fprintf(f, "\n=== hammer %s: scenario %s%s%s ===\n", HM_VERSION, r->scenario,
            r->pass && strcmp(r->pass, "run") ? ", pass " : "",
            r->pass && strcmp(r->pass, "run") ? r->pass : "");
    fprintf(f, "Target            %s%s%s%s\n", r->target, r->target_note ? " (" : "",
            r->target_note ? r->target_note : "", r->target_note ? ")" : "");
    fprintf(f, "Engine            %s, %d thread%s, %d %s%s%s\n", r->engine, r->threads,
            r->threads == 1 ? "" : "s", r->concurrency,
            r->mode && !strcmp(r->mode, "browser") ? "virtual users" : "connections",
            r->mode ? ", mode " : "", r->mode ? r->mode : "");
    if (r->fatal) fprintf(f, "FAILED            %s\n", r->fatal);
    if (r->interrupted) fprintf(f, "Interrupted       yes (results so far)\n");
    const char *unit = r->unit ? r->unit : "requests";
    fprintf(f, "%-17s %llu\n", strcmp(unit, "actions") ? "Requests sent" : "Actions sent",
            (unsigned long long)t->sent);
    fprintf(f, "HTTP OK           %llu (%.2f%%)\n", (unsigned long long)t->ok, pct(t->ok, t->sent));
    if (t->failed) {
        fprintf(f, "Errors            %llu:", (unsigned long long)t->failed);
        for (int s = 0; s < HM_STATUS_MAX; s++)
            if (t->by_status[s] && (s < 200 || s >= 300))
                fprintf(f, " HTTP %d ×%llu", s, (unsigned long long)t->by_status[s]);
        for (int k = 1; k < HM_FAIL__COUNT; k++)
            if (t->by_fail[k])
                fprintf(f, " %s ×%llu", hm_fail_kind_name((hm_fail_kind)k),
                        (unsigned long long)t->by_fail[k]);
        fputc('\n', f);
    } else {
        fprintf(f, "Errors            none\n");
    }
    if (r->has_patches)
        fprintf(f, "Patches observed  %llu (%.2f%% of OK; %d/%d observers connected)\n",
                (unsigned long long)r->patches_observed, pct(r->patches_observed, t->ok),
                r->observers_connected, r->observers);
    if (r->has_signal) {
        if (r->baseline_known && r->final_known)
            fprintf(f, "Net increment     %lld (%s: %lld -> %lld), matches HTTP OK: %s\n",
                    (long long)(r->final_value - r->baseline), r->signal_name,
                    (long long)r->baseline, (long long)r->final_value,
                    r->matches_ok ? "YES" : "NO");
        else
            fprintf(f, "Net increment     unknown (%s not observed), matches HTTP OK: NO\n",
                    r->signal_name);
    }
    if (r->has_check)
        fprintf(f, "Check             %s: %s%s%s\n", r->check_name,
                r->check_passed ? "PASS" : "FAIL", r->check_detail[0] ? " — " : "",
                r->check_detail);
    fprintf(f, "Connections       %llu requested, %llu established, %llu reconnects, %llu failed\n",
            (unsigned long long)r->conns_requested, (unsigned long long)t->connects,
            (unsigned long long)t->reconnects,
            (unsigned long long)(t->by_fail[HM_FAIL_CONNECT] + t->by_fail[HM_FAIL_TLS]));
    if (r->tls)
        fprintf(f, "TLS               %llu full + %llu resumed handshakes%s\n",
                (unsigned long long)t->tls_full, (unsigned long long)t->tls_resumed,
                r->tls_insecure ? "; certificate NOT verified (-k)" : "; certificate verified");
    if (r->tls) {
        uint64_t nf = 0;
        for (size_t i = 1; i < HM_ARRAY_LEN(t->tls_fail); i++)
            nf += t->tls_fail[i];
        if (nf) {
            fprintf(f, "TLS failures      %llu:", (unsigned long long)nf);
            for (int k = 1; k < (int)HM_ARRAY_LEN(t->tls_fail); k++)
                if (t->tls_fail[k])
                    fprintf(f, " %s ×%llu", hm_tls_fail_name((hm_tls_fail)k),
                            (unsigned long long)t->tls_fail[k]);
            fprintf(f, " (first: %s)\n", t->tls_first_reason);
        }
    }
    fprintf(f, "Wall time         %.3f s\n", r->wall_seconds);
    double achieved = r->wall_seconds > 0 ? (double)t->sent / r->wall_seconds : 0.0;
    fprintf(f, "Throughput        %.1f %s/s", achieved, unit);
    if (r->rate_target > 0) fprintf(f, " (target %.0f/s, open loop)", r->rate_target);
    fputc('\n', f);
    if (r->rate_target > 0 && achieved < 0.95 * r->rate_target)
        fprintf(f,
                "WARNING           achieved %.0f of the target %.0f %s/s; hammer's threads were "
                "%s (%.0f%% CPU): %s\n",
                achieved, r->rate_target, unit,
                r->client_cpu_pct > 90 ? "saturated" : "not saturated", r->client_cpu_pct,
                r->client_cpu_pct > 90
                    ? "add threads (-t) or lower -R"
                    : "the server (or -c too small for its latency) is the limit");
    fprintf(f, "Latency (ms)        %9s %9s %9s %9s %9s %9s %9s\n", "p50", "p90", "p99", "p99.9",
            "max", "mean", "count");
    if (r->rate_target > 0) {
        print_latency_row(f, "corrected", &t->action_us);
        print_latency_row(f, "service", &t->service_us);
    } else {
        print_latency_row(f, strcmp(unit, "actions") ? "request" : "action", &t->action_us);
    }
    if (r->has_patches) print_latency_row(f, "action->patch", &t->patch_us);
    if (hm_hdr_count(&t->page_us)) print_latency_row(f, "page load", &t->page_us);
    print_latency_row(f, "connect", &t->connect_us);
    if (r->tls) print_latency_row(f, "TLS handshake", &t->tls_us);
    if (r->n_variants) print_variants(f, r);
    hm_steps_print(f, r->steps);
    for (int i = 0; i < r->n_thresholds; i++) {
        const hm_threshold *th = &r->thresholds[i];
        bool lat = strcmp(th->metric, "ok") && strcmp(th->metric, "rps");
        fprintf(f, "Threshold         %-20s %s (measured %.3f%s)\n", th->text,
                th->passed ? "PASS" : "FAIL", lat ? th->value / 1000.0 : th->value,
                lat                         ? " ms"
                : !strcmp(th->metric, "ok") ? "%"
                                            : "/s");
    }
    fprintf(f, "Result            %s\n", hm_results_passed(r) ? "PASS" : "FAIL");
}

/* Every histogram carries its V2 encoding too, so runs merge losslessly. */
static json_t *latency_json(const hm_hdr *h)
{
    return hm_hdr_json(h);
}

json_t *hm_report_json(const hm_results *r)
{
    const hm_thread_stats *t = &r->total;
    json_t *root = json_object();
    json_object_set_new(root, "hammer_version", json_string(HM_VERSION));
    json_object_set_new(root, "scenario", json_string(r->scenario));
    if (r->pass) json_object_set_new(root, "pass", json_string(r->pass));
    json_object_set_new(root, "target", json_string(r->target));
    json_object_set_new(root, "engine", json_string(r->engine));
    json_object_set_new(root, "threads", json_integer(r->threads));
    json_object_set_new(root, "concurrency", json_integer(r->concurrency));
    json_object_set_new(root, "interrupted", json_boolean(r->interrupted));
    json_object_set_new(root, "passed", json_boolean(hm_results_passed(r)));
    json_object_set_new(root, "fatal", r->fatal ? json_string(r->fatal) : json_null());

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

    json_t *patches = json_object();
    json_object_set_new(patches, "observed", json_integer((json_int_t)r->patches_observed));
    json_object_set_new(patches, "observers", json_integer(r->observers));
    json_object_set_new(patches, "observers_connected", json_integer(r->observers_connected));
    json_object_set_new(root, "patches", patches);

    json_t *sig = json_object();
    json_object_set_new(sig, "name", r->signal_name ? json_string(r->signal_name) : json_null());
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
    json_object_set_new(check, "name", r->has_check ? json_string(r->check_name) : json_null());
    json_object_set_new(check, "passed", json_boolean(r->has_check && r->check_passed));
    json_object_set_new(check, "detail", json_string(r->check_detail));
    json_object_set_new(root, "check", check);

    json_t *conns = json_object();
    json_object_set_new(conns, "requested", json_integer((json_int_t)r->conns_requested));
    json_object_set_new(conns, "established", json_integer((json_int_t)t->connects));
    json_object_set_new(conns, "reconnects", json_integer((json_int_t)t->reconnects));
    json_object_set_new(conns, "retries", json_integer((json_int_t)t->retries));
    json_object_set_new(
        conns, "failed",
        json_integer((json_int_t)(t->by_fail[HM_FAIL_CONNECT] + t->by_fail[HM_FAIL_TLS])));
    json_object_set_new(root, "connections", conns);
    json_t *tls = json_object();
    json_object_set_new(tls, "enabled", json_boolean(r->tls));
    json_object_set_new(tls, "verified", json_boolean(r->tls && !r->tls_insecure));
    json_object_set_new(tls, "full_handshakes", json_integer((json_int_t)t->tls_full));
    json_object_set_new(tls, "resumed_handshakes", json_integer((json_int_t)t->tls_resumed));
    json_t *tf = json_object();
    for (int k = 1; k < (int)HM_ARRAY_LEN(t->tls_fail); k++)
        json_object_set_new(tf, hm_tls_fail_name((hm_tls_fail)k),
                            json_integer((json_int_t)t->tls_fail[k]));
    json_object_set_new(tls, "failures", tf);
    json_object_set_new(tls, "first_failure",
                        t->tls_first_reason[0] ? json_string(t->tls_first_reason) : json_null());
    json_object_set_new(root, "tls", tls);

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
            json_object_set_new(
                o, "throughput_rps",
                json_real(v->wall_seconds > 0 ? (double)v->stats.sent / v->wall_seconds : 0));
            json_object_set_new(o, "latency_us", latency_json(&v->stats.action_us));
            json_object_set_new(vars, v->name, o);
        }
        json_object_set_new(root, "variants", vars);
    }
    json_t *ths = json_array();
    for (int i = 0; i < r->n_thresholds; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "threshold", json_string(r->thresholds[i].text));
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
    json_t *lat = json_object();
    json_object_set_new(lat, "action", latency_json(&t->action_us));
    json_object_set_new(lat, "service", latency_json(&t->service_us));
    json_object_set_new(lat, "patch", latency_json(&t->patch_us));
    json_object_set_new(lat, "page", latency_json(&t->page_us));
    json_object_set_new(lat, "connect", latency_json(&t->connect_us));
    json_object_set_new(lat, "tls_handshake", latency_json(&t->tls_us));
    json_object_set_new(root, "latency_us", lat);
    if (r->steps) hm_steps_json(root, r->steps);
    return root;
}

int hm_json_write_atomic(const char *path, json_t *root)
{
    /* Write beside the target and rename, so a reader never sees half a file. */
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int rc = json_dump_file(root, tmp, JSON_INDENT(2) | JSON_SORT_KEYS);
    if (rc != 0) return -EIO;
    if (rename(tmp, path) != 0) {
        int e = -errno;
        unlink(tmp);
        return e;
    }
    return 0;
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
    fprintf(f, "\n%-16s %12s %8s %10s %10s\n", "pass", "actions/s", "OK %", "p50 ms", "p99 ms");
    for (int i = 0; i < n; i++) {
        const hm_thread_stats *t = &runs[i].total;
        fprintf(f, "%-16s %12.1f %7.2f%% %10.3f %10.3f\n", runs[i].pass, rps_of(&runs[i]),
                pct(t->ok, t->sent), (double)hm_hdr_value_at_percentile(&t->action_us, 50) / 1e3,
                (double)hm_hdr_value_at_percentile(&t->action_us, 99) / 1e3);
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
        json_object_set_new(one, "pass", json_string(runs[i].pass));
        json_array_append_new(arr, one);
    }
    for (int i = 1; i < n; i++) {
        json_t *c = json_object();
        json_object_set_new(c, "from", json_string(runs[i - 1].pass));
        json_object_set_new(c, "to", json_string(runs[i].pass));
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
