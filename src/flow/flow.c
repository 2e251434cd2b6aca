/* The `flow` scenario: what both load models share to run a flow file —
 * an instance's variables and data rows, values, templates, conditions,
 * the walk through the steps (repeats included), the report's rows — and
 * the scenario's entry points. */
#include "flow/flow.h"

#include "base/hm_base.h"
#include "proto/datastar.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- randomness ------------------------------------------------------------ */

/* xorshift32: each VU (sender) has its own state, so no locks and
 * reproducible per VU. */
static unsigned next_rand(unsigned *s)
{
    unsigned x = *s ? *s : 2463534242u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

double hm_flow_rand01(unsigned *rng)
{
    return (double)next_rand(rng) / 4294967296.0;
}

const hm_flow *hm_flow_pick(const hm_flow_file *f, unsigned *rng)
{
    double r = hm_flow_rand01(rng) * f->total_weight;
    for (int i = 0; i < f->n_flows; i++) {
        if (r < f->flows[i].weight) return &f->flows[i];
        r -= f->flows[i].weight;
    }
    for (int i = f->n_flows - 1; i >= 0; i--) /* rounding at the top end */
        if (f->flows[i].weight > 0) return &f->flows[i];
    return &f->flows[0];
}

/* ---- values ---------------------------------------------------------------- */

/* A CSV cell: a number when it reads as one (JSON's grammar, so "007"
 * stays a string), else the text. */
static json_t *cell_json(const char *cell)
{
    if ((cell[0] == '-' || (cell[0] >= '0' && cell[0] <= '9'))) {
        json_t *j = json_loads(cell, JSON_DECODE_ANY, NULL);
        if (json_is_number(j)) return j;
        json_decref(j);
    }
    return json_string(cell);
}

static const char *csv_cell(const hm_flow_exec *x, int data, int col)
{
    const hm_flow_data *d = &x->file->data[data];
    return d->cells[x->rows[data] * d->n_cols + col];
}

/* A variable or a DATA.COLUMN, as JSON (borrowed for variables, new for
 * cells: *owned says which). */
static json_t *lookup_name(hm_flow_exec *x, const char *name, bool *owned)
{
    *owned = false;
    json_t *v = json_object_get(x->vars, name);
    if (v) return v;
    const char *dot = strchr(name, '.');
    for (int d = 0; dot && d < x->file->n_data; d++) {
        const hm_flow_data *fd = &x->file->data[d];
        if (strlen(fd->name) != (size_t)(dot - name) ||
            strncmp(fd->name, name, (size_t)(dot - name)))
            continue;
        for (int k = 0; k < fd->n_cols; k++)
            if (!strcmp(fd->cols[k], dot + 1)) {
                *owned = true;
                return cell_json(csv_cell(x, d, k));
            }
    }
    return NULL;
}

char *hm_flow_expand(hm_flow_exec *x, const char *tpl)
{
    size_t cap = strlen(tpl) + 64, n = 0;
    char *out = hm_alloc(cap);
    if (!out) return NULL;
    for (const char *p = tpl; *p;) {
        const char *open = strstr(p, "{{"), *close = open ? strstr(open, "}}") : NULL;
        size_t lit = open && close ? (size_t)(open - p) : strlen(p);
        char *piece = NULL;
        const char *add = NULL;
        size_t addl = 0;
        if (open && close) {
            const char *a = open + 2, *b = close;
            while (a < b && *a == ' ')
                a++;
            while (b > a && b[-1] == ' ')
                b--;
            char name[128];
            snprintf(name, sizeof(name), "%.*s", (int)(b - a), a);
            bool owned;
            json_t *v = lookup_name(x, name, &owned);
            if (json_is_string(v))
                piece = strdup(json_string_value(v)); /* v may go before it is copied */
            else if (v)
                piece = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
            if (owned) json_decref(v);
            add = piece;
            addl = add ? strlen(add) : 0;
        }
        if (n + lit + addl + 1 > cap) {
            cap = (n + lit + addl + 1) * 2;
            char *no = hm_realloc(out, cap);
            if (!no) {
                free(piece);
                hm_free(out);
                return NULL;
            }
            out = no;
        }
        memcpy(out + n, p, lit);
        n += lit;
        if (add) memcpy(out + n, add, addl);
        n += addl;
        free(piece);
        p = open && close ? close + 2 : p + lit;
    }
    out[n] = '\0';
    return out;
}

const char *hm_flow_signal_key(json_t *signals, const char *name)
{
    if (!json_is_object(signals)) return NULL;
    if (json_object_get(signals, name)) return name;
    const char *key;
    json_t *val;
    json_object_foreach(signals, key, val)
    {
        if (hm_signal_name_matches(name, key)) return key;
    }
    return NULL;
}

json_t *hm_flow_eval(hm_flow_exec *x, const hm_flow_value *v, char *why, size_t whylen)
{
    switch (v->src) {
    /* The flow's own values are shared by every engine thread: a copy, not
     * a reference, since jansson's json_incref reads the count unlocked
     * beside other threads' atomic updates (a data race, TSan). */
    case HM_FLOW_LITERAL:
        return json_deep_copy(v->json);
    case HM_FLOW_TEMPLATE: {
        char *s = hm_flow_expand(x, v->name);
        json_t *j = s ? json_string(s) : NULL;
        hm_free(s);
        return j;
    }
    case HM_FLOW_VAR: {
        json_t *j = json_object_get(x->vars, v->name);
        if (!j) snprintf(why, whylen, "variable %s has no value yet (set it before)", v->name);
        return json_incref(j);
    }
    case HM_FLOW_CSV:
        return cell_json(csv_cell(x, v->data, v->col));
    case HM_FLOW_RANDOM:
        if (v->integer) {
            uint64_t span = (uint64_t)(v->max - v->min) + 1;
            return json_integer((json_int_t)v->min + (json_int_t)(next_rand(&x->rng) % span));
        }
        return json_real(v->min + hm_flow_rand01(&x->rng) * (v->max - v->min));
    case HM_FLOW_ONE_OF: {
        size_t n = json_array_size(v->json);
        return json_deep_copy(json_array_get(v->json, next_rand(&x->rng) % (n ? n : 1)));
    }
    case HM_FLOW_SIGNAL: {
        const char *key = hm_flow_signal_key(x->signals, v->name);
        if (!key) {
            snprintf(why, whylen, "signal %s not seen on the stream yet", v->name);
            return NULL;
        }
        return json_incref(json_object_get(x->signals, key));
    }
    }
    return NULL;
}

char *hm_flow_action_fields(hm_flow_exec *x, const hm_flow_step *s, json_t *signals,
                            json_t **as_sent, char *why, size_t whylen)
{
    if (as_sent) *as_sent = NULL;
    json_t *o = json_object();
    for (int i = 0; i < s->n_fields; i++) {
        json_t *v = hm_flow_eval(x, &s->fields[i].value, why, whylen);
        if (!v) {
            json_decref(o);
            return NULL;
        }
        /* Sent under the id php-via gave the signal, as Datastar does. */
        const char *key = hm_flow_signal_key(signals, s->fields[i].name);
        json_object_set_new(o, key ? key : s->fields[i].name, v);
    }
    /* The values drawn here are the ones sent: a {random: …} is drawn once. */
    if (as_sent) {
        *as_sent = json_is_object(signals) ? json_deep_copy(signals) : json_object();
        json_object_update(*as_sent, o);
    }
    char *js = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    char *out = js ? hm_strdup(js) : NULL;
    free(js);
    return out;
}

/* ---- conditions ----------------------------------------------------------- */

static char *brief(json_t *v, char *buf, size_t cap)
{
    char *s = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    snprintf(buf, cap, "%.60s%s", s ? s : "nothing", s && strlen(s) > 60 ? "…" : "");
    free(s);
    return buf;
}

static bool same(json_t *a, json_t *b)
{
    if (json_is_number(a) && json_is_number(b)) return json_number_value(a) == json_number_value(b);
    return json_equal(a, b);
}

bool hm_flow_cond_holds(hm_flow_exec *x, const hm_flow_cond *c, json_t *signals, int status,
                        char *why, size_t whylen)
{
    if (c->n_status) {
        for (int i = 0; i < c->n_status; i++)
            if (status == c->status[i]) return true;
        if (status > 0)
            snprintf(why, whylen, "status was %d", status);
        else
            snprintf(why, whylen, "the request failed (%s)",
                     status < 0 ? hm_strerror(status) : "none was made");
        return false;
    }
    if (!c->signal) return true;
    const char *key = hm_flow_signal_key(signals, c->signal);
    if (!key) {
        snprintf(why, whylen, "%s not seen on the stream", c->signal);
        return false;
    }
    json_t *have = json_object_get(signals, key);
    if (c->op == HM_FLOW_OP_NONE) return true;
    json_t *want = hm_flow_eval(x, &c->value, why, whylen);
    if (!want) return false;
    char hb[80], wb[80];
    bool held = false;
    double h = json_number_value(have), w = json_number_value(want);
    bool nums = json_is_number(have) && json_is_number(want);
    switch (c->op) {
    case HM_FLOW_OP_EQUALS:
        held = same(have, want);
        break;
    case HM_FLOW_OP_NOT:
        held = !same(have, want);
        break;
    case HM_FLOW_OP_ABOVE:
        held = nums && h > w;
        break;
    case HM_FLOW_OP_BELOW:
        held = nums && h < w;
        break;
    case HM_FLOW_OP_AT_LEAST:
        held = nums && h >= w;
        break;
    case HM_FLOW_OP_AT_MOST:
        held = nums && h <= w;
        break;
    case HM_FLOW_OP_CHANGED_BY: {
        const char *k0 = hm_flow_signal_key(x->at_send, c->signal);
        json_t *before = k0 ? json_object_get(x->at_send, k0) : NULL;
        if (!json_is_number(before) || !nums) {
            json_decref(want);
            snprintf(why, whylen, "%s is %s; it had no numeric value when the last action was sent",
                     c->signal, brief(have, hb, sizeof(hb)));
            return false;
        }
        held = h - json_number_value(before) == w;
        if (!held) {
            char bb[80];
            snprintf(why, whylen,
                     "%s was %s when the last action was sent, is %s (expected changed_by %s: "
                     "%.15g)",
                     c->signal, brief(before, bb, sizeof(bb)), brief(have, hb, sizeof(hb)),
                     brief(want, wb, sizeof(wb)), json_number_value(before) + w);
            json_decref(want);
            return false;
        }
        break;
    }
    case HM_FLOW_OP_CONTAINS: {
        char *hs = json_is_string(have) ? NULL : json_dumps(have, JSON_ENCODE_ANY);
        char *ws = json_is_string(want) ? NULL : json_dumps(want, JSON_ENCODE_ANY);
        held = strstr(hs ? hs : json_string_value(have), ws ? ws : json_string_value(want));
        free(hs);
        free(ws);
        break;
    }
    case HM_FLOW_OP_NONE:
        held = true;
        break;
    }
    if (!held) {
        static const char *const names[] = {"",         "equals",  "not",        "above",   "below",
                                            "at_least", "at_most", "changed_by", "contains"};
        snprintf(why, whylen, "%s is %s (expected %s %s)", c->signal, brief(have, hb, sizeof(hb)),
                 names[c->op], brief(want, wb, sizeof(wb)));
    }
    json_decref(want);
    return held;
}

void hm_flow_expect(hm_flow_exec *x, const hm_flow_step *s)
{
    char why[256] = "", full[320];
    bool held = hm_flow_cond_holds(x, &s->cond, x->signals, x->last_status, why, sizeof(why));
    snprintf(full, sizeof(full), "%s at line %d: %s", s->where, s->line, why);
    hm_steps_check(x->stats, s->check, held, held ? NULL : full);
}

int hm_flow_set(hm_flow_exec *x, const hm_flow_step *s)
{
    for (int i = 0; i < s->n_fields; i++) {
        char why[200];
        json_t *v = hm_flow_eval(x, &s->fields[i].value, why, sizeof(why));
        json_object_set_new(x->vars, s->fields[i].name, v ? v : json_null());
    }
    return HM_FLOW_NEXT;
}

int64_t hm_flow_think_ns(hm_flow_exec *x, const hm_flow_step *s)
{
    if (s->think_max_ns <= s->think_min_ns) return s->think_min_ns;
    return s->think_min_ns +
           (int64_t)(hm_flow_rand01(&x->rng) * (double)(s->think_max_ns - s->think_min_ns));
}

/* ---- an instance -------------------------------------------------------------- */

int hm_flow_exec_start(hm_flow_exec *x, const hm_flow_file *f, const hm_flow *fl, int vu,
                       int64_t iteration)
{
    x->file = f;
    x->flow = fl;
    x->last_status = 0;
    json_decref(x->vars);
    x->vars = json_object();
    if (!x->vars) return -ENOMEM;
    json_decref(x->at_send);
    x->at_send = NULL;
    for (int d = 0; d < f->n_data; d++) {
        hm_flow_data *fd = &f->data[d];
        int64_t k = fd->random ? (int64_t)next_rand(&x->rng) : atomic_fetch_add(fd->next, 1);
        x->rows[d] = (int)(k % fd->n_rows);
    }
    json_object_set_new(x->vars, "vu", json_integer(vu));
    json_object_set_new(x->vars, "iteration", json_integer(iteration));
    for (int i = 0; i < f->n_vars; i++) {
        char why[200];
        json_t *v = hm_flow_eval(x, &f->vars[i].value, why, sizeof(why));
        json_object_set_new(x->vars, f->vars[i].name, v ? v : json_null());
    }
    return 0;
}

void hm_flow_exec_end(hm_flow_exec *x)
{
    json_decref(x->vars);
    json_decref(x->at_send);
    x->vars = x->at_send = NULL;
}

void hm_flow_cursor_start(hm_flow_cursor *cu, const hm_flow_step *steps, int n)
{
    cu->depth = 1;
    cu->frames = cu->inline_frames;
    cu->cap = (int)HM_ARRAY_LEN(cu->inline_frames);
    cu->frames[0] = (hm_flow_frame){.steps = steps, .n = n};
}

void hm_flow_cursor_free(hm_flow_cursor *cu)
{
    if (cu->frames != cu->inline_frames) hm_free(cu->frames);
    cu->frames = cu->inline_frames;
    cu->cap = (int)HM_ARRAY_LEN(cu->inline_frames);
    cu->depth = 0;
}

/* Enters repeat step s: a frame for its block, as if a pass had just
 * ended (the next turn decides whether the first one happens). */
static int cursor_enter(hm_flow_cursor *cu, const hm_flow_step *s)
{
    if (cu->depth == cu->cap) {
        int cap = cu->cap * 2;
        hm_flow_frame *nf = hm_alloc(sizeof(*nf) * (size_t)cap);
        if (!nf) return -ENOMEM;
        memcpy(nf, cu->frames, sizeof(*nf) * (size_t)cu->depth);
        if (cu->frames != cu->inline_frames) hm_free(cu->frames);
        cu->frames = nf;
        cu->cap = cap;
    }
    cu->frames[cu->depth++] =
        (hm_flow_frame){.steps = s->steps, .n = s->n_steps, .i = s->n_steps, .repeat = s};
    return 0;
}

const hm_flow_step *hm_flow_cursor_next(hm_flow_exec *x, hm_flow_cursor *cu, int *rc)
{
    *rc = HM_FLOW_NEXT;
    while (cu->depth > 0) {
        hm_flow_frame *f = &cu->frames[cu->depth - 1];
        if (f->i < f->n) {
            const hm_flow_step *s = &f->steps[f->i++];
            if (s->kind != HM_FLOW_REPEAT) return s;
            if (cursor_enter(cu, s) < 0) {
                *rc = HM_FLOW_STOP; /* out of memory: this VU (sender) ends */
                return NULL;
            }
            continue;
        }
        /* A block ended: the steps given, or one pass of a repeat. */
        const hm_flow_step *r = f->repeat;
        if (!r || (r->times && f->passes >= r->times) ||
            (r->probability < 1 && hm_flow_rand01(&x->rng) >= r->probability)) {
            cu->depth--;
            continue;
        }
        /* "forever" lasts as long as the run's budget. */
        if (!r->times && !x->budget_left(x)) {
            *rc = HM_FLOW_STOP;
            return NULL;
        }
        f->passes++;
        f->i = 0;
    }
    return NULL;
}

int hm_flow_walk(hm_flow_exec *x, const hm_flow_step *steps, int n)
{
    hm_flow_cursor cu;
    hm_flow_cursor_start(&cu, steps, n);
    int rc;
    const hm_flow_step *s;
    while ((s = hm_flow_cursor_next(x, &cu, &rc)) && (rc = x->leaf(x, s)) == HM_FLOW_NEXT)
        ;
    hm_flow_cursor_free(&cu);
    return rc;
}

/* ---- reporting --------------------------------------------------------------- */

int hm_flow_stats_create(const hm_flow_file *f, bool named, hm_steps **out)
{
    int rc = hm_steps_create(out, f->n_rows, f->n_checks);
    for (int i = 0; rc == 0 && named && i < f->n_rows; i++)
        rc = hm_steps_name_row(*out, i, f->row_flow[i], f->row_name[i]);
    for (int i = 0; rc == 0 && named && i < f->n_checks; i++)
        rc = hm_steps_name_check(*out, i, f->check_flow[i], f->check_name[i]);
    /* A flow of weight 0 is never picked: its checks never run, by design. */
    for (int i = 0; rc == 0 && named && i < f->n_checks; i++)
        for (int k = 0; k < f->n_flows; k++)
            if (!(f->flows[k].weight > 0) && !strcmp(f->flows[k].name, f->check_flow[i]))
                (*out)->checks[i].not_run = "its flow has weight 0 (never picked)";
    return rc;
}

const char *hm_flow_check_name(const hm_flow_file *f)
{
    return f->check_text ? f->check_text : "the flow's steps and expectations";
}

/* ---- the scenario --------------------------------------------------------------- */

static int load_checked(const hm_options *o, hm_flow_file **f, char *why, size_t whylen)
{
    if (!o->flow_file) {
        snprintf(why, whylen, "scenario flow reads a flow file: hammer flow FILE.yaml");
        return -EINVAL;
    }
    int rc = hm_flow_load(o->flow_file, f, why, whylen);
    if (rc < 0) return rc;
    if (o->think_min_ns || o->think_max_ns) {
        snprintf(why, whylen,
                 "--think does not apply to flows: %s says when to think (think: "
                 "steps)",
                 o->flow_file);
        rc = -EINVAL;
    } else if (o->actions && !o->duration_ns && !(*f)->has_action) {
        snprintf(why, whylen,
                 "%s fires no action, so -n (a count of actions) would never end "
                 "the run: give -d instead",
                 o->flow_file);
        rc = -EINVAL;
    } else if (!o->browser) {
        rc = hm_flow_check_hammer(*f, why, whylen);
    }
    if (rc < 0) {
        hm_flow_free(*f);
        *f = NULL;
    }
    return rc;
}

int hm_flow_prepare(const hm_options *o, char *why, size_t whylen)
{
    hm_flow_file *f;
    int rc = load_checked(o, &f, why, whylen);
    hm_flow_free(f);
    return rc;
}

/* The report outlives the file (it is read once the run returns): what it
 * names is copied here. One pass runs at a time. */
static char check_name_buf[200], signal_name_buf[128];

int hm_flow_run(const hm_options *o, hm_results *r)
{
    hm_flow_file *f;
    int rc = load_checked(o, &f, r->fatal_buf, sizeof(r->fatal_buf));
    r->mode = o->browser ? "browser" : "hammer";
    if (rc < 0) {
        r->fatal = r->fatal_buf;
        return rc;
    }
    snprintf(check_name_buf, sizeof(check_name_buf), "%s", hm_flow_check_name(f));
    snprintf(signal_name_buf, sizeof(signal_name_buf), "%s",
             f->check_signal ? f->check_signal : "");
    r->check_name = check_name_buf;
    rc = o->browser ? hm_flow_browser_run(o, f, r) : hm_flow_hammer_run(o, f, r);
    r->signal_name = signal_name_buf;
    hm_flow_free(f);
    return rc;
}
