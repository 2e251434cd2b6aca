/* hammer import-har: a browser's recording of a php-via app (HAR) into a
 * flow file (docs/flows.md), as a person would write it.
 *
 * The entries, in the order they started, become steps:
 *   - a GET of an HTML page            -> page: PATH
 *   - the page's GET /_sse?datastar=…  -> sse: open (Datastar's reconnects are dropped)
 *   - POST …/_action/NAME              -> action: NAME, its signals, then wait: patch
 *                                        (sse: open first when the recording lacks the
 *                                        stream; an action before any page is left out)
 *   - POST /_session/close (the beacon) -> close, when nothing follows it (a page
 *                                        step leaves the previous page by itself)
 *   - other GETs of the app            -> get: PATH
 *   - the pause before a page or an action -> think: (clamped, scaled)
 * and what a load test should not replay is left out: static assets (kept
 * with --keep-assets), php-via's Dev Bar (/_via/…), other hosts, other
 * methods. The header comment says what was left out.
 *
 * An action's body holds every signal of the tab (Datastar sends them all).
 * via_ctx is the context's own and goes; so do the signals that only echo
 * what the server sent (a flow's VU sends the last-seen values by itself):
 * when the recording holds the page's SSE stream (tests/tools/record_har.js
 * keeps it), a value the stream carried for that signal is an echo; without
 * the stream, numbers are taken for server state (--signals all keeps
 * everything). TAB ids (count__bench_counter__<hex>) are written as the
 * names the page gave them (count). */
#include "cli/import_har.h"
#include "cli/json_file.h"

#include "base/hm_base.h"
#include "proto/datastar.h"
#include "proto/sse.h"

#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <yaml.h>

/* One HAR entry, as the import sees it. */
typedef struct entry {
    json_t *e;
    double start_ms, end_ms; /* since the epoch */
    const char *method, *url, *type, *mime;
    char path[2048]; /* path?query */
    char origin[512];
    int status;
} entry;

/* What was left out, for the header comment. */
typedef struct tally {
    int pages, actions, gets, assets, devbar, foreign, other, reconnects, beacons;
    int pageless; /* actions before any page: no context to send them in */
    bool fallback_signals;
} tally;

/* ---- reading the HAR --------------------------------------------------------- */

/* ISO 8601 startedDateTime ("2026-11-30T08:25:37.619Z", or with an
 * offset) in milliseconds since the epoch; NAN when unreadable. */
static double iso_ms(const char *s)
{
    struct tm tm = {0};
    const char *p = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (!p) return NAN;
    double ms = (double)timegm(&tm) * 1000.0;
    if (*p == '.') {
        double frac = strtod(p, (char **)&p);
        ms += frac * 1000.0;
    }
    if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1, hh = 0, mm = 0;
        if (sscanf(p + 1, "%2d:%2d", &hh, &mm) >= 1) ms -= sign * (hh * 60 + mm) * 60000.0;
    }
    return ms;
}

