/* Reading a flow file: YAML (libyaml's document API, which keeps each
 * node's line and column) into a hm_flow_file, checked as it goes. Every
 * error says where (FILE:LINE:COL), in which flow and step, and what was
 * expected there. The CSV data files a flow names are read here too. */
#include "scenarios/flow.h"

#include "base/hm_base.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_DATA 8 /* hm_flow_exec.rows */
#define MAX_TEMPLATE_NAME 128

typedef struct pctx {
    const char *path;
    yaml_document_t *doc;
    hm_flow_file *f;
    char *why;
    size_t whylen;
    char where[240]; /* "flow 'x', step 3.2 (action)": the step being read */
    const char *flow_name;
    const hm_flow_step *page; /* the last page step read in this flow */
    bool sse;                 /* an sse step was read after that page */
    /* A page's offers are collected while its flow is read. */
    hm_flow_step **pages;
    int n_pages;
    char **set_names; /* every variable a set step assigns */
    int n_set_names;
} pctx;

/* ---- errors --------------------------------------------------------------- */

static const char *node_kind(const yaml_node_t *n, char *buf, size_t cap)
{
    if (!n) return "nothing";
    if (n->type == YAML_SEQUENCE_NODE) return "a list";
    if (n->type == YAML_MAPPING_NODE) return "a mapping";
    snprintf(buf, cap, "'%.40s%s'", (const char *)n->data.scalar.value,
             n->data.scalar.length > 40 ? "…" : "");
    return buf;
}

/* "FILE:LINE:COL: flow 'x', step 3 (action): <message>". */
static int failv(pctx *c, const yaml_mark_t *m, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    snprintf(c->why, c->whylen, "%s:%zu:%zu: %s%s%s", c->path, m ? m->line + 1 : 1,
             m ? m->column + 1 : 1, c->where, c->where[0] ? ": " : "", msg);
    return -EINVAL;
}

static int fail_at(pctx *c, const yaml_node_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = failv(c, n ? &n->start_mark : NULL, fmt, ap);
    va_end(ap);
    return rc;
}

/* "expected X, got Y" at node n. */
static int expected(pctx *c, const yaml_node_t *n, const char *what)
{
    char buf[64];
    return fail_at(c, n, "expected %s, got %s", what, node_kind(n, buf, sizeof(buf)));
}

/* ---- YAML helpers ------------------------------------------------------------ */

static yaml_node_t *node(pctx *c, int index)
{
    return yaml_document_get_node(c->doc, index);
}

static bool is_scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE;
}

static const char *sval(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

static bool plain(const yaml_node_t *n)
{
    return is_scalar(n) && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

#define FOR_PAIRS(c, map, k, v)                                                                    \
    for (yaml_node_pair_t *p_ = (map)->data.mapping.pairs.start;                                   \
         p_ < (map)->data.mapping.pairs.top && ((k) = node(c, p_->key), (v) = node(c, p_->value)); \
         p_++)

#define FOR_ITEMS(c, seq, it)                                                                      \
    for (yaml_node_item_t *i_ = (seq)->data.sequence.items.start;                                  \
         i_ < (seq)->data.sequence.items.top && ((it) = node(c, *i_)); i_++)

static int seq_len(const yaml_node_t *n)
{
    return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
}

/* Checks that a mapping's keys are names, each given once. */
static int check_dupes(pctx *c, yaml_node_t *map, const char *what)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = node(c, p->key);
        if (!is_scalar(k)) return expected(c, k, "a key (a name)");
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *k2 = node(c, q->key);
            if (is_scalar(k2) && !strcmp(sval(k2), sval(k)))
                return fail_at(c, k, "key '%s' appears twice in %s", sval(k), what);
        }
    }
    return 0;
}

/* Checks that a mapping's keys are all among `allowed` ("a|b|c"), each
 * given once. */
static int check_keys(pctx *c, yaml_node_t *map, const char *allowed, const char *what)
{
    int rc = check_dupes(c, map, what);
    if (rc < 0) return rc;
    yaml_node_t *k, *v;
    FOR_PAIRS(c, map, k, v)
    {
        char pat[256], key[128];
        snprintf(pat, sizeof(pat), "|%s|", allowed);
        snprintf(key, sizeof(key), "|%s|", sval(k));
        if (strstr(pat, key)) continue;
        char list[256];
        snprintf(list, sizeof(list), "%s", allowed);
        for (char *q = list; *q; q++)
            if (*q == '|') *q = ',';
        (void)v;
        return fail_at(c, k, "unknown key '%s' in %s (expected one of: %s)", sval(k), what, list);
    }
    return 0;
}

static yaml_node_t *get(pctx *c, yaml_node_t *map, const char *key)
{
    yaml_node_t *k, *v;
    FOR_PAIRS(c, map, k, v)
    {
        if (is_scalar(k) && !strcmp(sval(k), key)) return v;
    }
    return NULL;
}

/* YAML 1.2 core schema for plain scalars: null, booleans, numbers; the
 * rest (and every quoted scalar) is a string. */
