/* A scenario's named latency rows and checks: recording, merging, and
 * their part of the summary and the JSON document. */
#include "stats/steps.h"

#include "base/hm_base.h"
#include "stats/hdr_json.h"
#include "stats/json_text.h"
#include "stats/results.h"

#include <jansson.h>
#include <string.h>

int hm_steps_create(hm_steps **out, int n_rows, int n_checks)
{
    hm_steps *s = hm_calloc(1, sizeof(*s));
    if (!s) return -ENOMEM;
    s->rows = hm_calloc((size_t)(n_rows > 0 ? n_rows : 1), sizeof(*s->rows));
    s->checks = hm_calloc((size_t)(n_checks > 0 ? n_checks : 1), sizeof(*s->checks));
    if (!s->rows || !s->checks) {
        hm_steps_free(s);
        return -ENOMEM;
    }
    for (int i = 0; i < n_rows; i++) {
        if (hm_hdr_init(&s->rows[i].us, 1, HM_HDR_HIGHEST_US, 3) < 0) {
            hm_steps_free(s);
            return -ENOMEM;
        }
        s->n_rows = i + 1;
    }
    s->n_checks = n_checks;
    *out = s;
    return 0;
}

static int set_names(char **flow, char **name, const char *f, const char *n)
{
    *flow = hm_strdup(f ? f : "");
    *name = hm_strdup(n ? n : "");
    return *flow && *name ? 0 : -ENOMEM;
}

int hm_steps_name_row(hm_steps *s, int i, const char *flow, const char *name)
{
    return set_names(&s->rows[i].flow, &s->rows[i].name, flow, name);
}

int hm_steps_name_check(hm_steps *s, int i, const char *flow, const char *name)
{
    return set_names(&s->checks[i].flow, &s->checks[i].name, flow, name);
}

static void keep_first(char *dst, size_t cap, const char *why)
{
    if (!dst[0] && why) snprintf(dst, cap, "%s", why);
}

void hm_steps_record(hm_steps *s, int i, int64_t us, const char *why)
{
    hm_step_row *r = &s->rows[i];
    hm_hdr_record(&r->us, us > 0 ? us : 0);
    r->count++;
    if (why) {
        r->failed++;
        keep_first(r->first_failure, sizeof(r->first_failure), why);
    }
}

void hm_steps_check(hm_steps *s, int i, bool held, const char *why)
{
    hm_check_row *c = &s->checks[i];
    if (held) {
        c->passed++;
        return;
    }
    c->failed++;
    keep_first(c->first_failure, sizeof(c->first_failure), why ? why : "failed");
}

void hm_steps_check_skipped(hm_steps *s, int i, const char *why)
{
    hm_check_row *c = &s->checks[i];
    c->skipped++;
    if (!c->not_run) c->not_run = why;
}

static bool check_evaluated(const hm_check_row *c)
{
    return c->passed || c->failed;
}

/* Never evaluated, and nothing said it never runs by design. */
static bool check_missing(const hm_check_row *c)
{
    return !check_evaluated(c) && !c->not_run;
}

/* Why a check that never ran was not evaluated. */
static const char *not_evaluated_why(const hm_check_row *c)
{
    return c->not_run ? c->not_run : "the run never reached it";
}

void hm_steps_merge(hm_steps *dst, const hm_steps *src)
{
    for (int i = 0; i < dst->n_rows && i < src->n_rows; i++) {
        hm_hdr_add(&dst->rows[i].us, &src->rows[i].us);
        dst->rows[i].count += src->rows[i].count;
        dst->rows[i].failed += src->rows[i].failed;
        keep_first(dst->rows[i].first_failure, sizeof(dst->rows[i].first_failure),
                   src->rows[i].first_failure[0] ? src->rows[i].first_failure : NULL);
    }
    for (int i = 0; i < dst->n_checks && i < src->n_checks; i++) {
        dst->checks[i].passed += src->checks[i].passed;
        dst->checks[i].failed += src->checks[i].failed;
        dst->checks[i].skipped += src->checks[i].skipped;
        if (!dst->checks[i].not_run) dst->checks[i].not_run = src->checks[i].not_run;
        keep_first(dst->checks[i].first_failure, sizeof(dst->checks[i].first_failure),
                   src->checks[i].first_failure[0] ? src->checks[i].first_failure : NULL);
    }
}

void hm_steps_free(hm_steps *s)
{
    if (!s) return;
    for (int i = 0; s->rows && i < s->n_rows; i++) {
        hm_hdr_destroy(&s->rows[i].us);
        hm_free(s->rows[i].flow);
        hm_free(s->rows[i].name);
    }
    for (int i = 0; s->checks && i < s->n_checks; i++) {
        hm_free(s->checks[i].flow);
        hm_free(s->checks[i].name);
    }
    hm_free(s->rows);
    hm_free(s->checks);
    hm_free(s);
}

bool hm_steps_passed(const hm_steps *s)
{
    if (!s) return true;
    for (int i = 0; i < s->n_rows; i++)
        if (s->rows[i].failed) return false;
    for (int i = 0; i < s->n_checks; i++)
        if (s->checks[i].failed || check_missing(&s->checks[i])) return false;
    return true;
}