static const char *str_at(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static int entry_read(json_t *e, entry *out)
{
    memset(out, 0, sizeof(*out));
    out->e = e;
    json_t *req = json_object_get(e, "request"), *resp = json_object_get(e, "response");
    out->method = str_at(req, "method");
    out->url = str_at(req, "url");
    out->type = str_at(e, "_resourceType");
    out->mime = str_at(json_object_get(resp, "content"), "mimeType");
    out->status = (int)json_integer_value(json_object_get(resp, "status"));
    out->start_ms = iso_ms(json_string_value(json_object_get(e, "startedDateTime")));
    double t = json_number_value(json_object_get(e, "time"));
    out->end_ms = out->start_ms + (t > 0 ? t : 0);
    /* scheme://host[:port]/path?query — the origin and the rest. */
    const char *sep = strstr(out->url, "://");
    if (!sep || isnan(out->start_ms)) return -HM_EPARSE;
    const char *slash = strchr(sep + 3, '/');
    size_t ol = slash ? (size_t)(slash - out->url) : strlen(out->url);
    snprintf(out->origin, sizeof(out->origin), "%.*s", (int)ol, out->url);
    const char *hash = slash ? strchr(slash, '#') : NULL;
    snprintf(out->path, sizeof(out->path), "%.*s",
             slash ? (int)(hash ? (size_t)(hash - slash) : strlen(slash)) : 1, slash ? slash : "/");
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    return x->start_ms < y->start_ms ? -1 : x->start_ms > y->start_ms;
}

/* ---- what an entry is ----------------------------------------------------------- */

static bool path_is(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    return !strncmp(path, prefix, n) && (path[n] == 0 || path[n] == '?' || path[n] == '/');
}

static bool is_asset(const entry *en)
{
    static const char *const types[] = {"stylesheet", "script",   "image",    "font",
                                        "media",      "manifest", "texttrack"};
    for (size_t i = 0; i < HM_ARRAY_LEN(types); i++)
        if (!strcasecmp(en->type, types[i])) return true;
    static const char *const exts[] = {".css", ".js",  ".mjs", ".map",  ".png",  ".jpg",   ".jpeg",
                                       ".gif", ".svg", ".ico", ".webp", ".woff", ".woff2", ".ttf"};
    char path[2048];
    snprintf(path, sizeof(path), "%s", en->path);
    char *q = strchr(path, '?');
    if (q) *q = 0;
    size_t pl = strlen(path);
    for (size_t i = 0; i < HM_ARRAY_LEN(exts); i++) {
        size_t el = strlen(exts[i]);
        if (pl >= el && !strcasecmp(path + pl - el, exts[i])) return true;
    }
    return !strncmp(en->mime, "image/", 6) || !strncmp(en->mime, "font/", 5) ||
           !strcmp(en->mime, "text/css") || strstr(en->mime, "javascript");
}

static bool is_page(const entry *en)
{
    if (strcmp(en->method, "GET") || en->status >= 400) return false;
    if (!strcasecmp(en->type, "document")) return true;
    return !en->type[0] && !strncmp(en->mime, "text/html", 9);
}

/* The action id after the last /_action/ of a POST, or NULL: also when
 * the name is empty (/_action/ or /_action/?x), which no flow can replay. */
static const char *action_of(const entry *en)
{
    if (strcmp(en->method, "POST")) return NULL;
    const char *id = NULL;
    for (const char *p = en->path; (p = strstr(p, "/_action/")) != NULL; p++)
        id = p + 9;
    return id && *id && *id != '?' ? id : NULL;
}

static bool ends_with_path(const char *path, const char *tail)
{
    const char *q = strchr(path, '?');
    size_t pl = q ? (size_t)(q - path) : strlen(path), tl = strlen(tail);
    return pl >= tl && !strncmp(path + pl - tl, tail, tl);
}

/* ---- signals ------------------------------------------------------------------ */

/* php-via's ids replace every character outside [A-Za-z0-9_] with '_'. */
static void sanitize(const char *in, char *out, size_t cap)
{
    size_t i = 0;
    for (; in[i] && i + 1 < cap; i++) {
        char c = in[i];
        out[i] =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
                ? c
                : '_';
    }
    out[i] = 0;
}

/* The name a page gave a TAB signal: its id minus "_" + the sanitised
 * context id. Other ids stay as they are. */
static void signal_name(const char *key, const char *ctx, char *out, size_t cap)
{
    char sctx[512];
    sanitize(ctx ? ctx : "", sctx, sizeof(sctx));
    size_t kl = strlen(key), cl = strlen(sctx);
    if (ctx && cl && kl > cl + 1 && key[kl - cl - 1] == '_' && !strcmp(key + kl - cl, sctx))
        snprintf(out, cap, "%.*s", (int)(kl - cl - 1), key);
    else
        snprintf(out, cap, "%s", key);
}

/* Every (signal, value) a recorded SSE stream carried, as {id: [values]}. */
typedef struct stream_seen {
    json_t *values;
} stream_seen;

static int seen_event(const hm_sse_event *ev, void *user)
{
    stream_seen *s = user;
    hm_datastar_event de = {0};
    if (hm_datastar_decode(ev, &de) == 0 && de.kind == HM_DATASTAR_PATCH_SIGNALS) {
        const char *k;
        json_t *v;
        json_object_foreach(de.signals, k, v)
        {
            json_t *list = json_object_get(s->values, k);
            if (!list) json_object_set_new(s->values, k, list = json_array());
            json_array_append(list, v);
        }
    }
    hm_datastar_event_clear(&de);
    return 0;
}

static void stream_read(json_t *values, const char *text)
{
    stream_seen s = {values};
    hm_sse_parser p;
    hm_sse_parser_init(&p, seen_event, &s);
    hm_sse_feed(&p, text, strlen(text));
    hm_sse_feed(&p, "\n\n", 2);
    hm_sse_parser_free(&p);
}

static bool echoed(json_t *values, const char *key, json_t *v)
{
    json_t *list = json_object_get(values, key);
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x)
    {
        if (json_equal(x, v) || (json_is_number(x) && json_is_number(v) &&
                                 json_number_value(x) == json_number_value(v)))
            return true;
    }
    return false;
}

