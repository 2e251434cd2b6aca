#include "proto/via_html.h"

#include "base/hm_base.h"
#include "proto/json_limit.h"

#include <jansson.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

/* Called for each attribute of each start tag; a non-zero return stops the
 * scan and becomes its result. Values are raw (not yet entity-decoded). */
typedef int (*attr_fn)(const char *tag, size_t tl, const char *name, size_t nl, const char *val,
                       size_t vl, void *ud);

static bool html_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static bool ascii_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool eq_ci(const char *p, size_t n, const char *lit)
{
    return strlen(lit) == n && strncasecmp(p, lit, n) == 0;
}

static const char *find_ci(const char *p, const char *end, const char *needle)
{
    size_t n = strlen(needle);
    for (; (size_t)(end - p) >= n; p++)
        if (strncasecmp(p, needle, n) == 0) return p;
    return NULL;
}

static const char *find_str(const char *p, const char *end, const char *needle)
{
    size_t n = strlen(needle);
    return (size_t)(end - p) >= n ? memmem(p, (size_t)(end - p), needle, n) : NULL;
}

/* Elements whose content is text, not markup: a '<meta' or 'data-on:' in
 * there is not a tag. */
static bool raw_text_element(const char *tag, size_t tl)
{
    return eq_ci(tag, tl, "script") || eq_ci(tag, tl, "style") || eq_ci(tag, tl, "textarea") ||
           eq_ci(tag, tl, "title");
}

/* A reduced HTML tokenizer: enough to visit start-tag attributes the way a
 * browser sees them. A truncated page ends the scan quietly. */
static int scan_tags(const char *s, size_t len, attr_fn fn, void *ud)
{
    const char *p = s, *end = s + len;
    while (p < end) {
        const char *lt = memchr(p, '<', (size_t)(end - p));
        if (!lt || lt + 1 >= end) return 0;
        p = lt + 1;
        if (end - p >= 3 && p[0] == '!' && p[1] == '-' && p[2] == '-') {
            const char *close = find_str(p + 3, end, "-->");
            if (!close) return 0;
            p = close + 3;
            continue;
        }
        if (*p == '!' || *p == '/' || *p == '?') { /* doctype, end tag, bogus comment */
            const char *gt = memchr(p, '>', (size_t)(end - p));
            if (!gt) return 0;
            p = gt + 1;
            continue;
        }
        if (!ascii_alpha(*p)) continue; /* a literal '<' in text */

        const char *tag = p;
        while (p < end && !html_space(*p) && *p != '/' && *p != '>')
            p++;
        size_t tl = (size_t)(p - tag);

        for (;;) {
            while (p < end && (html_space(*p) || *p == '/'))
                p++;
            if (p >= end) return 0;
            if (*p == '>') {
                p++;
                break;
            }
            const char *an = p++; /* a leading '=' belongs to the name */
            while (p < end && !html_space(*p) && *p != '/' && *p != '>' && *p != '=')
                p++;
            size_t al = (size_t)(p - an);
            while (p < end && html_space(*p))
                p++;
            const char *av = "";
            size_t vl = 0;
            if (p < end && *p == '=') {
                p++;
                while (p < end && html_space(*p))
                    p++;
                if (p < end && (*p == '"' || *p == '\'')) {
                    const char *close = memchr(p + 1, *p, (size_t)(end - p - 1));
                    if (!close) return 0;
                    av = p + 1;
                    vl = (size_t)(close - av);
                    p = close + 1;
                } else {
                    av = p;
                    while (p < end && !html_space(*p) && *p != '>')
                        p++;
                    vl = (size_t)(p - av);
                }
            }
            int r = fn(tag, tl, an, al, av, vl, ud);
            if (r) return r;
        }

        if (raw_text_element(tag, tl)) {
            char closing[16] = "</";
            memcpy(closing + 2, tag, tl); /* tl <= 8 for the raw-text names */
            closing[2 + tl] = '\0';
            const char *c = find_ci(p, end, closing);
            if (!c) return 0;
            p = c;
        }
    }
    return 0;
}

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decodes a numeric reference at s ("&#..." / "&#x..."); returns the bytes
 * consumed (0 if it is not one) and writes its UTF-8 at o. */
static size_t numeric_ref(const char *s, const char *end, char *o, size_t *olen)
{
    const char *p = s + 2;
    bool hex = p < end && (*p == 'x' || *p == 'X');
    if (hex) p++;
    const char *digits = p;
    uint32_t cp = 0;
    for (; p < end; p++) {
        int d;
        if (*p >= '0' && *p <= '9')
            d = *p - '0';
        else if (hex && *p >= 'a' && *p <= 'f')
            d = *p - 'a' + 10;
        else if (hex && *p >= 'A' && *p <= 'F')
            d = *p - 'A' + 10;
        else
            break;
        cp = cp > 0x10FFFF ? cp : cp * (hex ? 16 : 10) + (uint32_t)d;
    }
    if (p == digits) return 0;
    if (p < end && *p == ';') p++;
    /* HTML §13.2.5.80: NUL, surrogates and out-of-range become U+FFFD. */
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
    *olen = put_utf8(o, cp);
    return (size_t)(p - s);
}

