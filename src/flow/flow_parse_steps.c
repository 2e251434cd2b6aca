/* Reading a flow file's steps: each step kind's keys and values, the
 * conditions of wait and expect, the names of the rows and checks they
 * report under, the order steps need (a page before an action, an sse
 * before a wait), and each flow's steps and weight. Also which steps the
 * hammer model cannot run. The file around them is read in flow_parse.c. */
#include "flow/flow_parse_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- timeouts ------------------------------------------------------------------ */

static int parse_duration_node(pctx *c, yaml_node_t *n, int64_t *ns, const char *what)
{
    if (!is_scalar(n) || hm_parse_duration(sval(n), ns) < 0 || *ns < 0)
        return fp_expected(c, n, what);
    return 0;
}

static int parse_timeout(pctx *c, yaml_node_t *map, hm_flow_step *s)
{
    yaml_node_t *t = fp_get(c, map, "timeout");
    if (!t) return 0;
    int rc = parse_duration_node(c, t, &s->timeout_ns, "a duration such as 2s or 500ms");
    if (rc == 0 && s->timeout_ns == 0) return fp_expected(c, t, "a duration above zero");
    return rc;
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
        yaml_node_t *v = fp_get(c, map, ops[i].key);
        if (!v) continue;
        if (cond->op != HM_FLOW_OP_NONE)
            return fp_fail_at(c, v, "one comparison per condition ('%s' and '%s')",
                              op_name(cond->op), ops[i].key);
        if (!cond->signal)
            return fp_fail_at(c, v, "'%s' compares a signal: add signal: NAME", ops[i].key);
        cond->op = ops[i].op;
        int rc = fp_parse_value(c, v, &cond->value, true);
        if (rc < 0) return rc;
        bool numeric = cond->op == HM_FLOW_OP_ABOVE || cond->op == HM_FLOW_OP_BELOW ||
                       cond->op == HM_FLOW_OP_AT_LEAST || cond->op == HM_FLOW_OP_AT_MOST ||
                       cond->op == HM_FLOW_OP_CHANGED_BY;
        if (numeric && cond->value.src == HM_FLOW_LITERAL && !json_is_number(cond->value.json))
            return fp_expected(c, v, "a number");
    }
    return 0;
}

static int parse_signal_key(pctx *c, yaml_node_t *map, hm_flow_cond *cond)
{
    yaml_node_t *s = fp_get(c, map, "signal");
    if (!s) return 0;
    if (!is_scalar(s) || !fp_valid_name(sval(s))) return fp_expected(c, s, "a signal name");
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
        return fp_expected(c, v, "a path starting with / (e.g. /bench/counter)");
    s->path = dup_scalar(v);
    return 0;
}

static int parse_action(pctx *c, yaml_node_t *map, yaml_node_t *v, hm_flow_step *s)
{
    if (!is_scalar(v) || !sval(v)[0]) return fp_expected(c, v, "an action name (e.g. increment)");
    s->action = dup_scalar(v);
    yaml_node_t *sig = fp_get(c, map, "signals");
    if (!sig) return 0;
    if (sig->type != YAML_MAPPING_NODE)
        return fp_expected(c, sig, "a mapping of signal names to values");
    int n = (int)(sig->data.mapping.pairs.top - sig->data.mapping.pairs.start);
    s->fields = hm_calloc((size_t)(n ? n : 1), sizeof(*s->fields));
    if (!s->fields) return -ENOMEM;
    int rc = fp_check_dupes(c, sig, "signals");
    if (rc < 0) return rc;
    yaml_node_t *k, *val;
    FOR_PAIRS(c, sig, k, val)
    {
        if (!is_scalar(k) || !sval(k)[0]) return fp_expected(c, k, "a signal name");
        if (!strcmp(sval(k), "via_ctx"))
            return fp_fail_at(c, k, "via_ctx is the page's own: hammer sends it, leave it out");
        hm_flow_field *fld = &s->fields[s->n_fields++];
        fld->name = dup_scalar(k);
        if ((rc = fp_parse_value(c, val, &fld->value, true)) < 0) return rc;
    }
    return 0;
}