/* ---- writing YAML (libyaml's emitter) ------------------------------------------------ */

typedef struct yaml_out {
    yaml_emitter_t em;
    bool failed;
} yaml_out;

static void emit(yaml_out *o, yaml_event_t *ev)
{
    if (!o->failed && !yaml_emitter_emit(&o->em, ev)) o->failed = true;
}

/* A scalar: plain when it reads back as the same string, else quoted. */
static void scalar(yaml_out *o, const char *s, bool is_string)
{
    yaml_event_t ev;
    bool looks_typed = false;
    if (is_string) {
        char *end;
        errno = 0;
        (void)strtod(s, &end);
        looks_typed = !*s || (*end == 0 && end != s) || !strcasecmp(s, "true") ||
                      !strcasecmp(s, "false") || !strcasecmp(s, "null") || !strcmp(s, "~") ||
                      strstr(s, "{{");
    }
    yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1,
                                 looks_typed ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
                                             : YAML_ANY_SCALAR_STYLE);
    emit(o, &ev);
}

static void map_start(yaml_out *o, bool flow)
{
    yaml_event_t ev;
    yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                        flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE);
    emit(o, &ev);
}

static void map_end(yaml_out *o)
{
    yaml_event_t ev;
    yaml_mapping_end_event_initialize(&ev);
    emit(o, &ev);
}

static void pair(yaml_out *o, const char *k, const char *v)
{
    scalar(o, k, false);
    scalar(o, v, true);
}

/* One step with one key: "- page: /x". */
static void step(yaml_out *o, const char *k, const char *v)
{
    map_start(o, false);
    pair(o, k, v);
    map_end(o);
}

/* A JSON value as YAML: scalars as such, the rest as {literal: ...}. */
static void json_value(yaml_out *o, json_t *v)
{
    char buf[64];
    switch (json_typeof(v)) {
    case JSON_STRING:
        scalar(o, json_string_value(v), true);
        return;
    case JSON_INTEGER:
        snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
        scalar(o, buf, false);
        return;
    case JSON_REAL:
        snprintf(buf, sizeof(buf), "%.17g", json_real_value(v));
        scalar(o, buf, false);
        return;
    case JSON_TRUE:
    case JSON_FALSE:
        scalar(o, json_is_true(v) ? "true" : "false", false);
        return;
    case JSON_NULL:
        scalar(o, "null", false);
        return;
    default: {
        /* Objects and arrays go as {literal: ...}, in YAML's flow style. */
        map_start(o, true);
        scalar(o, "literal", false);
        yaml_event_t ev;
        if (json_is_object(v)) {
            map_start(o, true);
            const char *k;
            json_t *x;
            json_object_foreach(v, k, x)
            {
                scalar(o, k, true);
                json_value(o, x);
            }
            map_end(o);
        } else {
            yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_FLOW_SEQUENCE_STYLE);
            emit(o, &ev);
            size_t i;
            json_t *x;
            json_array_foreach(v, i, x) json_value(o, x);
            yaml_sequence_end_event_initialize(&ev);
            emit(o, &ev);
        }
        map_end(o);
    }
    }
}