/* Entity-decodes an attribute value into a new NUL-terminated string. Every
 * reference is at least as long as its UTF-8, so n + 1 bytes suffice. */
static char *decode_attr(const char *s, size_t n, size_t *out_len)
{
    static const struct {
        const char *ref;
        char ch;
    } named[] = {{"&quot;", '"'}, {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&apos;", '\''}};
    char *out = hm_alloc(n + 1);
    if (!out) return NULL;
    const char *p = s, *end = s + n;
    size_t o = 0;
    while (p < end) {
        if (*p != '&') {
            out[o++] = *p++;
            continue;
        }
        if (end - p >= 3 && p[1] == '#') {
            size_t w, used = numeric_ref(p, end, out + o, &w);
            if (used) {
                p += used;
                o += w;
                continue;
            }
        }
        size_t i;
        for (i = 0; i < HM_ARRAY_LEN(named); i++) {
            size_t rl = strlen(named[i].ref);
            if ((size_t)(end - p) >= rl && memcmp(p, named[i].ref, rl) == 0) {
                out[o++] = named[i].ch;
                p += rl;
                break;
            }
        }
        if (i == HM_ARRAY_LEN(named)) out[o++] = *p++;
    }
    out[o] = '\0';
    *out_len = o;
    return out;
}

struct meta_find {
    const char *val;
    size_t vl;
};

static int meta_visit(const char *tag, size_t tl, const char *name, size_t nl, const char *val,
                      size_t vl, void *ud)
{
    struct meta_find *m = ud;
    if (!eq_ci(tag, tl, "meta") || !eq_ci(name, nl, "data-signals")) return 0;
    m->val = val;
    m->vl = vl;
    return 1;
}

_Static_assert(HM_VIA_MAX_SIGNALS_BYTES == 64 << 10, "update the size in the error text");
_Static_assert(HM_JSON_MAX_DEPTH == 64, "update the depth in the error text");

int hm_via_extract_ctx(const char *html, size_t len, char **ctx_out, const char **why)
{
    const char *unused;
    if (!why) why = &unused;
    *ctx_out = NULL;
    *why = NULL;
    struct meta_find m = {0};
    if (!scan_tags(html, len, meta_visit, &m)) {
        *why = "no <meta data-signals> tag";
        return -HM_ENOTFOUND;
    }
    /* Entity decoding never lengthens the text, so this bounds it too. */
    if (m.vl > HM_VIA_MAX_SIGNALS_BYTES) {
        *why = "<meta data-signals> value over 64 KiB";
        return -HM_ETOOBIG;
    }

    size_t n;
    char *text = decode_attr(m.val, m.vl, &n);
    if (!text) return -ENOMEM;
    json_t *root;
    int rc = hm_json_load_bounded(text, n, 0, &root, NULL);
    hm_free(text);
    if (rc < 0) {
        *why = rc == -HM_ETOOBIG ? "<meta data-signals> JSON nests deeper than 64 levels"
                                 : "<meta data-signals> value is not a JSON object";
        return rc;
    }

    json_t *ctx = json_is_object(root) ? json_object_get(root, "via_ctx") : NULL;
    if (!json_is_object(root)) {
        rc = -HM_EPARSE;
        *why = "<meta data-signals> value is not a JSON object";
    } else if (!ctx) {
        rc = -HM_ENOTFOUND;
        *why = "<meta data-signals> has no via_ctx";
    } else if (!json_is_string(ctx)) {
        rc = -HM_EPARSE;
        *why = "via_ctx in <meta data-signals> is not a string";
    } else {
        *ctx_out = hm_strndup(json_string_value(ctx), json_string_length(ctx));
        rc = *ctx_out ? 0 : -ENOMEM;
    }
    json_decref(root);
    return rc;
}

struct action_find {
    const char *name;
    size_t nl;
    char *hashed; /* first pre-0.12 match, kept while looking for a hashless one */
    char *hashless;
    int err;
};

enum { ACTION_NONE, ACTION_HASHLESS, ACTION_HASHED };

/* Classifies a URL: does it end in /_action/<name> or /_action/<name>-<hex>?
 * Every "/_action/" is tried, so a base path may itself contain one. */
static int classify_url(const char *u, size_t ul, const char *name, size_t nl)
{
    static const char seg[] = "/_action/";
    const size_t sl = sizeof(seg) - 1;
    for (const char *p = u, *end = u + ul; (p = find_str(p, end, seg)) != NULL; p++) {
        const char *id = p + sl;
        size_t il = (size_t)(end - id);
        if (il < nl || memcmp(id, name, nl) != 0) continue;
        if (il == nl) return ACTION_HASHLESS;
        if (id[nl] != '-' || il == nl + 1) continue;
        size_t i = nl + 1;
        while (i < il && ((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f') ||
                          (id[i] >= 'A' && id[i] <= 'F')))
            i++;
        if (i == il) return ACTION_HASHED;
    }
    return ACTION_NONE;
}

/* A URL hammer can put in a request line: no space and no control byte (a
 * NUL would also cut the copy short of the action it names). */
static bool usable_url(const char *u, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)u[i] <= 0x20 || u[i] == 0x7f) return false;
    return true;
}

/* Looks at every @post('<url>') in one decoded attribute value. */
static int scan_posts(struct action_find *a, const char *v, size_t n)
{
    const char *end = v + n;
    for (const char *p = v; (p = find_str(p, end, "@post(")) != NULL;) {
        p += 6;
        while (p < end && html_space(*p))
            p++;
        if (p >= end || (*p != '\'' && *p != '"' && *p != '`')) continue;
        const char *u = p + 1, *close = memchr(u, *p, (size_t)(end - u));
        if (!close) return 0;
        p = close + 1;
        if (!usable_url(u, (size_t)(close - u))) continue;
        int kind = classify_url(u, (size_t)(close - u), a->name, a->nl);
        if (kind == ACTION_NONE || (kind == ACTION_HASHED && a->hashed)) continue;
        char *copy = hm_strndup(u, (size_t)(close - u));
        if (!copy) {
            a->err = -ENOMEM;
            return 1;
        }
        if (kind == ACTION_HASHLESS) {
            a->hashless = copy;
            return 1;
        }
        a->hashed = copy;
    }
    return 0;
}

static int action_visit(const char *tag, size_t tl, const char *name, size_t nl, const char *val,
                        size_t vl, void *ud)
{
    struct action_find *a = ud;
    (void)tag;
    (void)tl;
    /* data-on:<event> is Datastar 1.0's syntax; data-on-<event> is older. */
    if (nl <= 8 || (strncasecmp(name, "data-on:", 8) != 0 && strncasecmp(name, "data-on-", 8) != 0))
        return 0;
    size_t dn;
    char *decoded = decode_attr(val, vl, &dn);
    if (!decoded) {
        a->err = -ENOMEM;
        return 1;
    }
    int stop = scan_posts(a, decoded, dn);
    hm_free(decoded);
    return stop;
}

int hm_via_find_action(const char *html, size_t len, const char *name, char **url_out)
{
    *url_out = NULL;
    if (!name || !name[0]) return -HM_ENOTFOUND;
    struct action_find a = {.name = name, .nl = strlen(name)};
    scan_tags(html, len, action_visit, &a);
    if (a.err) {
        hm_free(a.hashed);
        return a.err;
    }
    if (a.hashless) {
        hm_free(a.hashed);
        *url_out = a.hashless;
        return 0;
    }
    if (a.hashed) {
        *url_out = a.hashed;
        return 0;
    }
    return -HM_ENOTFOUND;
}

struct action_list {
    char *buf;
    size_t cap, len;
    int n;
};

/* Adds one action id (a -<hex> suffix dropped) unless it is listed already. */
static void list_add(struct action_list *l, const char *id, size_t il)
{
    const char *dash = memchr(id, '-', il);
    if (dash && dash + 1 < id + il) {
        const char *h = dash + 1;
        while (h < id + il && ((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f')))
            h++;
        if (h == id + il) il = (size_t)(dash - id);
    }
    const char *end = l->buf + l->len;
    for (const char *p = l->buf; p < end;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        if ((size_t)(stop - p) == il && memcmp(p, id, il) == 0) return;
        p = comma ? comma + 2 : end;
    }
    int w = snprintf(l->buf + l->len, l->cap - l->len, "%s%.*s", l->n ? ", " : "", (int)il, id);
    if (w > 0 && (size_t)w < l->cap - l->len) {
        l->len += (size_t)w;
        l->n++;
    }
}

static int list_visit(const char *tag, size_t tl, const char *name, size_t nl, const char *val,
                      size_t vl, void *ud)
{
    struct action_list *l = ud;
    (void)tag;
    (void)tl;
    if (nl <= 8 || (strncasecmp(name, "data-on:", 8) != 0 && strncasecmp(name, "data-on-", 8) != 0))
        return 0;
    size_t dn;
    char *v = decode_attr(val, vl, &dn);
    if (!v) return 0;
    const char *end = v + dn;
    for (const char *p = v; (p = find_str(p, end, "@post(")) != NULL;) {
        p += 6;
        while (p < end && html_space(*p))
            p++;
        if (p >= end || (*p != '\'' && *p != '"' && *p != '`')) continue;
        const char *u = p + 1, *close = memchr(u, *p, (size_t)(end - u));
        if (!close) break;
        p = close + 1;
        const char *seg = NULL;
        for (const char *q = u; (q = find_str(q, close, "/_action/")) != NULL; q++)
            seg = q + 9;
        if (seg && seg < close) list_add(l, seg, (size_t)(close - seg));
    }
    hm_free(v);
    return 0;
}

int hm_via_list_actions(const char *html, size_t len, char *buf, size_t cap)
{
    struct action_list l = {.buf = buf, .cap = cap};
    if (cap) buf[0] = '\0';
    if (cap) scan_tags(html, len, list_visit, &l);
    return l.n;
}