void hm_steps_verdict(const hm_steps *s, hm_verdict *v)
{
    for (int i = 0; s && i < s->n_rows; i++) {
        const hm_step_row *r = &s->rows[i];
        if (r->failed)
            hm_verdict_add(v, "step '%s' failed %llu of %llu times (first: %s)", r->name,
                           (unsigned long long)r->failed, (unsigned long long)r->count,
                           r->first_failure);
    }
    for (int i = 0; s && i < s->n_checks; i++) {
        const hm_check_row *c = &s->checks[i];
        if (c->failed)
            hm_verdict_add(v, "expectation '%s' failed %llu of %llu times (first: %s)", c->name,
                           (unsigned long long)c->failed,
                           (unsigned long long)(c->failed + c->passed), c->first_failure);
        else if (check_missing(c))
            hm_verdict_add(v, "expectation '%s' not evaluated: %s", c->name, not_evaluated_why(c));
    }
}

/* More than one flow: each row says which. */
static bool several_flows(const hm_steps *s)
{
    for (int i = 1; i < s->n_rows; i++)
        if (strcmp(s->rows[i].flow, s->rows[0].flow)) return true;
    for (int i = 0; i < s->n_checks; i++)
        if (s->n_rows && strcmp(s->checks[i].flow, s->rows[0].flow)) return true;
    return false;
}

static void row_label(char *buf, size_t cap, bool with_flow, const char *flow, const char *name)
{
    if (with_flow)
        snprintf(buf, cap, "%s: %s", flow, name);
    else
        snprintf(buf, cap, "%s", name);
}

void hm_steps_print(FILE *f, const hm_steps *s)
{
    if (!s || (!s->n_rows && !s->n_checks)) return;
    bool with_flow = several_flows(s);
    int width = 14;
    char label[160];
    for (int i = 0; i < s->n_rows; i++) {
        row_label(label, sizeof(label), with_flow, s->rows[i].flow, s->rows[i].name);
        int l = (int)strlen(label);
        if (l > width) width = l < 44 ? l : 44;
    }
    if (s->n_rows) {
        fprintf(f, "Steps (ms)%*s %9s %9s %9s %9s %9s %9s\n", width - 8, "", "p50", "p90", "p99",
                "max", "count", "failed");
        for (int i = 0; i < s->n_rows; i++) {
            const hm_step_row *r = &s->rows[i];
            row_label(label, sizeof(label), with_flow, r->flow, r->name);
            fprintf(f, "  %-*.*s", width, width, label);
            if (hm_hdr_count(&r->us))
                fprintf(f, " %9.3f %9.3f %9.3f %9.3f",
                        (double)hm_hdr_value_at_percentile(&r->us, 50) / 1000.0,
                        (double)hm_hdr_value_at_percentile(&r->us, 90) / 1000.0,
                        (double)hm_hdr_value_at_percentile(&r->us, 99) / 1000.0,
                        (double)hm_hdr_max(&r->us) / 1000.0);
            else
                fprintf(f, " %9s %9s %9s %9s", "-", "-", "-", "-");
            fprintf(f, " %9llu %9llu\n", (unsigned long long)r->count,
                    (unsigned long long)r->failed);
        }
        for (int i = 0; i < s->n_rows; i++)
            if (s->rows[i].failed)
                fprintf(f, "  %s first failure: %s\n", s->rows[i].name, s->rows[i].first_failure);
    }
    if (s->n_checks) {
        fprintf(f, "Checks\n");
        for (int i = 0; i < s->n_checks; i++) {
            const hm_check_row *c = &s->checks[i];
            row_label(label, sizeof(label), with_flow, c->flow, c->name);
            if (!check_evaluated(c)) {
                fprintf(f, "  n/a  %s: not evaluated — %s", label, not_evaluated_why(c));
                if (c->skipped)
                    fprintf(f, " (passed over %llu times)", (unsigned long long)c->skipped);
                fputc('\n', f);
                continue;
            }
            fprintf(f, "  %s %s: %llu held, %llu failed%s%s\n", c->failed ? "FAIL" : "ok  ", label,
                    (unsigned long long)c->passed, (unsigned long long)c->failed,
                    c->failed ? "; first: " : "", c->failed ? c->first_failure : "");
        }
    }
}

void hm_steps_json(json_t *root, const hm_steps *s)
{
    json_t *rows = json_array(), *checks = json_array();
    for (int i = 0; s && i < s->n_rows; i++) {
        const hm_step_row *r = &s->rows[i];
        json_t *o = json_object();
        json_object_set_new(o, "flow", hm_json_text(r->flow));
        json_object_set_new(o, "name", hm_json_text(r->name));
        json_object_set_new(o, "count", json_integer((json_int_t)r->count));
        json_object_set_new(o, "failed", json_integer((json_int_t)r->failed));
        json_object_set_new(o, "first_failure",
                            r->first_failure[0] ? hm_json_text(r->first_failure) : json_null());
        json_object_set_new(o, "latency_us", hm_hdr_json(&r->us));
        json_array_append_new(rows, o);
    }
    for (int i = 0; s && i < s->n_checks; i++) {
        const hm_check_row *c = &s->checks[i];
        json_t *o = json_object();
        json_object_set_new(o, "flow", hm_json_text(c->flow));
        json_object_set_new(o, "name", hm_json_text(c->name));
        json_object_set_new(o, "passed", json_integer((json_int_t)c->passed));
        json_object_set_new(o, "failed", json_integer((json_int_t)c->failed));
        json_object_set_new(o, "first_failure",
                            c->first_failure[0] ? hm_json_text(c->first_failure) : json_null());
        json_object_set_new(o, "evaluated", json_boolean(check_evaluated(c)));
        json_object_set_new(o, "not_evaluated",
                            check_evaluated(c) ? json_null() : json_string(not_evaluated_why(c)));
        json_array_append_new(checks, o);
    }
    json_object_set_new(root, "steps", rows);
    json_object_set_new(root, "checks", checks);
}