/* "850ms", "1.5s": what a person writes. */
static void think_text(int64_t ns, char *buf, size_t cap)
{
    if (ns < 1000000000LL)
        snprintf(buf, cap, "%lldms", (long long)((ns / 1000000 + 5) / 10 * 10));
    else if (ns % 1000000000LL < 50000000LL || ns >= 10000000000LL)
        snprintf(buf, cap, "%llds", (long long)((ns + 500000000LL) / 1000000000LL));
    else
        snprintf(buf, cap, "%.1fs", (double)ns / 1e9);
}

/* ---- the import ---------------------------------------------------------------------- */

/* A step of the flow being made; emitted once the whole recording is read,
 * so that clicks repeated alike can fold into a repeat. */
typedef struct istep {
    enum { IS_PAGE, IS_SSE, IS_THINK, IS_ACTION, IS_WAIT, IS_GET, IS_CLOSE } kind;
    char *text;      /* page and get: the path; action: the name */
    json_t *signals; /* action: those the user set (may be empty) */
    int64_t think_ns;
} istep;

typedef struct importer {
    const hm_har_opts *opt;
    tally t;
    istep *steps;
    size_t n, cap;
    double last_end_ms; /* end of the last request the user waited for */
    bool page_open, sse_open;
    json_t *stream_values; /* what the current page's stream carried */
} importer;

static istep *add(importer *im, int kind, const char *text)
{
    if (im->n == im->cap) {
        size_t cap = im->cap ? im->cap * 2 : 32;
        istep *ns = hm_realloc(im->steps, cap * sizeof(*ns));
        if (!ns) return NULL;
        im->steps = ns;
        im->cap = cap;
    }
    istep *st = &im->steps[im->n++];
    memset(st, 0, sizeof(*st));
    st->kind = kind;
    st->text = text ? hm_strdup(text) : NULL;
    return st;
}

static void think_before(importer *im, const entry *en)
{
    if (im->last_end_ms <= 0) return;
    /* In double until clamped: a recording's clock may jump by centuries,
     * more nanoseconds than an int64_t holds. */
    double gap_ns = (en->start_ms - im->last_end_ms) * 1e6 * im->opt->think_scale;
    if (!(gap_ns >= (double)im->opt->min_think_ns)) return;
    int64_t ns = gap_ns >= (double)im->opt->max_think_ns ? im->opt->max_think_ns : (int64_t)gap_ns;
    istep *st = add(im, IS_THINK, NULL);
    if (st) st->think_ns = ns;
}

/* The stream the page opened, read for the values the server sent. */
static void load_stream(importer *im, const entry *sse)
{
    json_decref(im->stream_values);
    im->stream_values = json_object();
    const char *text =
        str_at(json_object_get(json_object_get(sse->e, "response"), "content"), "text");
    if (*text) stream_read(im->stream_values, text);
}

static void do_action(importer *im, const entry *en, const char *id)
{
    think_before(im, en);
    json_t *post = json_object_get(json_object_get(en->e, "request"), "postData");
    json_t *body = json_loads(str_at(post, "text"), 0, NULL);
    const char *ctx = json_string_value(json_object_get(body, "via_ctx"));
    bool have_stream = im->stream_values && json_object_size(im->stream_values) > 0;
    json_t *keep = json_object();
    const char *key;
    json_t *v;
    json_object_foreach(body, key, v)
    {
        if (!strcmp(key, "via_ctx") || key[0] == '_') continue;
        bool echo;
        if (im->opt->signals == HM_HAR_SIGNALS_ALL)
            echo = false;
        else if (im->opt->signals == HM_HAR_SIGNALS_NONE)
            echo = true;
        else if (have_stream)
            echo = echoed(im->stream_values, key, v);
        else {
            echo = json_is_number(v);
            im->t.fallback_signals = im->t.fallback_signals || echo;
        }
        if (echo) continue;
        char name[256];
        signal_name(key, ctx, name, sizeof(name));
        json_object_set(keep, name, v);
    }
    char name[256];
    const char *q = strchr(id, '?');
    snprintf(name, sizeof(name), "%.*s", (int)(q ? (size_t)(q - id) : strlen(id)), id);
    istep *st = add(im, IS_ACTION, name);
    if (st)
        st->signals = keep;
    else
        json_decref(keep);
    add(im, IS_WAIT, NULL);
    json_decref(body);
    im->t.actions++;
    im->last_end_ms = en->end_ms;
}