static json_t *scalar_json(const yaml_node_t *n)
{
    const char *s = sval(n);
    if (!plain(n)) return json_string(s);
    if (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"))
        return json_null();
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) return json_true();
    if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) return json_false();
    /* Integers: decimal (leading zeros too: 0123 is 123), 0o octal, 0x hex. */
    char *end;
    errno = 0;
    int base = s[0] == '0' && (s[1] == 'x' || s[1] == 'o') ? (s[1] == 'x' ? 16 : 8) : 10;
    long long i = strtoll(base == 10 ? s : s + 2, &end, base);
    if (*s && !*end && errno == 0 && (isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+'))
        return json_integer(i);
    double d = strtod(s, &end);
    if (*s && !*end &&
        (isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+' || s[0] == '.') && isfinite(d))
        return json_real(d);
    return json_string(s);
}

/* Any YAML node as JSON (for {literal: ...}). */
static json_t *node_json(pctx *c, yaml_node_t *n, int depth)
{
    if (depth > 32) return NULL;
    if (is_scalar(n)) return scalar_json(n);
    if (n->type == YAML_SEQUENCE_NODE) {
        json_t *a = json_array();
        yaml_node_t *it;
        FOR_ITEMS(c, n, it)
        {
            json_t *v = node_json(c, it, depth + 1);
            if (!v) {
                json_decref(a);
                return NULL;
            }
            json_array_append_new(a, v);
        }
        return a;
    }
    json_t *o = json_object();
    yaml_node_t *k, *v;
    FOR_PAIRS(c, n, k, v)
    {
        json_t *jv = is_scalar(k) ? node_json(c, v, depth + 1) : NULL;
        if (!jv) {
            json_decref(o);
            return NULL;
        }
        json_object_set_new(o, sval(k), jv);
    }
    return o;
}

static char *dup_scalar(const yaml_node_t *n)
{
    return hm_strdup(sval(n));
}

static bool valid_name(const char *s)
{
    if (!*s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '.' || *s == '-')) return false;
    return true;
}

static int parse_duration_node(pctx *c, yaml_node_t *n, int64_t *ns, const char *what)
{
    if (!is_scalar(n) || hm_parse_duration(sval(n), ns) < 0 || *ns < 0) return expected(c, n, what);
    return 0;
}

static int parse_timeout(pctx *c, yaml_node_t *map, hm_flow_step *s)
{
    yaml_node_t *t = get(c, map, "timeout");
    if (!t) return 0;
    int rc = parse_duration_node(c, t, &s->timeout_ns, "a duration such as 2s or 500ms");
    if (rc == 0 && s->timeout_ns == 0) return expected(c, t, "a duration above zero");
    return rc;
}

/* ---- values ------------------------------------------------------------------ */

static int data_column(pctx *c, yaml_node_t *n, const char *ref, int *data, int *col)
{
    const char *dot = strchr(ref, '.');
    for (int d = 0; dot && d < c->f->n_data; d++) {
        hm_flow_data *fd = &c->f->data[d];
        if (strlen(fd->name) != (size_t)(dot - ref) || strncmp(fd->name, ref, (size_t)(dot - ref)))
            continue;
        for (int k = 0; k < fd->n_cols; k++)
            if (!strcmp(fd->cols[k], dot + 1)) {
                *data = d;
                *col = k;
                return 0;
            }
        return fail_at(c, n, "data file '%s' (%s) has no column '%s'", fd->name, fd->path, dot + 1);
    }
    return fail_at(c, n,
                   "'%s' names no data file column (expected DATA.COLUMN, with DATA under "
                   "data:)",
                   ref);
}

static int parse_value(pctx *c, yaml_node_t *n, hm_flow_value *v, bool allow_signal)
{
    memset(v, 0, sizeof(*v));
    if (is_scalar(n)) {
        if (strstr(sval(n), "{{")) {
            v->src = HM_FLOW_TEMPLATE;
            v->name = dup_scalar(n);
            return 0;
        }
        v->src = HM_FLOW_LITERAL;
        v->json = scalar_json(n);
        return 0;
    }
    if (n->type == YAML_SEQUENCE_NODE)
        return fail_at(c, n,
                       "expected a value, got a list (pick one with {one_of: [...]}, or send the "
                       "list itself with {literal: [...]})");
    yaml_node_t *k, *val;
    int pairs = 0;
    FOR_PAIRS(c, n, k, val)
    {
        pairs++;
        (void)val;
    }
    const char *sources =
        allow_signal ? "var|csv|random|one_of|signal|literal" : "var|csv|random|one_of|literal";
    int rc = check_keys(c, n, sources, "a value");
    if (rc < 0) return rc;
    if (pairs != 1)
        return fail_at(c, n, "expected a value: a scalar, or one of {%s: ...}",
                       allow_signal ? "var, csv, random, one_of, signal, literal"
                                    : "var, csv, random, one_of, literal");
    k = node(c, n->data.mapping.pairs.start->key);
    val = node(c, n->data.mapping.pairs.start->value);
    const char *src = sval(k);
    if (!strcmp(src, "literal")) {
        v->src = HM_FLOW_LITERAL;
        v->json = node_json(c, val, 0);
        return v->json ? 0 : expected(c, val, "a value nested at most 32 deep");
    }
    if (!strcmp(src, "var") || !strcmp(src, "signal")) {
        if (!is_scalar(val) || !valid_name(sval(val))) return expected(c, val, "a name");
        v->src = !strcmp(src, "var") ? HM_FLOW_VAR : HM_FLOW_SIGNAL;
        v->name = dup_scalar(val);
        return 0;
    }
    if (!strcmp(src, "csv")) {
        if (!is_scalar(val)) return expected(c, val, "DATA.COLUMN");
        v->src = HM_FLOW_CSV;
        return data_column(c, val, sval(val), &v->data, &v->col);
    }
    if (val->type != YAML_SEQUENCE_NODE || seq_len(val) < 1)
        return expected(c, val,
                        !strcmp(src, "random") ? "[MIN, MAX]" : "a list of values to pick from");
    if (!strcmp(src, "one_of")) {
        v->src = HM_FLOW_ONE_OF;
        v->json = node_json(c, val, 0);
        return v->json ? 0 : expected(c, val, "values nested at most 32 deep");
    }
    /* random: [MIN, MAX] */
    if (seq_len(val) != 2) return expected(c, val, "[MIN, MAX] (two numbers)");
    json_t *lo = scalar_json(node(c, val->data.sequence.items.start[0]));
    json_t *hi = scalar_json(node(c, val->data.sequence.items.start[1]));
    bool ok = json_is_number(lo) && json_is_number(hi);
    v->src = HM_FLOW_RANDOM;
    v->integer = json_is_integer(lo) && json_is_integer(hi);
    v->min = ok ? json_number_value(lo) : 0;
    v->max = ok ? json_number_value(hi) : 0;
    json_decref(lo);
    json_decref(hi);
    if (!ok || v->max < v->min) return expected(c, val, "[MIN, MAX] with MIN <= MAX (numbers)");
    return 0;
}

/* ---- conditions (wait, expect) ---------------------------------------------- */

static const struct {
    const char *key;
    hm_flow_op op;
} ops[] = {
    {"equals", HM_FLOW_OP_EQUALS},         {"not", HM_FLOW_OP_NOT},
    {"above", HM_FLOW_OP_ABOVE},           {"below", HM_FLOW_OP_BELOW},
    {"at_least", HM_FLOW_OP_AT_LEAST},     {"at_most", HM_FLOW_OP_AT_MOST},
    {"changed_by", HM_FLOW_OP_CHANGED_BY}, {"contains", HM_FLOW_OP_CONTAINS},
};

static const char *op_name(hm_flow_op op)
{
    for (size_t i = 0; i < HM_ARRAY_LEN(ops); i++)
        if (ops[i].op == op) return ops[i].key;
    return "";
}

static int parse_op(pctx *c, yaml_node_t *map, hm_flow_cond *cond)
{
    for (size_t i = 0; i < HM_ARRAY_LEN(ops); i++) {
        yaml_node_t *v = get(c, map, ops[i].key);
        if (!v) continue;
        if (cond->op != HM_FLOW_OP_NONE)
            return fail_at(c, v, "one comparison per condition ('%s' and '%s')", op_name(cond->op),
                           ops[i].key);
        if (!cond->signal)
            return fail_at(c, v, "'%s' compares a signal: add signal: NAME", ops[i].key);
        cond->op = ops[i].op;
        int rc = parse_value(c, v, &cond->value, true);
        if (rc < 0) return rc;
        bool numeric = cond->op == HM_FLOW_OP_ABOVE || cond->op == HM_FLOW_OP_BELOW ||
                       cond->op == HM_FLOW_OP_AT_LEAST || cond->op == HM_FLOW_OP_AT_MOST ||
                       cond->op == HM_FLOW_OP_CHANGED_BY;
        if (numeric && cond->value.src == HM_FLOW_LITERAL && !json_is_number(cond->value.json))
            return expected(c, v, "a number");
    }
    return 0;
}

static int parse_signal_key(pctx *c, yaml_node_t *map, hm_flow_cond *cond)
{
    yaml_node_t *s = get(c, map, "signal");
    if (!s) return 0;
    if (!is_scalar(s) || !valid_name(sval(s))) return expected(c, s, "a signal name");
    cond->signal = dup_scalar(s);
    return 0;
}

static char *cond_label(const hm_flow_cond *cond, const char *prefix)
{
    char buf[256];
    size_t n = (size_t)snprintf(buf, sizeof(buf), "%s", prefix);
    if (cond->n_status) {
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%sstatus", n ? " " : "");
        for (int i = 0; i < cond->n_status && n < sizeof(buf); i++)
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%d", i ? "|" : " ", cond->status[i]);
    }
    if (cond->elements && n < sizeof(buf))
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%selements%s%.40s", n ? " " : "",
                              cond->elements[0] ? " " : "", cond->elements);
    if (cond->signal && n < sizeof(buf)) {
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? " " : "", cond->signal);
        if (cond->op && n < sizeof(buf)) {
            char *val = NULL;
            const hm_flow_value *v = &cond->value;
            if (v->src == HM_FLOW_LITERAL)
                val = json_dumps(v->json, JSON_ENCODE_ANY | JSON_COMPACT);
            snprintf(buf + n, sizeof(buf) - n, " %s %s", op_name(cond->op),
                     val                          ? val
                     : v->src == HM_FLOW_VAR      ? v->name
                     : v->src == HM_FLOW_SIGNAL   ? v->name
                     : v->src == HM_FLOW_TEMPLATE ? v->name
                                                  : "(value)");
            free(val);
        }
    }
    return hm_strdup(buf);
}

