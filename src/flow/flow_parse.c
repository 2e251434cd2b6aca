/* Reading a flow file: YAML (libyaml's document API, which keeps each
 * node's line and column) into a hm_flow_file, checked as it goes. Every
 * error says where (FILE:LINE:COL), in which flow and step, and what was
 * expected there. The CSV data files a flow names are read here too; the
 * steps of each flow are read in flow_parse_steps.c. */
#include "flow/flow_parse_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DATA 8 /* hm_flow_exec.rows */
#define MAX_TEMPLATE_NAME 128

/* ---- errors --------------------------------------------------------------- */

const char *fp_node_kind(const yaml_node_t *n, char *buf, size_t cap)
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

int fp_fail_at(pctx *c, const yaml_node_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = failv(c, n ? &n->start_mark : NULL, fmt, ap);
    va_end(ap);
    return rc;
}

/* "expected X, got Y" at node n. */
int fp_expected(pctx *c, const yaml_node_t *n, const char *what)
{
    char buf[64];
    return fp_fail_at(c, n, "expected %s, got %s", what, fp_node_kind(n, buf, sizeof(buf)));
}

/* ---- YAML helpers ------------------------------------------------------------ */

int fp_check_dupes(pctx *c, yaml_node_t *map, const char *what)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = node(c, p->key);
        if (!is_scalar(k)) return fp_expected(c, k, "a key (a name)");
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *k2 = node(c, q->key);
            if (is_scalar(k2) && !strcmp(sval(k2), sval(k)))
                return fp_fail_at(c, k, "key '%s' appears twice in %s", sval(k), what);
        }
    }
    return 0;
}

/* Checks that a mapping's keys are all among `allowed` ("a|b|c"), each
 * given once. */
int fp_check_keys(pctx *c, yaml_node_t *map, const char *allowed, const char *what)
{
    int rc = fp_check_dupes(c, map, what);
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
        return fp_fail_at(c, k, "unknown key '%s' in %s (expected one of: %s)", sval(k), what,
                          list);
    }
    return 0;
}

yaml_node_t *fp_get(pctx *c, yaml_node_t *map, const char *key)
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

bool fp_valid_name(const char *s)
{
    if (!*s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '.' || *s == '-')) return false;
    return true;
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
        return fp_fail_at(c, n, "data file '%s' (%s) has no column '%s'", fd->name, fd->path,
                          dot + 1);
    }
    return fp_fail_at(c, n,
                      "'%s' names no data file column (expected DATA.COLUMN, with DATA under "
                      "data:)",
                      ref);
}

int fp_parse_value(pctx *c, yaml_node_t *n, hm_flow_value *v, bool allow_signal)
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
        return fp_fail_at(
            c, n,
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
    int rc = fp_check_keys(c, n, sources, "a value");
    if (rc < 0) return rc;
    if (pairs != 1)
        return fp_fail_at(c, n, "expected a value: a scalar, or one of {%s: ...}",
                          allow_signal ? "var, csv, random, one_of, signal, literal"
                                       : "var, csv, random, one_of, literal");
    k = node(c, n->data.mapping.pairs.start->key);
    val = node(c, n->data.mapping.pairs.start->value);
    const char *src = sval(k);
    if (!strcmp(src, "literal")) {
        v->src = HM_FLOW_LITERAL;
        v->json = node_json(c, val, 0);
        return v->json ? 0 : fp_expected(c, val, "a value nested at most 32 deep");
    }
    if (!strcmp(src, "var") || !strcmp(src, "signal")) {
        if (!is_scalar(val) || !fp_valid_name(sval(val))) return fp_expected(c, val, "a name");
        v->src = !strcmp(src, "var") ? HM_FLOW_VAR : HM_FLOW_SIGNAL;
        v->name = dup_scalar(val);
        return 0;
    }
    if (!strcmp(src, "csv")) {
        if (!is_scalar(val)) return fp_expected(c, val, "DATA.COLUMN");
        v->src = HM_FLOW_CSV;
        return data_column(c, val, sval(val), &v->data, &v->col);
    }
    if (val->type != YAML_SEQUENCE_NODE || seq_len(val) < 1)
        return fp_expected(c, val,
                           !strcmp(src, "random") ? "[MIN, MAX]" : "a list of values to pick from");
    if (!strcmp(src, "one_of")) {
        v->src = HM_FLOW_ONE_OF;
        v->json = node_json(c, val, 0);
        return v->json ? 0 : fp_expected(c, val, "values nested at most 32 deep");
    }
    /* random: [MIN, MAX] */
    if (seq_len(val) != 2) return fp_expected(c, val, "[MIN, MAX] (two numbers)");
    json_t *lo = scalar_json(node(c, val->data.sequence.items.start[0]));
    json_t *hi = scalar_json(node(c, val->data.sequence.items.start[1]));
    bool ok = json_is_number(lo) && json_is_number(hi);
    v->src = HM_FLOW_RANDOM;
    v->integer = json_is_integer(lo) && json_is_integer(hi);
    v->min = ok ? json_number_value(lo) : 0;
    v->max = ok ? json_number_value(hi) : 0;
    json_decref(lo);
    json_decref(hi);
    if (!ok || v->max < v->min) return fp_expected(c, val, "[MIN, MAX] with MIN <= MAX (numbers)");
    return 0;
}