static void read_entries(importer *im, entry *es, size_t n, const char *origin)
{
    for (size_t i = 0; i < n; i++) {
        entry *en = &es[i];
        const char *id;
        if (strcmp(en->origin, origin)) {
            im->t.foreign++;
        } else if (path_is(en->path, "/_via")) {
            im->t.devbar++; /* php-via's Dev Bar (devMode) */
        } else if (!strcmp(en->method, "GET") && ends_with_path(en->path, "/_sse")) {
            if (im->sse_open || !im->page_open) {
                im->t.reconnects++;
                continue;
            }
            add(im, IS_SSE, NULL);
            im->sse_open = true;
            load_stream(im, en);
            if (en->start_ms > im->last_end_ms) im->last_end_ms = en->start_ms;
        } else if ((id = action_of(en)) != NULL) {
            if (!im->page_open) {
                im->t.pageless++;
                continue;
            }
            /* The page's stream is missing from the recording: its wait
             * reads one, and Datastar opened it, so open it. */
            if (!im->sse_open) {
                add(im, IS_SSE, NULL);
                im->sse_open = true;
            }
            do_action(im, en, id);
        } else if (!strcmp(en->method, "POST") && ends_with_path(en->path, "/_session/close")) {
            im->t.beacons++;
            /* A later page leaves this one by itself; the last beacon is the end. */
            bool more = false;
            for (size_t k = i + 1; k < n && !more; k++)
                more = !strcmp(es[k].origin, origin) && is_page(&es[k]);
            if (!more && im->page_open) {
                add(im, IS_CLOSE, NULL);
                im->page_open = im->sse_open = false;
            }
        } else if (is_asset(en) || ends_with_path(en->path, "/favicon.ico")) {
            im->t.assets++;
            if (im->opt->keep_assets) add(im, IS_GET, en->path);
        } else if (is_page(en)) {
            think_before(im, en);
            add(im, IS_PAGE, en->path);
            im->t.pages++;
            im->page_open = true;
            im->sse_open = false;
            json_decref(im->stream_values);
            im->stream_values = NULL;
            im->last_end_ms = en->end_ms;
        } else if (!strcmp(en->method, "GET")) {
            add(im, IS_GET, en->path);
            im->t.gets++;
        } else {
            im->t.other++;
        }
    }
}

/* A click: [think] action wait, starting at steps[i]; its length, or 0. */
static size_t click_at(const importer *im, size_t i)
{
    size_t k = i;
    if (k < im->n && im->steps[k].kind == IS_THINK) k++;
    if (k + 1 < im->n && im->steps[k].kind == IS_ACTION && im->steps[k + 1].kind == IS_WAIT)
        return k + 2 - i;
    return 0;
}

static const istep *click_action(const importer *im, size_t i)
{
    return &im->steps[im->steps[i].kind == IS_THINK ? i + 1 : i];
}

static void emit_action(yaml_out *o, const istep *st)
{
    map_start(o, false);
    pair(o, "action", st->text);
    if (json_object_size(st->signals)) {
        const char *key;
        json_t *v;
        scalar(o, "signals", false);
        map_start(o, false);
        json_object_foreach(st->signals, key, v)
        {
            scalar(o, key, true);
            json_value(o, v);
        }
        map_end(o);
    }
    map_end(o);
}

static void emit_think(yaml_out *o, int64_t lo, int64_t hi)
{
    char a[32], b[32], both[70];
    think_text(lo, a, sizeof(a));
    think_text(hi, b, sizeof(b));
    if (strcmp(a, b))
        snprintf(both, sizeof(both), "%s..%s", a, b);
    else
        snprintf(both, sizeof(both), "%s", a);
    step(o, "think", both);
}