/* ---- rows and checks ---------------------------------------------------------- */

static int add_name(char ***flows, char ***names, int *n, const char *flow, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp((*flows)[i], flow) && !strcmp((*names)[i], name)) return i;
    char **nf = hm_realloc(*flows, sizeof(char *) * (size_t)(*n + 1));
    if (!nf) return -ENOMEM;
    *flows = nf;
    char **nn = hm_realloc(*names, sizeof(char *) * (size_t)(*n + 1));
    if (!nn) return -ENOMEM;
    *names = nn;
    (*flows)[*n] = hm_strdup(flow);
    (*names)[*n] = hm_strdup(name);
    return (*n)++;
}

/* ---- steps -------------------------------------------------------------------- */

static int parse_steps(pctx *c, yaml_node_t *seq, const char *prefix, hm_flow_step **out, int *n);

static const char *kind_name(hm_flow_kind k)
{
    static const char *const names[] = {
        [HM_FLOW_PAGE] = "page",     [HM_FLOW_SSE] = "sse",       [HM_FLOW_ACTION] = "action",
        [HM_FLOW_WAIT] = "wait",     [HM_FLOW_EXPECT] = "expect", [HM_FLOW_THINK] = "think",
        [HM_FLOW_REPEAT] = "repeat", [HM_FLOW_GET] = "get",       [HM_FLOW_CLOSE] = "close",
        [HM_FLOW_SET] = "set",
    };
    return names[k];
}

static const char *const step_kinds = "page|sse|action|wait|expect|think|repeat|get|close|set";

static int parse_path(pctx *c, yaml_node_t *v, hm_flow_step *s)
{
    if (!is_scalar(v) || sval(v)[0] != '/')
        return expected(c, v, "a path starting with / (e.g. /bench/counter)");
    s->path = dup_scalar(v);
    return 0;
}

static int parse_action(pctx *c, yaml_node_t *map, yaml_node_t *v, hm_flow_step *s)
{
    if (!is_scalar(v) || !sval(v)[0]) return expected(c, v, "an action name (e.g. increment)");
    s->action = dup_scalar(v);
    yaml_node_t *sig = get(c, map, "signals");
    if (!sig) return 0;
    if (sig->type != YAML_MAPPING_NODE)
        return expected(c, sig, "a mapping of signal names to values");
    int n = (int)(sig->data.mapping.pairs.top - sig->data.mapping.pairs.start);
    s->fields = hm_calloc((size_t)(n ? n : 1), sizeof(*s->fields));
    if (!s->fields) return -ENOMEM;
    int rc = check_dupes(c, sig, "signals");
    if (rc < 0) return rc;
    yaml_node_t *k, *val;
    FOR_PAIRS(c, sig, k, val)
    {
        if (!is_scalar(k) || !sval(k)[0]) return expected(c, k, "a signal name");
        if (!strcmp(sval(k), "via_ctx"))
            return fail_at(c, k, "via_ctx is the page's own: hammer sends it, leave it out");
        hm_flow_field *fld = &s->fields[s->n_fields++];
        fld->name = dup_scalar(k);
        if ((rc = parse_value(c, val, &fld->value, true)) < 0) return rc;
    }
    return 0;
}

static int parse_set(pctx *c, yaml_node_t *v, hm_flow_step *s)
{
    if (v->type != YAML_MAPPING_NODE)
        return expected(c, v, "a mapping of variable names to values");
    int n = (int)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
    s->fields = hm_calloc((size_t)(n ? n : 1), sizeof(*s->fields));
    if (!s->fields) return -ENOMEM;
    yaml_node_t *k, *val;
    FOR_PAIRS(c, v, k, val)
    {
        if (!is_scalar(k) || !valid_name(sval(k))) return expected(c, k, "a variable name");
        if (!strcmp(sval(k), "vu") || !strcmp(sval(k), "iteration"))
            return fail_at(c, k, "'%s' is set by hammer (the VU's number, the instance's count)",
                           sval(k));
        hm_flow_field *fld = &s->fields[s->n_fields++];
        fld->name = dup_scalar(k);
        int rc = parse_value(c, val, &fld->value, true);
        if (rc < 0) return rc;
        char **nn = hm_realloc(c->set_names, sizeof(char *) * (size_t)(c->n_set_names + 1));
        if (!nn) return -ENOMEM;
        c->set_names = nn;
        c->set_names[c->n_set_names++] = fld->name;
    }
    return 0;
}

static int parse_wait(pctx *c, yaml_node_t *v, hm_flow_step *s)
{
    if (is_scalar(v)) {
        if (strcmp(sval(v), "patch"))
            return expected(c, v, "'patch' or a mapping such as {signal: count, changed_by: 1}");
        return 0;
    }
    if (v->type != YAML_MAPPING_NODE)
        return expected(c, v, "'patch' or a mapping such as {signal: count, changed_by: 1}");
    int rc = check_keys(c, v,
                        "signal|elements|timeout|equals|not|above|below|at_least|at_most|"
                        "changed_by|contains",
                        "a wait");
    if (rc < 0 || (rc = parse_signal_key(c, v, &s->cond)) < 0 ||
        (rc = parse_op(c, v, &s->cond)) < 0 || (rc = parse_timeout(c, v, s)) < 0)
        return rc;
    yaml_node_t *el = get(c, v, "elements");
    if (el) {
        if (!is_scalar(el)) return expected(c, el, "text the patched elements hold, or true");
        s->cond.elements = hm_strdup(plain(el) && !strcmp(sval(el), "true") ? "" : sval(el));
        if (s->cond.signal)
            return fail_at(c, el, "a wait is for a signal or for elements, not both");
    }
    return 0;
}