static int parse_set(pctx *c, yaml_node_t *v, hm_flow_step *s)
{
    if (v->type != YAML_MAPPING_NODE)
        return fp_expected(c, v, "a mapping of variable names to values");
    int n = (int)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
    s->fields = hm_calloc((size_t)(n ? n : 1), sizeof(*s->fields));
    if (!s->fields) return -ENOMEM;
    yaml_node_t *k, *val;
    FOR_PAIRS(c, v, k, val)
    {
        if (!is_scalar(k) || !fp_valid_name(sval(k))) return fp_expected(c, k, "a variable name");
        if (!strcmp(sval(k), "vu") || !strcmp(sval(k), "iteration"))
            return fp_fail_at(c, k, "'%s' is set by hammer (the VU's number, the instance's count)",
                              sval(k));
        hm_flow_field *fld = &s->fields[s->n_fields++];
        fld->name = dup_scalar(k);
        int rc = fp_parse_value(c, val, &fld->value, true);
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
            return fp_expected(c, v, "'patch' or a mapping such as {signal: count, changed_by: 1}");
        return 0;
    }
    if (v->type != YAML_MAPPING_NODE)
        return fp_expected(c, v, "'patch' or a mapping such as {signal: count, changed_by: 1}");
    int rc = fp_check_keys(c, v,
                           "signal|elements|timeout|equals|not|above|below|at_least|at_most|"
                           "changed_by|contains",
                           "a wait");
    if (rc < 0 || (rc = parse_signal_key(c, v, &s->cond)) < 0 ||
        (rc = parse_op(c, v, &s->cond)) < 0 || (rc = parse_timeout(c, v, s)) < 0)
        return rc;
    yaml_node_t *el = fp_get(c, v, "elements");
    if (el) {
        if (!is_scalar(el)) return fp_expected(c, el, "text the patched elements hold, or true");
        s->cond.elements = hm_strdup(plain(el) && !strcmp(sval(el), "true") ? "" : sval(el));
        if (s->cond.signal)
            return fp_fail_at(c, el, "a wait is for a signal or for elements, not both");
    }
    return 0;
}

static int parse_expect(pctx *c, yaml_node_t *v, hm_flow_step *s)
{
    if (v->type != YAML_MAPPING_NODE)
        return fp_expected(c, v, "a mapping such as {status: 200} or {signal: count, equals: 5}");
    int rc = fp_check_keys(c, v,
                           "status|signal|equals|not|above|below|at_least|at_most|changed_by|"
                           "contains",
                           "an expect");
    if (rc < 0 || (rc = parse_signal_key(c, v, &s->cond)) < 0 ||
        (rc = parse_op(c, v, &s->cond)) < 0)
        return rc;
    yaml_node_t *st = fp_get(c, v, "status");
    if (st) {
        if (s->cond.signal)
            return fp_fail_at(c, st, "an expect is for a status or a signal, not both");
        yaml_node_t *one = st;
        int i = 0;
        if (st->type == YAML_SEQUENCE_NODE) {
            FOR_ITEMS(c, st, one)
            {
                long long code;
                if (!is_scalar(one) || hm_parse_int(sval(one), 100, 599, &code) < 0 ||
                    i == (int)HM_ARRAY_LEN(s->cond.status))
                    return fp_expected(c, one, "an HTTP status (100..599), at most 8");
                s->cond.status[i++] = (int)code;
            }
        } else {
            long long code;
            if (!is_scalar(one) || hm_parse_int(sval(one), 100, 599, &code) < 0)
                return fp_expected(c, one, "an HTTP status (100..599) or a list of them");
            s->cond.status[i++] = (int)code;
        }
        s->cond.n_status = i;
    }
    if (!st && !s->cond.signal) return fp_fail_at(c, v, "expected status: CODE or signal: NAME");
    return 0;
}

static int parse_think(pctx *c, yaml_node_t *v, hm_flow_step *s)
{
    const char *what = "a pause such as 500ms, 2s or 1s..3s";
    if (!is_scalar(v)) return fp_expected(c, v, what);
    const char *txt = sval(v), *dots = strstr(txt, "..");
    char lo[64];
    snprintf(lo, sizeof(lo), "%.*s", dots ? (int)(dots - txt) : (int)strlen(txt), txt);
    if (hm_parse_duration(lo, &s->think_min_ns) < 0 || s->think_min_ns < 0)
        return fp_expected(c, v, what);
    s->think_max_ns = s->think_min_ns;
    if (dots &&
        (hm_parse_duration(dots + 2, &s->think_max_ns) < 0 || s->think_max_ns < s->think_min_ns))
        return fp_expected(c, v, what);
    return 0;
}