/* ---- check: -------------------------------------------------------------------- */

static int parse_check(pctx *c, yaml_node_t *n)
{
    hm_flow_file *f = c->f;
    f->check.check = HM_CHECK_NONE;
    if (is_scalar(n) && !strcmp(sval(n), "none")) return 0;
    if (n->type != YAML_MAPPING_NODE)
        return fp_expected(c, n, "a mapping such as {kind: net-increment, signal: count}");
    int rc = fp_check_keys(c, n, "kind|signal|value", "check");
    if (rc < 0) return rc;
    yaml_node_t *k = fp_get(c, n, "kind"), *sig = fp_get(c, n, "signal"),
                *val = fp_get(c, n, "value");
    const char *kinds = "net-increment, constant, spreadsheet, table or none";
    if (!k || !is_scalar(k)) return fp_fail_at(c, k ? k : n, "expected kind: %s", kinds);
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
        return fp_fail_at(c, k, "unknown check kind '%s' (expected %s)", kind, kinds);
    }
    if (f->check.check == HM_CHECK_TABLE) {
        if (sig) return fp_fail_at(c, sig, "a table check reads element patches: no signal");
    } else {
        if (!sig || !is_scalar(sig) || !fp_valid_name(sval(sig)))
            return fp_fail_at(c, sig ? sig : n, "a %s check needs signal: NAME (e.g. count)", kind);
        f->check_signal = dup_scalar(sig);
    }
    if (f->check.check == HM_CHECK_CONSTANT) {
        long long v;
        if (!val || !is_scalar(val) || hm_parse_int(sval(val), INT64_MIN, INT64_MAX, &v) < 0)
            return fp_fail_at(c, val ? val : n, "a constant check needs value: N (an integer)");
        f->check.expected = v;
        char text[160];
        snprintf(text, sizeof(text), "every patched %s equals %lld", f->check_signal, v);
        f->check_text = hm_strdup(text);
    } else if (val) {
        return fp_fail_at(c, val, "value: goes with kind: constant");
    }
    return 0;
}

/* ---- variables: and data: ------------------------------------------------------ */