static int parse_expect(pctx *c, yaml_node_t *v, hm_flow_step *s)
{
    if (v->type != YAML_MAPPING_NODE)
        return expected(c, v, "a mapping such as {status: 200} or {signal: count, equals: 5}");
    int rc = check_keys(c, v,
                        "status|signal|equals|not|above|below|at_least|at_most|changed_by|"
                        "contains",
                        "an expect");
    if (rc < 0 || (rc = parse_signal_key(c, v, &s->cond)) < 0 ||
        (rc = parse_op(c, v, &s->cond)) < 0)
        return rc;
    yaml_node_t *st = get(c, v, "status");
    if (st) {
        if (s->cond.signal)
            return fail_at(c, st, "an expect is for a status or a signal, not both");
        yaml_node_t *one = st;
        int i = 0;
        if (st->type == YAML_SEQUENCE_NODE) {
            FOR_ITEMS(c, st, one)
            {
                long long code;
                if (!is_scalar(one) || hm_parse_int(sval(one), 100, 599, &code) < 0 ||
                    i == (int)HM_ARRAY_LEN(s->cond.status))
                    return expected(c, one, "an HTTP status (100..599), at most 8");
                s->cond.status[i++] = (int)code;
            }
        } else {
            long long code;
            if (!is_scalar(one) || hm_parse_int(sval(one), 100, 599, &code) < 0)
                return expected(c, one, "an HTTP status (100..599) or a list of them");
            s->cond.status[i++] = (int)code;
        }
        s->cond.n_status = i;
    }
    if (!st && !s->cond.signal) return fail_at(c, v, "expected status: CODE or signal: NAME");
    return 0;
}

static int parse_think(pctx *c, yaml_node_t *v, hm_flow_step *s)
{
    const char *what = "a pause such as 500ms, 2s or 1s..3s";
    if (!is_scalar(v)) return expected(c, v, what);
    const char *txt = sval(v), *dots = strstr(txt, "..");
    char lo[64];
    snprintf(lo, sizeof(lo), "%.*s", dots ? (int)(dots - txt) : (int)strlen(txt), txt);
    if (hm_parse_duration(lo, &s->think_min_ns) < 0 || s->think_min_ns < 0)
        return expected(c, v, what);
    s->think_max_ns = s->think_min_ns;
    if (dots &&
        (hm_parse_duration(dots + 2, &s->think_max_ns) < 0 || s->think_max_ns < s->think_min_ns))
        return expected(c, v, what);
    return 0;
}

static int parse_repeat(pctx *c, yaml_node_t *map, yaml_node_t *v, hm_flow_step *s,
                        const char *prefix)
{
    s->probability = 1.0;
    if (!is_scalar(v)) return expected(c, v, "a count (e.g. 3) or 'forever'");
    long long n;
    if (!strcmp(sval(v), "forever"))
        s->times = 0;
    else if (hm_parse_int(sval(v), 1, 1000000000, &n) == 0)
        s->times = n;
    else
        return expected(c, v, "a count (1 or more) or 'forever'");
    yaml_node_t *pr = get(c, map, "probability");
    if (pr) {
        char *end = NULL;
        double p = is_scalar(pr) ? strtod(sval(pr), &end) : -1;
        if (!is_scalar(pr) || !end || *end || !(p > 0) || p > 1)
            return expected(c, pr, "a probability above 0 and at most 1 (e.g. 0.3)");
        s->probability = p;
    }
    yaml_node_t *body = get(c, map, "steps");
    if (!body) return fail_at(c, map, "a repeat needs steps: a list of the steps it repeats");
    if (body->type != YAML_SEQUENCE_NODE || seq_len(body) == 0)
        return expected(c, body, "a list of steps");
    return parse_steps(c, body, prefix, &s->steps, &s->n_steps);
}

static int add_offer(pctx *c, const hm_flow_step *action)
{
    hm_flow_step *page = (hm_flow_step *)c->page;
    const hm_flow_step **no =
        hm_realloc(page->offers, sizeof(*page->offers) * (size_t)(page->n_offers + 1));
    if (!no) return -ENOMEM;
    page->offers = no;
    page->offers[page->n_offers++] = action;
    return 0;
}

/* Steps that need a context or a stream say which step must come first. */
static int check_order(pctx *c, yaml_node_t *n, hm_flow_step *s)
{
    bool needs_page = s->kind == HM_FLOW_SSE || s->kind == HM_FLOW_ACTION ||
                      s->kind == HM_FLOW_WAIT || (s->kind == HM_FLOW_EXPECT && s->cond.signal);
    if (needs_page && !c->page)
        return fail_at(c, n,
                       "no page step before it: this step needs a php-via page's context "
                       "(add - page: /route before it)");
    bool needs_sse = s->kind == HM_FLOW_WAIT || (s->kind == HM_FLOW_EXPECT && s->cond.signal);
    if (needs_sse && !c->sse)
        return fail_at(c, n,
                       "no sse step since the page: this step reads the SSE stream (add "
                       "- sse: open after the page)");
    return 0;
}