static int parse_repeat(pctx *c, yaml_node_t *map, yaml_node_t *v, hm_flow_step *s,
                        const char *prefix)
{
    s->probability = 1.0;
    if (!is_scalar(v)) return fp_expected(c, v, "a count (e.g. 3) or 'forever'");
    long long n;
    if (!strcmp(sval(v), "forever"))
        s->times = 0;
    else if (hm_parse_int(sval(v), 1, 1000000000, &n) == 0)
        s->times = n;
    else
        return fp_expected(c, v, "a count (1 or more) or 'forever'");
    yaml_node_t *pr = fp_get(c, map, "probability");
    if (pr) {
        char *end = NULL;
        double p = is_scalar(pr) ? strtod(sval(pr), &end) : -1;
        if (!is_scalar(pr) || !end || *end || !(p > 0) || p > 1)
            return fp_expected(c, pr, "a probability above 0 and at most 1 (e.g. 0.3)");
        s->probability = p;
    }
    yaml_node_t *body = fp_get(c, map, "steps");
    if (!body) return fp_fail_at(c, map, "a repeat needs steps: a list of the steps it repeats");
    if (body->type != YAML_SEQUENCE_NODE || seq_len(body) == 0)
        return fp_expected(c, body, "a list of steps");
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
        return fp_fail_at(c, n,
                          "no page step before it: this step needs a php-via page's context "
                          "(add - page: /route before it)");
    bool needs_sse = s->kind == HM_FLOW_WAIT || (s->kind == HM_FLOW_EXPECT && s->cond.signal);
    if (needs_sse && !c->sse)
        return fp_fail_at(c, n,
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
        return fp_fail_at(c, n,
                          "expected a step (a mapping such as - page: /bench/counter, or - "
                          "close), got %s",
                          fp_node_kind(n, num, sizeof(num)));
    } else {
        int rc = fp_check_dupes(c, n, "a step");
        if (rc < 0) return rc;
        int kinds = 0;
        FOR_PAIRS(c, n, k, v)
        {
            if (!is_scalar(k)) return fp_expected(c, k, "a step keyword");
            char key[80], pat[128];
            snprintf(key, sizeof(key), "|%s|", sval(k));
            snprintf(pat, sizeof(pat), "|%s|", step_kinds);
            if (!strstr(pat, key)) continue;
            if (kinds++)
                return fp_fail_at(c, k, "one step per list item ('%s' starts another)", sval(k));
            kv = k;
            for (int i = HM_FLOW_PAGE; i <= HM_FLOW_SET; i++)
                if (!strcmp(kind_name((hm_flow_kind)i), sval(k))) s->kind = (hm_flow_kind)i;
        }
        if (!kinds)
            return fp_fail_at(c, n,
                              "expected a step: one of page, sse, action, wait, expect, think, "
                              "repeat, get, close, set");
        v = fp_get(c, n, sval(kv));
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
        if ((rc = fp_check_keys(c, n, allowed[s->kind], what)) < 0) return rc;
        if (s->kind != HM_FLOW_WAIT && (rc = parse_timeout(c, n, s)) < 0) return rc;
        if (s->kind == HM_FLOW_WAIT && fp_get(c, n, "timeout") && (rc = parse_timeout(c, n, s)) < 0)
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
            rc = fp_expected(c, v, "'open'");
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
            rc = fp_expected(c, v, "'session' (or nothing: - close)");
        break;
    case HM_FLOW_SET:
        rc = parse_set(c, v, s);
        break;
    }
    if (rc < 0) return rc;
    if ((rc = check_order(c, n, s)) < 0) return rc;

    /* Names: `name:` or one made up from the step. */
    yaml_node_t *nm = n->type == YAML_MAPPING_NODE ? fp_get(c, n, "name") : NULL;
    if (nm && (!is_scalar(nm) || !sval(nm)[0])) return fp_expected(c, nm, "a name for the step");
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

int fp_parse_flow(pctx *c, yaml_node_t *n, hm_flow *fl, int index, bool shorthand)
{
    fl->line = (int)n->start_mark.line + 1;
    fl->col = (int)n->start_mark.column + 1;
    fl->weight = 1;
    c->where[0] = 0;
    if (!shorthand) {
        if (n->type != YAML_MAPPING_NODE)
            return fp_expected(c, n, "a flow: a mapping with name, weight and steps");
        int rc = fp_check_keys(c, n, "name|weight|steps", "a flow");
        if (rc < 0) return rc;
    }
    yaml_node_t *nm = fp_get(c, n, "name");
    char dflt[32];
    snprintf(dflt, sizeof(dflt), "flow%d", index);
    if (nm && (!is_scalar(nm) || !sval(nm)[0])) return fp_expected(c, nm, "a flow name");
    fl->name = hm_strdup(nm ? sval(nm) : shorthand ? (c->f->name ? c->f->name : "flow") : dflt);
    for (int i = 0; i < index - 1; i++)
        if (!strcmp(c->f->flows[i].name, fl->name))
            return fp_fail_at(c, nm ? nm : n, "a second flow named '%s'", fl->name);
    if (!shorthand) {
        yaml_node_t *w = fp_get(c, n, "weight");
        if (w) {
            char *end = NULL;
            fl->weight = is_scalar(w) ? strtod(sval(w), &end) : -1;
            if (!is_scalar(w) || !end || *end || !(fl->weight >= 0) || !isfinite(fl->weight))
                return fp_expected(c, w, "a weight (a number, 0 or more)");
        }
    }
    c->flow_name = fl->name;
    c->page = NULL;
    c->sse = false;
    yaml_node_t *steps = fp_get(c, n, "steps");
    if (!steps)
        return fp_fail_at(c, n, "flow '%s' has no steps: (a list of steps such as - page: /route)",
                          fl->name);
    if (steps->type != YAML_SEQUENCE_NODE || seq_len(steps) == 0)
        return fp_expected(c, steps, "a list of steps");
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