static void emit_steps(importer *im, yaml_out *o)
{
    for (size_t i = 0; i < im->n;) {
        /* The same click made several times in a row: a repeat, with the
         * pauses as a range, as a person would write it. */
        size_t len = click_at(im, i), times = 0, k = i;
        int64_t lo = INT64_MAX, hi = 0;
        for (size_t l; (l = click_at(im, k)) != 0; k += l) {
            const istep *a = click_action(im, k), *first = click_action(im, i);
            if (strcmp(a->text, first->text) || !json_equal(a->signals, first->signals)) break;
            int64_t t = im->steps[k].kind == IS_THINK ? im->steps[k].think_ns : 0;
            lo = t < lo ? t : lo;
            hi = t > hi ? t : hi;
            times++;
        }
        if (len && times >= 2) {
            char n[24];
            snprintf(n, sizeof(n), "%zu", times);
            map_start(o, false);
            scalar(o, "repeat", false);
            scalar(o, n, false);
            scalar(o, "steps", false);
            yaml_event_t ev;
            yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
            emit(o, &ev);
            if (hi > 0) emit_think(o, lo, hi);
            emit_action(o, click_action(im, i));
            step(o, "wait", "patch");
            yaml_sequence_end_event_initialize(&ev);
            emit(o, &ev);
            map_end(o);
            i = k;
            continue;
        }
        const istep *st = &im->steps[i++];
        switch (st->kind) {
        case IS_PAGE:
            step(o, "page", st->text);
            break;
        case IS_SSE:
            step(o, "sse", "open");
            break;
        case IS_THINK:
            emit_think(o, st->think_ns, st->think_ns);
            break;
        case IS_ACTION:
            emit_action(o, st);
            break;
        case IS_WAIT:
            step(o, "wait", "patch");
            break;
        case IS_GET:
            step(o, "get", st->text);
            break;
        case IS_CLOSE:
            scalar(o, "close", false);
            break;
        }
    }
}

static void importer_free(importer *im)
{
    for (size_t i = 0; i < im->n; i++) {
        hm_free(im->steps[i].text);
        json_decref(im->steps[i].signals);
    }
    hm_free(im->steps);
    json_decref(im->stream_values);
}

/* in for the header comment: what YAML takes in a file (printable
 * characters, UTF-8 as jansson gave it) kept, the rest (controls, line
 * breaks that would end the comment, U+FFFE) as '?'. */
static const char *comment_text(const char *in, char *out, size_t cap)
{
    const unsigned char *p = (const unsigned char *)in;
    size_t o = 0;
    while (*p && o + 5 < cap) {
        uint32_t u = *p;
        int k = u < 0x80 ? 1 : u < 0xe0 ? 2 : u < 0xf0 ? 3 : 4;
        for (int i = 1; i < k; i++)
            if ((p[i] & 0xc0) != 0x80) k = 1;
        if (k > 1) {
            u &= 0x7f >> k;
            for (int i = 1; i < k; i++)
                u = u << 6 | (p[i] & 0x3f);
        }
        /* NEL, LS and PS are line breaks to libyaml: they would end the comment. */
        bool ok = (u >= 0x20 && u <= 0x7e) ||
                  (u >= 0xa0 && u <= 0xd7ff && u != 0x2028 && u != 0x2029) ||
                  (u >= 0xe000 && u <= 0xfffd) || (u >= 0x10000 && u <= 0x10ffff);
        if (ok && (k > 1 || u < 0x80)) {
            memcpy(out + o, p, (size_t)k);
            o += (size_t)k;
        } else {
            out[o++] = '?';
        }
        p += k;
    }
    out[o] = 0;
    return out;
}

/* "bench-counter" from "/bench/counter?x": a flow's name. */
static void name_from(const char *path, char *name, size_t cap)
{
    size_t k = 0;
    for (const char *p = path; *p && *p != '?' && k + 1 < cap; p++) {
        char c = *p;
        bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (word)
            name[k++] = c;
        else if (k && name[k - 1] != '-')
            name[k++] = '-';
    }
    while (k && name[k - 1] == '-')
        k--;
    name[k] = 0;
    if (!k) snprintf(name, cap, "recorded");
}

static int usage(const char *why)
{
    if (why) fprintf(stderr, "hammer import-har: %s\n", why);
    fprintf(why ? stderr : stdout,
            "usage: hammer import-har [options] FILE.har > flow.yaml\n"
            "\n"
            "Turns a browser's recording of a php-via app into a flow (docs/flows.md).\n"
            "\n"
            "options:\n"
            "  --think-scale X   multiply the recorded pauses by X (1)\n"
            "  --max-think T     longest pause kept (5s); longer ones are cut to T\n"
            "  --min-think T     shorter pauses are dropped (100ms)\n"
            "  --keep-assets     keep static assets (CSS, JS, images, fonts) as get: steps\n"
            "  --signals MODE    auto: only the signals the user set (the default); all:\n"
            "                    every signal the browser sent; none: no signals\n"
            "  --name NAME       the flow's name (default: from the first page)\n");
    return why ? 2 : 0;
}