static int parse_step(pctx *c, yaml_node_t *n, hm_flow_step *s, int index, const char *prefix)
{
    s->line = (int)n->start_mark.line + 1;
    s->col = (int)n->start_mark.column + 1;
    s->row = s->check = s->wait = -1;
    char num[64];
    snprintf(num, sizeof(num), "%s%s%d", prefix, prefix[0] ? "." : "", index);
    snprintf(c->where, sizeof(c->where), "flow '%.100s', step %s", c->flow_name, num);
    yaml_node_t *kv = NULL, *v = NULL, *k;
    if (is_scalar(n) && !strcmp(sval(n), "close")) {
        s->kind = HM_FLOW_CLOSE;
        kv = n;
    } else if (n->type != YAML_MAPPING_NODE) {
        return fail_at(c, n,
                       "expected a step (a mapping such as - page: /bench/counter, or - "
                       "close), got %s",
                       node_kind(n, num, sizeof(num)));
    } else {
        int rc = check_dupes(c, n, "a step");
        if (rc < 0) return rc;
        int kinds = 0;
        FOR_PAIRS(c, n, k, v)
        {
            if (!is_scalar(k)) return expected(c, k, "a step keyword");
            char key[80], pat[128];
            snprintf(key, sizeof(key), "|%s|", sval(k));
            snprintf(pat, sizeof(pat), "|%s|", step_kinds);
            if (!strstr(pat, key)) continue;
            if (kinds++)
                return fail_at(c, k, "one step per list item ('%s' starts another)", sval(k));
            kv = k;
            for (int i = HM_FLOW_PAGE; i <= HM_FLOW_SET; i++)
                if (!strcmp(kind_name((hm_flow_kind)i), sval(k))) s->kind = (hm_flow_kind)i;
        }
        if (!kinds)
            return fail_at(c, n,
                           "expected a step: one of page, sse, action, wait, expect, think, "
                           "repeat, get, close, set");
        v = get(c, n, sval(kv));
    }
    char where[200];
    snprintf(where, sizeof(where), "flow '%.100s', step %s (%s)", c->flow_name, num,
             kind_name(s->kind));
    snprintf(c->where, sizeof(c->where), "%s", where);
    s->where = hm_strdup(where);
    int rc = 0;
    static const char *const allowed[] = {
        [HM_FLOW_PAGE] = "page|name|timeout",
        [HM_FLOW_SSE] = "sse|name|timeout",
        [HM_FLOW_ACTION] = "action|signals|name|timeout",
        [HM_FLOW_WAIT] = "wait|name|timeout",
        [HM_FLOW_EXPECT] = "expect|name",
        [HM_FLOW_THINK] = "think",
        [HM_FLOW_REPEAT] = "repeat|steps|probability",
        [HM_FLOW_GET] = "get|name|timeout",
        [HM_FLOW_CLOSE] = "close|name",
        [HM_FLOW_SET] = "set",
    };
    char what[64];
    bool vowel = strchr("aeiou", kind_name(s->kind)[0]) != NULL;
    snprintf(what, sizeof(what), "%s %s step", vowel ? "an" : "a", kind_name(s->kind));
    if (n->type == YAML_MAPPING_NODE) {
        if ((rc = check_keys(c, n, allowed[s->kind], what)) < 0) return rc;
        if (s->kind != HM_FLOW_WAIT && (rc = parse_timeout(c, n, s)) < 0) return rc;
        if (s->kind == HM_FLOW_WAIT && get(c, n, "timeout") && (rc = parse_timeout(c, n, s)) < 0)
            return rc;
    }
    switch (s->kind) {
    case HM_FLOW_PAGE:
        rc = parse_path(c, v, s);
        break;
    case HM_FLOW_GET:
        rc = parse_path(c, v, s);
        break;
    case HM_FLOW_SSE:
        if (!is_scalar(v) || (strcmp(sval(v), "open") && strcmp(sval(v), "true")))
            rc = expected(c, v, "'open'");
        break;
    case HM_FLOW_ACTION:
        rc = parse_action(c, n, v, s);
        break;
    case HM_FLOW_WAIT:
        rc = parse_wait(c, v, s);
        break;
    case HM_FLOW_EXPECT:
        rc = parse_expect(c, v, s);
        break;
    case HM_FLOW_THINK:
        rc = parse_think(c, v, s);
        break;
    case HM_FLOW_REPEAT:
        rc = parse_repeat(c, n, v, s, num);
        snprintf(c->where, sizeof(c->where), "%s", where);
        break;
    case HM_FLOW_CLOSE:
        if (v && v != n &&
            !(is_scalar(v) &&
              (!strcmp(sval(v), "session") || !strcmp(sval(v), "true") || !sval(v)[0])))
            rc = expected(c, v, "'session' (or nothing: - close)");
        break;
    case HM_FLOW_SET:
        rc = parse_set(c, v, s);
        break;
    }
    if (rc < 0) return rc;
    if ((rc = check_order(c, n, s)) < 0) return rc;

    /* Names: `name:` or one made up from the step. */
    yaml_node_t *nm = n->type == YAML_MAPPING_NODE ? get(c, n, "name") : NULL;
    if (nm && (!is_scalar(nm) || !sval(nm)[0])) return expected(c, nm, "a name for the step");
    char label[256];
    switch (s->kind) {
    case HM_FLOW_PAGE:
    case HM_FLOW_GET:
        snprintf(label, sizeof(label), "%s %s", kind_name(s->kind), s->path);
        break;
    case HM_FLOW_ACTION:
        snprintf(label, sizeof(label), "action %s", s->action);
        break;
    case HM_FLOW_SSE:
        snprintf(label, sizeof(label), "sse open");
        break;
    case HM_FLOW_WAIT: {
        char *l = cond_label(&s->cond, "wait");
        snprintf(label, sizeof(label), "%s", strcmp(l, "wait") ? l : "wait patch");
        hm_free(l);
        break;
    }
    case HM_FLOW_EXPECT: {
        char *l = cond_label(&s->cond, "");
        snprintf(label, sizeof(label), "%s", l);
        hm_free(l);
        break;
    }
    default:
        snprintf(label, sizeof(label), "%s", kind_name(s->kind));
    }
    s->label = hm_strdup(nm ? sval(nm) : label);
    hm_flow_file *f = c->f;
    switch (s->kind) {
    case HM_FLOW_PAGE:
    case HM_FLOW_SSE:
    case HM_FLOW_ACTION:
    case HM_FLOW_WAIT:
    case HM_FLOW_GET:
    case HM_FLOW_CLOSE:
        s->row = add_name(&f->row_flow, &f->row_name, &f->n_rows, c->flow_name, s->label);
        if (s->row < 0) return s->row;
        break;
    case HM_FLOW_EXPECT:
        s->check = add_name(&f->check_flow, &f->check_name, &f->n_checks, c->flow_name, s->label);
        if (s->check < 0) return s->check;
        break;
    default:
        break;
    }
    if (s->kind == HM_FLOW_WAIT) {
        const hm_flow_step **nw = hm_realloc(f->waits, sizeof(*nw) * (size_t)(f->n_waits + 1));
        if (!nw) return -ENOMEM;
        f->waits = nw;
        f->waits[f->n_waits] = s;
        s->wait = f->n_waits++;
    }
    if (s->kind == HM_FLOW_ACTION) {
        s->has_action = f->has_action = true;
        s->slot = f->n_actions++;
        if ((rc = add_offer(c, s)) < 0) return rc;
    }
    if (s->kind == HM_FLOW_REPEAT)
        for (int i = 0; i < s->n_steps; i++)
            s->has_action = s->has_action || s->steps[i].has_action;
    return 0;
}

/* Page steps are noted as they are read: a page step's own address must
 * stay put while its flow is read (actions point to it), so the list of
 * steps is sized before any is read. */
static int parse_steps(pctx *c, yaml_node_t *seq, const char *prefix, hm_flow_step **out, int *n)
{
    int len = seq_len(seq);
    *out = hm_calloc((size_t)(len ? len : 1), sizeof(**out));
    if (!*out) return -ENOMEM;
    yaml_node_t *it;
    int i = 0;
    FOR_ITEMS(c, seq, it)
    {
        hm_flow_step *s = &(*out)[i++];
        *n = i;
        int rc = parse_step(c, it, s, i, prefix);
        if (rc < 0) return rc;
        if (s->kind == HM_FLOW_PAGE) {
            c->page = s;
            c->sse = false;
        }
        if (s->kind == HM_FLOW_SSE) c->sse = true;
        if (s->kind == HM_FLOW_CLOSE) {
            c->page = NULL;
            c->sse = false;
        }
    }
    return 0;
}

static int parse_flow(pctx *c, yaml_node_t *n, hm_flow *fl, int index, bool shorthand)
{
    fl->line = (int)n->start_mark.line + 1;
    fl->col = (int)n->start_mark.column + 1;
    fl->weight = 1;
    c->where[0] = 0;
    if (!shorthand) {
        if (n->type != YAML_MAPPING_NODE)
            return expected(c, n, "a flow: a mapping with name, weight and steps");
        int rc = check_keys(c, n, "name|weight|steps", "a flow");
        if (rc < 0) return rc;
    }
    yaml_node_t *nm = get(c, n, "name");
    char dflt[32];
    snprintf(dflt, sizeof(dflt), "flow%d", index);
    if (nm && (!is_scalar(nm) || !sval(nm)[0])) return expected(c, nm, "a flow name");
    fl->name = hm_strdup(nm ? sval(nm) : shorthand ? (c->f->name ? c->f->name : "flow") : dflt);
    for (int i = 0; i < index - 1; i++)
        if (!strcmp(c->f->flows[i].name, fl->name))
            return fail_at(c, nm ? nm : n, "a second flow named '%s'", fl->name);
    if (!shorthand) {
        yaml_node_t *w = get(c, n, "weight");
        if (w) {
            char *end = NULL;
            fl->weight = is_scalar(w) ? strtod(sval(w), &end) : -1;
            if (!is_scalar(w) || !end || *end || !(fl->weight >= 0) || !isfinite(fl->weight))
                return expected(c, w, "a weight (a number, 0 or more)");
        }
    }
    c->flow_name = fl->name;
    c->page = NULL;
    c->sse = false;
    yaml_node_t *steps = get(c, n, "steps");
    if (!steps)
        return fail_at(c, n, "flow '%s' has no steps: (a list of steps such as - page: /route)",
                       fl->name);
    if (steps->type != YAML_SEQUENCE_NODE || seq_len(steps) == 0)
        return expected(c, steps, "a list of steps");
    int rc = parse_steps(c, steps, "", &fl->steps, &fl->n_steps);
    c->where[0] = 0;
    if (rc < 0) return rc;
    fl->prologue = fl->n_steps;
    for (int i = 0; i < fl->n_steps; i++)
        if (fl->steps[i].has_action) {
            fl->prologue = i;
            break;
        }
    c->f->total_weight += fl->weight;
    return 0;
}