static int parse_vars(pctx *c, yaml_node_t *n)
{
    hm_flow_file *f = c->f;
    if (n->type != YAML_MAPPING_NODE) return fp_expected(c, n, "a mapping of names to values");
    int len = (int)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    f->vars = hm_calloc((size_t)(len ? len : 1), sizeof(*f->vars));
    if (!f->vars) return -ENOMEM;
    yaml_node_t *k, *v;
    FOR_PAIRS(c, n, k, v)
    {
        if (!is_scalar(k) || !fp_valid_name(sval(k))) return fp_expected(c, k, "a variable name");
        if (!strcmp(sval(k), "vu") || !strcmp(sval(k), "iteration"))
            return fp_fail_at(c, k, "'%s' is set by hammer", sval(k));
        hm_flow_field *fld = &f->vars[f->n_vars++];
        fld->name = dup_scalar(k);
        /* A list is the values a variable takes: one per flow instance. */
        if (v->type == YAML_SEQUENCE_NODE && seq_len(v) > 0) {
            fld->value.src = HM_FLOW_ONE_OF;
            fld->value.json = node_json(c, v, 0);
            if (!fld->value.json) return fp_expected(c, v, "values nested at most 32 deep");
            continue;
        }
        int rc = fp_parse_value(c, v, &fld->value, false);
        if (rc < 0) return rc;
        if (fld->value.src == HM_FLOW_TEMPLATE)
            return fp_fail_at(c, v, "a variable's value cannot use {{ }}: use set: in a step");
    }
    return fp_check_dupes(c, n, "variables");
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
                return fp_fail_at(c, at, "%s line %d has %zu fields; its header has %d", d->path,
                                  line, line_cells, width);
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
        return fp_fail_at(c, at, "%s: %s", d->path,
                          quoted ? "a quoted field never ends"
                                 : "expected a header row and at least one row of data");
    }
    d->n_cols = width;
    d->cols = cells;
    d->cells = cells + width;
    d->n_rows = (int)n / width - 1;
    for (int i = 0; i < width; i++)
        if (!fp_valid_name(d->cols[i]))
            return fp_fail_at(c, at, "%s: column '%s' in the header is not a name", d->path,
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
        return fp_expected(c, n, "a mapping of names to CSV files ({users: {file: users.csv}})");
    int len = (int)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    if (len > MAX_DATA) return fp_fail_at(c, n, "at most %d data files", MAX_DATA);
    f->data = hm_calloc((size_t)(len ? len : 1), sizeof(*f->data));
    if (!f->data) return -ENOMEM;
    yaml_node_t *k, *v;
    FOR_PAIRS(c, n, k, v)
    {
        if (!is_scalar(k) || !fp_valid_name(sval(k)) || strchr(sval(k), '.'))
            return fp_expected(c, k, "a data set name (no dots)");
        hm_flow_data *d = &f->data[f->n_data++];
        d->name = dup_scalar(k);
        d->next = hm_calloc(1, sizeof(*d->next));
        if (!d->next) return -ENOMEM;
        yaml_node_t *file = v;
        if (v->type == YAML_MAPPING_NODE) {
            int rc = fp_check_keys(c, v, "file|order", "a data file");
            if (rc < 0) return rc;
            file = fp_get(c, v, "file");
            yaml_node_t *order = fp_get(c, v, "order");
            if (order && (!is_scalar(order) ||
                          (strcmp(sval(order), "sequence") && strcmp(sval(order), "random"))))
                return fp_expected(c, order, "sequence or random");
            d->random = order && !strcmp(sval(order), "random");
            if (!file) return fp_fail_at(c, v, "expected file: PATH.csv");
        }
        if (!is_scalar(file) || !sval(file)[0]) return fp_expected(c, file, "a CSV file's path");
        d->path = resolve_path(c->path, sval(file));
        if (!d->path) return -ENOMEM;
        FILE *fp = fopen(d->path, "rb");
        if (!fp) return fp_fail_at(c, file, "cannot read %s: %s", d->path, strerror(errno));
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
    return fp_check_dupes(c, n, "data");
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
    if (!root) return fp_fail_at(c, NULL, "the file is empty (expected flows: or steps:)");
    if (root->type != YAML_MAPPING_NODE)
        return fp_expected(c, root, "a mapping with flows: (or steps:) at the top");
    int rc = fp_check_keys(c, root, "name|check|variables|data|flows|steps", "the file");
    if (rc < 0) return rc;
    yaml_node_t *nm = fp_get(c, root, "name");
    if (nm) {
        if (!is_scalar(nm)) return fp_expected(c, nm, "a name");
        f->name = dup_scalar(nm);
    }
    yaml_node_t *n;
    if ((n = fp_get(c, root, "check")) && (rc = parse_check(c, n)) < 0) return rc;
    if ((n = fp_get(c, root, "data")) && (rc = parse_data(c, n)) < 0) return rc;
    if ((n = fp_get(c, root, "variables")) && (rc = parse_vars(c, n)) < 0) return rc;
    yaml_node_t *flows = fp_get(c, root, "flows"), *steps = fp_get(c, root, "steps");
    if (flows && steps)
        return fp_fail_at(c, steps,
                          "steps: at the top is one flow; with flows: each flow has its "
                          "own steps");
    if (!flows && !steps)
        return fp_fail_at(c, root, "expected flows: (a list of flows) or steps: (one flow)");
    if (steps) {
        f->flows = hm_calloc(1, sizeof(*f->flows));
        if (!f->flows) return -ENOMEM;
        f->n_flows = 1;
        if ((rc = fp_parse_flow(c, root, &f->flows[0], 1, true)) < 0) return rc;
    } else {
        if (flows->type != YAML_SEQUENCE_NODE || seq_len(flows) == 0)
            return fp_expected(c, flows, "a list of flows");
        f->flows = hm_calloc((size_t)seq_len(flows), sizeof(*f->flows));
        if (!f->flows) return -ENOMEM;
        yaml_node_t *it;
        FOR_ITEMS(c, flows, it)
        {
            f->n_flows++;
            if ((rc = fp_parse_flow(c, it, &f->flows[f->n_flows - 1], f->n_flows, false)) < 0)
                return rc;
        }
    }
    if (!(f->total_weight > 0))
        return fp_fail_at(c, flows ? flows : root, "every flow has weight 0: none would run");
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
        /* libyaml names a tab only as "a character that cannot start any
         * token"; the file says which character it was. */
        bool tab = fseek(fp, (long)m->index, SEEK_SET) == 0 && fgetc(fp) == '\t';
        snprintf(why, whylen, "%s:%zu:%zu: not valid YAML: %s%s%s%s", path, m->line + 1,
                 m->column + 1, parser.problem ? parser.problem : "parse error",
                 parser.context ? " " : "", parser.context ? parser.context : "",
                 tab ? " (a tab: YAML indents with spaces only)" : "");
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