int hm_import_har_main(int argc, char **argv)
{
    hm_har_opts opt = HM_HAR_OPTS_DEFAULT;
    static const struct option longopts[] = {
        {"think-scale", required_argument, 0, 's'},
        {"max-think", required_argument, 0, 'M'},
        {"min-think", required_argument, 0, 'm'},
        {"keep-assets", no_argument, 0, 'k'},
        {"signals", required_argument, 0, 'S'},
        {"name", required_argument, 0, 'n'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    optind = 1;
    int ch;
    char *end;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 's':
            opt.think_scale = strtod(optarg, &end);
            if (*end || !(opt.think_scale >= 0) || opt.think_scale > 1000)
                return usage("--think-scale takes a number from 0 to 1000");
            break;
        case 'M':
            if (hm_parse_duration(optarg, &opt.max_think_ns) < 0)
                return usage("--max-think takes a duration (e.g. 5s)");
            break;
        case 'm':
            if (hm_parse_duration(optarg, &opt.min_think_ns) < 0)
                return usage("--min-think takes a duration (e.g. 100ms)");
            break;
        case 'k':
            opt.keep_assets = true;
            break;
        case 'S':
            if (!strcmp(optarg, "auto"))
                opt.signals = HM_HAR_SIGNALS_AUTO;
            else if (!strcmp(optarg, "all"))
                opt.signals = HM_HAR_SIGNALS_ALL;
            else if (!strcmp(optarg, "none"))
                opt.signals = HM_HAR_SIGNALS_NONE;
            else
                return usage("--signals takes auto, all or none");
            break;
        case 'n':
            opt.name = optarg;
            break;
        case 'h':
            return usage(NULL);
        default:
            return usage("unknown option");
        }
    }
    if (optind + 1 != argc) return usage("expected one HAR file");
    opt.path = argv[optind];

    char why[4200];
    json_t *har = hm_json_file_load(opt.path, why, sizeof(why));
    if (!har) {
        fprintf(stderr, "hammer import-har: %s\n", why);
        return 2;
    }
    int rc = hm_import_har_doc(har, &opt, stdout, stderr);
    json_decref(har);
    return rc;
}