/* ---- check: -------------------------------------------------------------------- */

static int parse_check(pctx *c, yaml_node_t *n)
{
    hm_flow_file *f = c->f;
    f->check.check = HM_CHECK_NONE;
    if (is_scalar(n) && !strcmp(sval(n), "none")) return 0;
    if (n->type != YAML_MAPPING_NODE)
        return expected(c, n, "a mapping such as {kind: net-increment, signal: count}");
    int rc = check_keys(c, n, "kind|signal|value", "check");
    if (rc < 0) return rc;
    yaml_node_t *k = get(c, n, "kind"), *sig = get(c, n, "signal"), *val = get(c, n, "value");
    const char *kinds = "net-increment, constant, spreadsheet, table or none";
    if (!k || !is_scalar(k)) return fail_at(c, k ? k : n, "expected kind: %s", kinds);
    const char *kind = sval(k);
    if (!strcmp(kind, "net-increment")) {
        f->check.check = HM_CHECK_NET_INCREMENT;
        f->check_text = hm_strdup("net increment equals HTTP OK");
    } else if (!strcmp(kind, "constant")) {
        f->check.check = HM_CHECK_CONSTANT;
    } else if (!strcmp(kind, "spreadsheet")) {
        f->check.check = HM_CHECK_SPREADSHEET;
        f->check_text =
            hm_strdup("net increment equals HTTP OK; viewRow = focusRow = count mod 100");
    } else if (!strcmp(kind, "table")) {
        f->check.check = HM_CHECK_TABLE;
        f->check_text = hm_strdup("element patches hold a well-formed 20x10 table");
    } else if (!strcmp(kind, "none")) {
        return 0;
    } else {
        return fail_at(c, k, "unknown check kind '%s' (expected %s)", kind, kinds);
    }
    if (f->check.check == HM_CHECK_TABLE) {
        if (sig) return fail_at(c, sig, "a table check reads element patches: no signal");
    } else {
        if (!sig || !is_scalar(sig) || !valid_name(sval(sig)))
            return fail_at(c, sig ? sig : n, "a %s check needs signal: NAME (e.g. count)", kind);
        f->check_signal = dup_scalar(sig);
    }
    if (f->check.check == HM_CHECK_CONSTANT) {
        long long v;
        if (!val || !is_scalar(val) || hm_parse_int(sval(val), INT64_MIN, INT64_MAX, &v) < 0)
            return fail_at(c, val ? val : n, "a constant check needs value: N (an integer)");
        f->check.expected = v;
        char text[160];
        snprintf(text, sizeof(text), "every patched %s equals %lld", f->check_signal, v);
        f->check_text = hm_strdup(text);
    } else if (val) {
        return fail_at(c, val, "value: goes with kind: constant");
    }
    return 0;
}

/* ---- variables: and data: ------------------------------------------------------ */

static int parse_vars(pctx *c, yaml_node_t *n)
{
    hm_flow_file *f = c->f;
    if (n->type != YAML_MAPPING_NODE) return expected(c, n, "a mapping of names to values");
    int len = (int)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    f->vars = hm_calloc((size_t)(len ? len : 1), sizeof(*f->vars));
    if (!f->vars) return -ENOMEM;
    yaml_node_t *k, *v;
    FOR_PAIRS(c, n, k, v)
    {
        if (!is_scalar(k) || !valid_name(sval(k))) return expected(c, k, "a variable name");
        if (!strcmp(sval(k), "vu") || !strcmp(sval(k), "iteration"))
            return fail_at(c, k, "'%s' is set by hammer", sval(k));
        hm_flow_field *fld = &f->vars[f->n_vars++];
        fld->name = dup_scalar(k);
        /* A list is the values a variable takes: one per flow instance. */
        if (v->type == YAML_SEQUENCE_NODE && seq_len(v) > 0) {
            fld->value.src = HM_FLOW_ONE_OF;
            fld->value.json = node_json(c, v, 0);
            if (!fld->value.json) return expected(c, v, "values nested at most 32 deep");
            continue;
        }
        int rc = parse_value(c, v, &fld->value, false);
        if (rc < 0) return rc;
        if (fld->value.src == HM_FLOW_TEMPLATE)
            return fail_at(c, v, "a variable's value cannot use {{ }}: use set: in a step");
    }
    return check_dupes(c, n, "variables");
}

/* RFC 4180 fields: commas, "quoted, with "" inside", CRLF or LF. */
static int csv_read(pctx *c, yaml_node_t *at, hm_flow_data *d, const char *text, size_t len)
{
    char **cells = NULL;
    size_t n = 0, cap = 0, line_cells = 0;
    int line = 1;
    int width = -1;
    char *field = hm_alloc(len + 1);
    if (!field) return -ENOMEM;
    size_t fl = 0;
    bool quoted = false, any = false;
    for (size_t i = 0; i <= len; i++) {
        char ch = i < len ? text[i] : '\n';
        if (quoted) {
            if (ch == '"' && i + 1 < len && text[i + 1] == '"') {
                field[fl++] = '"';
                i++;
            } else if (ch == '"') {
                quoted = false;
            } else {
                if (ch == '\n') line++;
                field[fl++] = ch;
            }
            continue;
        }
        if (ch == '"' && fl == 0) {
            quoted = any = true;
            continue;
        }
        if (ch == '\r') continue;
        if (ch != ',' && ch != '\n') {
            field[fl++] = ch;
            any = true;
            continue;
        }
        if (ch == '\n' && !any && line_cells == 0) { /* an empty line */
            line++;
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nc = hm_realloc(cells, cap * sizeof(char *));
            if (!nc) break;
            cells = nc;
        }
        cells[n++] = hm_strndup(field, fl);
        line_cells++;
        fl = 0;
        any = false;
        if (ch == '\n') {
            if (width < 0) width = (int)line_cells;
            if ((int)line_cells != width) {
                hm_free(field);
                for (size_t k = 0; k < n; k++)
                    hm_free(cells[k]);
                hm_free(cells);
                return fail_at(c, at, "%s line %d has %zu fields; its header has %d", d->path, line,
                               line_cells, width);
            }
            line_cells = 0;
            line++;
        }
    }
    hm_free(field);
    if (quoted || width <= 0 || (int)n <= width) {
        for (size_t k = 0; k < n; k++)
            hm_free(cells[k]);
        hm_free(cells);
        return fail_at(c, at, "%s: %s", d->path,
                       quoted ? "a quoted field never ends"
                              : "expected a header row and at least one row of data");
    }
    d->n_cols = width;
    d->cols = cells;
    d->cells = cells + width;
    d->n_rows = (int)n / width - 1;
    for (int i = 0; i < width; i++)
        if (!valid_name(d->cols[i]))
            return fail_at(c, at, "%s: column '%s' in the header is not a name", d->path,
                           d->cols[i]);
    return 0;
}

static char *resolve_path(const char *flow_path, const char *rel)
{
    if (rel[0] == '/') return hm_strdup(rel);
    const char *slash = strrchr(flow_path, '/');
    size_t dl = slash ? (size_t)(slash - flow_path + 1) : 0;
    char *p = hm_alloc(dl + strlen(rel) + 1);
    if (!p) return NULL;
    memcpy(p, flow_path, dl);
    strcpy(p + dl, rel);
    return p;
}

static int parse_data(pctx *c, yaml_node_t *n)
{
    hm_flow_file *f = c->f;
    if (n->type != YAML_MAPPING_NODE)
        return expected(c, n, "a mapping of names to CSV files ({users: {file: users.csv}})");
    int len = (int)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    if (len > MAX_DATA) return fail_at(c, n, "at most %d data files", MAX_DATA);
    f->data = hm_calloc((size_t)(len ? len : 1), sizeof(*f->data));
    if (!f->data) return -ENOMEM;
    yaml_node_t *k, *v;
    FOR_PAIRS(c, n, k, v)
    {
        if (!is_scalar(k) || !valid_name(sval(k)) || strchr(sval(k), '.'))
            return expected(c, k, "a data set name (no dots)");
        hm_flow_data *d = &f->data[f->n_data++];
        d->name = dup_scalar(k);
        d->next = hm_calloc(1, sizeof(*d->next));
        if (!d->next) return -ENOMEM;
        yaml_node_t *file = v;
        if (v->type == YAML_MAPPING_NODE) {
            int rc = check_keys(c, v, "file|order", "a data file");
            if (rc < 0) return rc;
            file = get(c, v, "file");
            yaml_node_t *order = get(c, v, "order");
            if (order && (!is_scalar(order) ||
                          (strcmp(sval(order), "sequence") && strcmp(sval(order), "random"))))
                return expected(c, order, "sequence or random");
            d->random = order && !strcmp(sval(order), "random");
            if (!file) return fail_at(c, v, "expected file: PATH.csv");
        }
        if (!is_scalar(file) || !sval(file)[0]) return expected(c, file, "a CSV file's path");
        d->path = resolve_path(c->path, sval(file));
        if (!d->path) return -ENOMEM;
        FILE *fp = fopen(d->path, "rb");
        if (!fp) return fail_at(c, file, "cannot read %s: %s", d->path, strerror(errno));
        char *text = NULL;
        size_t tl = 0, tc = 0;
        char buf[8192];
        size_t got;
        while ((got = fread(buf, 1, sizeof(buf), fp)) > 0) {
            if (tl + got + 1 > tc) {
                tc = (tl + got + 1) * 2;
                char *nt = hm_realloc(text, tc);
                if (!nt) break;
                text = nt;
            }
            memcpy(text + tl, buf, got);
            tl += got;
        }
        fclose(fp);
        int rc = csv_read(c, file, d, text ? text : "", tl);
        hm_free(text);
        if (rc < 0) return rc;
    }
    return check_dupes(c, n, "data");
}

/* ---- names in templates and var: -------------------------------------------------- */

static bool name_known(pctx *c, const char *name)
{
    if (!strcmp(name, "vu") || !strcmp(name, "iteration")) return true;
    for (int i = 0; i < c->f->n_vars; i++)
        if (!strcmp(c->f->vars[i].name, name)) return true;
    for (int i = 0; i < c->n_set_names; i++)
        if (!strcmp(c->set_names[i], name)) return true;
    const char *dot = strchr(name, '.');
    for (int d = 0; dot && d < c->f->n_data; d++) {
        const hm_flow_data *fd = &c->f->data[d];
        if (strlen(fd->name) != (size_t)(dot - name) ||
            strncmp(fd->name, name, (size_t)(dot - name)))
            continue;
        for (int k = 0; k < fd->n_cols; k++)
            if (!strcmp(fd->cols[k], dot + 1)) return true;
    }
    return false;
}

static int check_template(pctx *c, const hm_flow_step *s, const char *tpl)
{
    for (const char *p = tpl; (p = strstr(p, "{{")) != NULL;) {
        const char *end = strstr(p, "}}");
        if (!end) {
            snprintf(c->why, c->whylen, "%s:%d:%d: %s: '{{' without '}}' in '%.80s'", c->path,
                     s->line, s->col, s->where, tpl);
            return -EINVAL;
        }
        char name[MAX_TEMPLATE_NAME];
        const char *a = p + 2, *b = end;
        while (a < b && *a == ' ')
            a++;
        while (b > a && b[-1] == ' ')
            b--;
        snprintf(name, sizeof(name), "%.*s", (int)(b - a), a);
        if (!name_known(c, name)) {
            snprintf(c->why, c->whylen,
                     "%s:%d:%d: %s: '{{ %s }}' names no variable (expected a name under "
                     "variables:, one a set step assigns, DATA.COLUMN of a data file, vu or "
                     "iteration)",
                     c->path, s->line, s->col, s->where, name);
            return -EINVAL;
        }
        p = end + 2;
    }
    return 0;
}

static int check_value_names(pctx *c, const hm_flow_step *s, const hm_flow_value *v)
{
    if (v->src == HM_FLOW_TEMPLATE) return check_template(c, s, v->name);
    if (v->src == HM_FLOW_VAR && !name_known(c, v->name)) {
        snprintf(c->why, c->whylen,
                 "%s:%d:%d: %s: {var: %s} names no variable (expected a name under variables:, "
                 "one a set step assigns, vu or iteration)",
                 c->path, s->line, s->col, s->where, v->name);
        return -EINVAL;
    }
    return 0;
}

static int check_names(pctx *c, const hm_flow_step *steps, int n)
{
    for (int i = 0; i < n; i++) {
        const hm_flow_step *s = &steps[i];
        int rc = 0;
        if (s->path) rc = check_template(c, s, s->path);
        for (int k = 0; rc == 0 && k < s->n_fields; k++)
            rc = check_value_names(c, s, &s->fields[k].value);
        if (rc == 0 && s->cond.op) rc = check_value_names(c, s, &s->cond.value);
        if (rc == 0 && s->n_steps) rc = check_names(c, s->steps, s->n_steps);
        if (rc < 0) return rc;
    }
    return 0;
}

/* ---- the file ------------------------------------------------------------------ */