int hm_import_har_doc(json_t *har, const hm_har_opts *optp, FILE *out, FILE *err)
{
    const hm_har_opts opt = *optp;
    json_t *entries = json_object_get(json_object_get(har, "log"), "entries");
    size_t n = json_array_size(entries);
    entry *es = n ? hm_calloc(n, sizeof(*es)) : NULL;
    if (!json_is_array(entries) || !n || !es) {
        fprintf(err, "hammer import-har: %s has no log.entries (is it a HAR file?)\n", opt.path);
        hm_free(es);
        return 2;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (entry_read(json_array_get(entries, i), &es[m]) == 0) m++;
    qsort(es, m, sizeof(*es), by_start);
    const entry *first = NULL;
    for (size_t i = 0; i < m && !first; i++)
        if (is_page(&es[i])) first = &es[i];
    if (!first) {
        fprintf(err, "hammer import-har: %s holds no page load (a GET of an HTML page)\n",
                opt.path);
        hm_free(es);
        return 2;
    }

    char name[128];
    name_from(first->path, name, sizeof(name));
    json_t *browser = json_object_get(json_object_get(har, "log"), "browser");
    json_t *creator = json_object_get(json_object_get(har, "log"), "creator");
    const char *by = json_is_object(browser) ? str_at(browser, "name") : str_at(creator, "name");
    const char *ver = json_is_object(browser) ? str_at(browser, "version") : "";
    char day[16] = "";
    time_t when = (time_t)(first->start_ms / 1000);
    struct tm tm;
    if (gmtime_r(&when, &tm)) strftime(day, sizeof(day), "%Y-%m-%d", &tm);

    /* The steps go to a buffer first: the header counts what they left out. */
    char *body = NULL;
    size_t body_len = 0;
    FILE *mem = open_memstream(&body, &body_len);
    yaml_out o = {0};
    importer im = {.opt = &opt};
    yaml_emitter_initialize(&o.em);
    yaml_emitter_set_output_file(&o.em, mem);
    yaml_emitter_set_indent(&o.em, 2);
    yaml_emitter_set_width(&o.em, 100);
    yaml_emitter_set_unicode(&o.em, 1);
    yaml_event_t ev;
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    emit(&o, &ev);
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    emit(&o, &ev);
    map_start(&o, false);
    pair(&o, "name", opt.name ? opt.name : name);
    scalar(&o, "steps", false);
    yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
    emit(&o, &ev);
    read_entries(&im, es, m, first->origin);
    emit_steps(&im, &o);
    int rc = 0;
    yaml_sequence_end_event_initialize(&ev);
    emit(&o, &ev);
    map_end(&o);
    yaml_document_end_event_initialize(&ev, 1);
    emit(&o, &ev);
    yaml_stream_end_event_initialize(&ev);
    emit(&o, &ev);
    yaml_emitter_delete(&o.em);
    fclose(mem);
    if (rc < 0 || o.failed) {
        fprintf(err, "hammer import-har: could not write the flow\n");
        rc = 1;
    } else if (!im.n) {
        /* The first page was also an asset, the Dev Bar's, ...: a flow of
         * no steps, which hammer refuses to run. */
        fprintf(err,
                "hammer import-har: %s holds nothing to replay: its first page load (%s) "
                "and every other entry are of kinds left out\n",
                opt.path, first->path);
        rc = 2;
    } else {
        tally *t = &im.t;
        char cpath[1024], cby[256], cver[128], corigin[1024];
        fprintf(out, "# Imported by hammer import-har from %s (%s%s%s, %s, %s).\n",
                comment_text(opt.path, cpath, sizeof(cpath)), comment_text(by, cby, sizeof(cby)),
                ver[0] ? " " : "", comment_text(ver, cver, sizeof(cver)), day,
                comment_text(first->origin, corigin, sizeof(corigin)));
        char left[400] = "";
        size_t ln = 0;
        const struct {
            int n;
            const char *what;
        } parts[] = {
            {opt.keep_assets ? 0 : t->assets, "static asset"},
            {t->devbar, "Dev Bar request"},
            {t->reconnects, "SSE reconnect"},
            {t->foreign, "request to other hosts"},
            {t->other, "request of another method"},
            {t->pageless, "page-less action"},
        };
        for (size_t i = 0; i < HM_ARRAY_LEN(parts); i++)
            if (parts[i].n && ln < sizeof(left))
                ln += (size_t)snprintf(left + ln, sizeof(left) - ln, "%s%d %s%s", ln ? ", " : "",
                                       parts[i].n, parts[i].what, parts[i].n == 1 ? "" : "s");
        fprintf(out, "# %d page load%s, %d action%s, %d other GET%s. %s%s%s\n", t->pages,
                t->pages == 1 ? "" : "s", t->actions, t->actions == 1 ? "" : "s", t->gets,
                t->gets == 1 ? "" : "s", ln ? "Left out: " : "", left, ln ? "." : "");
        char mx[32];
        think_text(opt.max_think_ns, mx, sizeof(mx));
        /* A recording is one user's journey over pages: the browser model
         * (the hammer model refuses a page after an action). */
        fprintf(out,
                "# Think times are the recorded pauses x%g, at most %s. Run it (in the browser\n"
                "# model: one tab per virtual user) with\n"
                "#   hammer --mode browser -c 20 -n 1000 flow THIS.yaml\n",
                opt.think_scale, mx);
        fwrite(body, 1, body_len, out);
        fflush(out);
        if (t->fallback_signals)
            fprintf(err, "hammer import-har: the recording holds no SSE stream content, so numeric "
                         "signals were taken for server state and left out (--signals all keeps "
                         "them)\n");
        rc = 0;
    }
    free(body);
    importer_free(&im);
    hm_free(es);
    return rc;
}