static int parse_root(pctx *c, yaml_node_t *root)
{
    hm_flow_file *f = c->f;
    if (!root) return fail_at(c, NULL, "the file is empty (expected flows: or steps:)");
    if (root->type != YAML_MAPPING_NODE)
        return expected(c, root, "a mapping with flows: (or steps:) at the top");
    int rc = check_keys(c, root, "name|check|variables|data|flows|steps", "the file");
    if (rc < 0) return rc;
    yaml_node_t *nm = get(c, root, "name");
    if (nm) {
        if (!is_scalar(nm)) return expected(c, nm, "a name");
        f->name = dup_scalar(nm);
    }
    yaml_node_t *n;
    if ((n = get(c, root, "check")) && (rc = parse_check(c, n)) < 0) return rc;
    if ((n = get(c, root, "data")) && (rc = parse_data(c, n)) < 0) return rc;
    if ((n = get(c, root, "variables")) && (rc = parse_vars(c, n)) < 0) return rc;
    yaml_node_t *flows = get(c, root, "flows"), *steps = get(c, root, "steps");
    if (flows && steps)
        return fail_at(c, steps,
                       "steps: at the top is one flow; with flows: each flow has its "
                       "own steps");
    if (!flows && !steps)
        return fail_at(c, root, "expected flows: (a list of flows) or steps: (one flow)");
    if (steps) {
        f->flows = hm_calloc(1, sizeof(*f->flows));
        if (!f->flows) return -ENOMEM;
        f->n_flows = 1;
        if ((rc = parse_flow(c, root, &f->flows[0], 1, true)) < 0) return rc;
    } else {
        if (flows->type != YAML_SEQUENCE_NODE || seq_len(flows) == 0)
            return expected(c, flows, "a list of flows");
        f->flows = hm_calloc((size_t)seq_len(flows), sizeof(*f->flows));
        if (!f->flows) return -ENOMEM;
        yaml_node_t *it;
        FOR_ITEMS(c, flows, it)
        {
            f->n_flows++;
            if ((rc = parse_flow(c, it, &f->flows[f->n_flows - 1], f->n_flows, false)) < 0)
                return rc;
        }
    }
    if (!(f->total_weight > 0))
        return fail_at(c, flows ? flows : root, "every flow has weight 0: none would run");
    for (int i = 0; i < f->n_flows; i++)
        if ((rc = check_names(c, f->flows[i].steps, f->flows[i].n_steps)) < 0) return rc;
    return 0;
}

int hm_flow_load(const char *path, hm_flow_file **out, char *why, size_t whylen)
{
    *out = NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(why, whylen, "cannot read flow file %s: %s", path, strerror(errno));
        return -errno;
    }
    hm_flow_file *f = hm_calloc(1, sizeof(*f));
    if (!f) {
        fclose(fp);
        return -ENOMEM;
    }
    f->path = hm_strdup(path);
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, fp);
    int rc;
    if (!yaml_parser_load(&parser, &doc)) {
        const yaml_mark_t *m = parser.problem ? &parser.problem_mark : &parser.context_mark;
        snprintf(why, whylen, "%s:%zu:%zu: not valid YAML: %s%s%s", path, m->line + 1,
                 m->column + 1, parser.problem ? parser.problem : "parse error",
                 parser.context ? " " : "", parser.context ? parser.context : "");
        rc = -EINVAL;
    } else {
        pctx c = {.path = path, .doc = &doc, .f = f, .why = why, .whylen = whylen};
        rc = parse_root(&c, yaml_document_get_root_node(&doc));
        hm_free(c.set_names);
        yaml_document_delete(&doc);
        /* A second document would be ignored silently: say so. */
        if (rc == 0 && yaml_parser_load(&parser, &doc)) {
            yaml_node_t *more = yaml_document_get_root_node(&doc);
            if (more) {
                snprintf(why, whylen,
                         "%s:%zu:%zu: a second YAML document (---): a flow file is one document",
                         path, more->start_mark.line + 1, more->start_mark.column + 1);
                rc = -EINVAL;
            }
            yaml_document_delete(&doc);
        }
    }
    yaml_parser_delete(&parser);
    fclose(fp);
    if (rc < 0) {
        hm_flow_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

/* ---- the hammer model's limits ----------------------------------------------------- */

static int body_check(const hm_flow_file *f, const hm_flow_step *steps, int n, char *why,
                      size_t whylen)
{
    for (int i = 0; i < n; i++) {
        const hm_flow_step *s = &steps[i];
        if (s->kind == HM_FLOW_PAGE || s->kind == HM_FLOW_SSE || s->kind == HM_FLOW_CLOSE) {
            snprintf(why, whylen,
                     "%s:%d:%d: %s: a %s step after the flow's first action cannot run in the "
                     "hammer model (one context per flow, its actions in flight); run this "
                     "flow with --mode browser",
                     f->path, s->line, s->col, s->where, kind_name(s->kind));
            return -EINVAL;
        }
        if (s->n_steps && body_check(f, s->steps, s->n_steps, why, whylen) < 0) return -EINVAL;
    }
    return 0;
}

int hm_flow_check_hammer(const hm_flow_file *f, char *why, size_t whylen)
{
    for (int i = 0; i < f->n_flows; i++) {
        const hm_flow *fl = &f->flows[i];
        if (body_check(f, fl->steps + fl->prologue, fl->n_steps - fl->prologue, why, whylen) < 0)
            return -EINVAL;
    }
    return 0;
}

/* ---- freeing ------------------------------------------------------------------------- */

static void value_free(hm_flow_value *v)
{
    json_decref(v->json);
    hm_free(v->name);
}

static void steps_free(hm_flow_step *steps, int n)
{
    for (int i = 0; steps && i < n; i++) {
        hm_flow_step *s = &steps[i];
        hm_free(s->where);
        hm_free(s->label);
        hm_free(s->path);
        hm_free(s->action);
        for (int k = 0; k < s->n_fields; k++) {
            hm_free(s->fields[k].name);
            value_free(&s->fields[k].value);
        }
        hm_free(s->fields);
        hm_free(s->cond.signal);
        hm_free(s->cond.elements);
        value_free(&s->cond.value);
        hm_free(s->offers);
        steps_free(s->steps, s->n_steps);
    }
    hm_free(steps);
}

void hm_flow_free(hm_flow_file *f)
{
    if (!f) return;
    for (int i = 0; f->flows && i < f->n_flows; i++) {
        hm_free(f->flows[i].name);
        steps_free(f->flows[i].steps, f->flows[i].n_steps);
    }
    hm_free(f->flows);
    for (int i = 0; f->vars && i < f->n_vars; i++) {
        hm_free(f->vars[i].name);
        value_free(&f->vars[i].value);
    }
    hm_free(f->vars);
    for (int i = 0; f->data && i < f->n_data; i++) {
        hm_flow_data *d = &f->data[i];
        int cells = d->cols ? d->n_cols * (d->n_rows + 1) : 0;
        for (int k = 0; k < cells; k++)
            hm_free(d->cols[k]);
        hm_free(d->cols);
        hm_free(d->name);
        hm_free(d->path);
        hm_free((void *)d->next);
    }
    hm_free(f->data);
    for (int i = 0; i < f->n_rows; i++) {
        hm_free(f->row_flow[i]);
        hm_free(f->row_name[i]);
    }
    for (int i = 0; i < f->n_checks; i++) {
        hm_free(f->check_flow[i]);
        hm_free(f->check_name[i]);
    }
    hm_free(f->row_flow);
    hm_free(f->row_name);
    hm_free(f->check_flow);
    hm_free(f->check_name);
    hm_free(f->waits);
    hm_free(f->check_signal);
    hm_free(f->check_text);
    hm_free(f->set_value);
    hm_free(f->path);
    hm_free(f->name);
    hm_free(f);
}
