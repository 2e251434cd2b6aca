/* via.c — php-via's semantics for bench_app (v0.12.0, per worker): request
 * routing, contexts and sessions, TAB signals, page rendering, actions, SSE
 * streams with per-context patch queues, context cleanup, /_health and
 * /_session/close. Each behaviour names the php-via source it follows; see
 * /work/shared/docs/php-via-protocol.md.
 *
 * Contexts: a page GET creates one (id "<route>_/<16 hex>") bound to the
 * request's session; it lives in a chained hash map until its cleanup runs.
 * As in php-via, cleanup is scheduled only when a context's last SSE stream
 * ends or on POST /_session/close; contexts of GETs that never open SSE stay
 * for the life of the run.
 *
 * Patch queues: one ring of 50 event buffers per context (php-via's
 * Channel(50)); a push to a full ring drops the oldest event. An SSE connect
 * gives the context a fresh queue and the stream keeps a reference to it, so
 * an older stream of the same context keeps reading its old queue, which
 * nobody fills any more: it goes silent, as in php-via. Slot buffers keep
 * their capacity and the stream swaps its own buffer with the slot it pops,
 * so steady-state actions and streams allocate nothing.
 *
 * Signals: TAB signals are ints or strings (ba_sig_type). Client values are
 * cast to the signal's type as PHP would ((int) / (string)) and replace the
 * server's without marking them changed; patches encode them as php-via's
 * json_encode() does (escaped slashes, \uXXXX for non-ASCII).
 *
 * Views: a route's view is static HTML (page tail and sync event built
 * once) or a render function run for each page GET and each SSE sync, as
 * php-via re-runs a view on sync().
 *
 * Workers: everything here belongs to one worker's ba_app and runs on its
 * thread; the only shared things are the worker's counters in app->ws
 * (published whenever they change) and the other workers' counters, read
 * by /_health.
 *
 * Memory: contexts, queues and route tables are hm_alloc'd and owned by the
 * app (see internal.h); string signal values live in per-context buffers
 * that keep their capacity; jansson values are per request and released
 * before the handler returns. */
#include "bench_app/internal.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/random.h>

#define SESSION_COOKIE "via_session_id"

/* datastar-php 1.0's executeScript('window.location.reload()'). */
static const char RELOAD_EVENT[] =
    "event: datastar-patch-elements\n"
    "data: selector body\n"
    "data: mode append\n"
    "data: elements <script data-effect=\"el.remove()\">window.location.reload()</script>\n\n";

/* The page shell: a trimmed php-via shell.html (no stylesheet, no debug
 * sidebar) that still makes a browser open SSE and send the close beacon. */
static const char SHELL_TOP[] =
    "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"UTF-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1.0\">\n"
    "<meta data-signals='";
static const char SHELL_AFTER_SIGNALS[] =
    "'>\n<meta data-indicator=\"_connecting\" "
    "data-on-interval__duration.15s.leading=\"!$_connecting && @get('/_sse')\">\n"
    "<meta data-init=\"window.addEventListener('beforeunload', (evt) => { "
    "navigator.sendBeacon('/_session/close', '";
static const char SHELL_AFTER_BEACON[] =
    "'); });\">\n<script type=\"module\" src=\"/datastar.js\"></script>\n</head>\n<body>\n"
    "<div class=\"container\" id=\"content\">\n";
static const char SHELL_BOTTOM[] = "\n</div>\n</body>\n</html>\n";

/* Per-route data derived once from the route table. */
struct ba_route_rt {
    const ba_route_def *def;
    size_t path_len;
    /* page = page_a + hex + page_b + hex + page_c */
    ba_buf page_a, page_b, page_c;
    /* "_" + sanitize(path) + "__": wire id = name + wire_mid + hex */
    char wire_mid[BA_ROUTE_MAX + 4];
    size_t wire_mid_len;
    ba_buf elements_event; /* the sync's datastar-patch-elements event (static views) */
    bool has_str;          /* some signal is a BA_SIG_STR */
};

typedef struct ba_queue {
    int refs;
    size_t head, len;
    uint64_t dropped;
    hm_chan *bell; /* sse_poll_ms == 0: poked on every push; capacity 1 */
    ba_buf slot[BA_QUEUE_CAP];
} ba_queue;

struct ba_ctx {
    ba_ctx *hnext;         /* hash chain */
    ba_ctx *pprev, *pnext; /* app->pending list */
    bool pending;
    int64_t cleanup_at;
    ba_app *app;
    const ba_route_rt *route;
    uint64_t hash;
    size_t id_len;
    char id[BA_CTX_ID_MAX];
    char hex[BA_CTX_HEX + 1];
    char *session; /* session_inline, or hm_alloc'd when longer */
    size_t session_len;
    char session_inline[BA_SESSION_HEX + 8];
    int64_t sig[BA_MAX_SIGNALS];
    ba_buf *str;      /* routes with string signals: one buffer per signal (BA_SIG_STR ones used) */
    uint32_t changed; /* bit i: signal i changed since it was last queued */
    bool connected_once; /* an SSE stream has synced it */
    int sse_count;
    int busy; /* actions running (they may block): no cleanup meanwhile */
    ba_queue *queue;
};

/* ---- small helpers -------------------------------------------------------- */

_Static_assert(BA_MAX_SIGNALS < 32, "signal masks are uint32_t");

/* The mask with a bit for each of the route's TAB signals. */
static uint32_t all_signals(const ba_route_rt *rt)
{
    return (1u << rt->def->n_signals) - 1;
}

static bool str_eq(const char *p, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    return n == l && (n == 0 || memcmp(p, lit, n) == 0);
}

static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* PHP urldecode() of n bytes into d (room for n): '+' is a space, %XX a
 * byte, a bad escape stays as is. Returns the decoded length. */
static size_t url_decode_to(char *d, const char *s, size_t n)
{
    char *start = d;
    for (size_t i = 0; i < n; i++) {
        int hi, lo;
        if (s[i] == '+') {
            *d++ = ' ';
        } else if (s[i] == '%' && i + 2 < n && (hi = hexval((unsigned char)s[i + 1])) >= 0 &&
                   (lo = hexval((unsigned char)s[i + 2])) >= 0) {
            *d++ = (char)(hi << 4 | lo);
            i += 2;
        } else {
            *d++ = s[i];
        }
    }
    return (size_t)(d - start);
}

static int url_decode_append(ba_buf *out, const char *s, size_t n)
{
    int rc = ba_buf_reserve(out, n);
    if (rc) return rc;
    out->len += url_decode_to(out->data + out->len, s, n);
    out->data[out->len] = '\0';
    return 0;
}

/* Finds key in an application/x-www-form-urlencoded string the way PHP's
 * parse_str fills $_GET/$_POST (names decoded; the last occurrence wins) and
 * decodes its value into out (reset first). */
static bool form_find(const char *s, size_t n, const char *key, ba_buf *out)
{
    bool found = false;
    size_t klen = strlen(key);
    size_t pos = 0;
    while (pos < n) {
        const char *seg = s + pos;
        const char *amp = memchr(seg, '&', n - pos);
        size_t seglen = amp ? (size_t)(amp - seg) : n - pos;
        pos += seglen + 1;
        const char *eq = memchr(seg, '=', seglen);
        size_t namelen = eq ? (size_t)(eq - seg) : seglen;
        char name[96];
        /* Longer than 3 bytes per key byte: it cannot decode to the key. */
        if (namelen == 0 || namelen > 3 * klen || namelen > sizeof(name)) continue;
        if (!str_eq(name, url_decode_to(name, seg, namelen), key)) continue;
        out->len = 0;
        const char *v = eq ? eq + 1 : seg + seglen;
        size_t vlen = eq ? seglen - namelen - 1 : 0;
        if (url_decode_append(out, v, vlen) < 0) return false;
        found = true;
    }
    return found;
}

static bool is_form(const hm_http_req_parser *r)
{
    static const char ct[] = "application/x-www-form-urlencoded";
    return r->hdr.content_type.ptr && r->hdr.content_type.len >= sizeof(ct) - 1 &&
           strncasecmp(r->hdr.content_type.ptr, ct, sizeof(ct) - 1) == 0;
}

/* True when JSON text nests no deeper than BA_JSON_MAX_DEPTH. jansson's
 * parser recurses once per level (up to 2048), which a 64 KiB coroutine
 * stack cannot afford, so deeper input is refused before it gets there. */
static bool json_depth_ok(const char *s, size_t n)
{
    int depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (in_str) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_str = false;
        } else if (ch == '"') {
            in_str = true;
        } else if (ch == '[' || ch == '{') {
            if (++depth > BA_JSON_MAX_DEPTH) return false;
        } else if (ch == ']' || ch == '}') {
            depth--;
        }
    }
    return true;
}

/* json_decode($s, true) kept only when it is an array or object: jansson
 * without JSON_DECODE_ANY accepts exactly those at the top. */
static json_t *parse_json(const char *s, size_t n)
{
    if (!n || !json_depth_ok(s, n)) return NULL;
    json_error_t err;
    return json_loadb(s, n, 0, &err);
}

/* php-via's Via::parseSignals(): ?datastar= first (even on POST; a bad value
 * means no signals, with no fallback), then a raw body that decodes to an
 * array/object, then the form field datastar. NULL = no signals. */
static json_t *read_signals(ba_conn *c)
{
    const hm_http_req_parser *r = &c->req;
    if (r->query.ptr && form_find(r->query.ptr, r->query.len, "datastar", &c->scratch))
        return parse_json(c->scratch.data, c->scratch.len);
    /* PHP's `if ($body)`: "" and "0" are false. */
    if (r->body_len && !(r->body_len == 1 && r->body[0] == '0')) {
        json_t *j = parse_json(r->body, r->body_len);
        if (j) return j;
    }
    if (is_form(r) && form_find(r->body, r->body_len, "datastar", &c->scratch))
        return parse_json(c->scratch.data, c->scratch.len);
    return NULL;
}

/* OpenSwoole's value of cookie `name` (openswoole_http_parse_cookie): the
 * last occurrence wins, surrounding double quotes go, the value is
 * url-decoded, and one of 4096 bytes or more is dropped. Decodes into out
 * (BA_COOKIE_MAX bytes). */
static bool cookie_get(hm_http_str hdr, const char *name, char *out, size_t *olen)
{
    if (!hdr.ptr) return false;
    size_t nlen = strlen(name);
    const char *val = NULL, *p = hdr.ptr, *end = hdr.ptr + hdr.len;
    size_t vlen = 0;
    while (p < end) {
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *pe = semi ? semi : end;
        while (p < pe && (*p == ' ' || *p == '\t'))
            p++;
        const char *eq = memchr(p, '=', (size_t)(pe - p));
        if (eq && (size_t)(eq - p) == nlen && memcmp(p, name, nlen) == 0) {
            val = eq + 1;
            vlen = (size_t)(pe - val);
        }
        if (!semi) break;
        p = semi + 1;
    }
    if (!val || vlen >= BA_COOKIE_MAX) return false;
    if (vlen && val[0] == '"') val++, vlen--;
    if (vlen && val[vlen - 1] == '"') vlen--;
    *olen = url_decode_to(out, val, vlen);
    return true;
}

/* The request's session as SessionManager reads it; "" and "0" count as
 * absent (PHP's `!$sessionId`). out has BA_COOKIE_MAX bytes. */
static bool session_of(const ba_conn *c, char *out, size_t *olen)
{
    if (!cookie_get(c->req.hdr.cookie, SESSION_COOKIE, out, olen)) return false;
    return *olen > 0 && !(*olen == 1 && out[0] == '0');
}

/* PHP urlencode(), as OpenSwoole's cookie() applies it to the value. */
static int url_encode_append(ba_buf *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    int rc = ba_buf_reserve(out, 3 * n);
    if (rc) return rc;
    char *d = out->data + out->len;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '_' || ch == '.') {
            *d++ = (char)ch;
        } else if (ch == ' ') {
            *d++ = '+';
        } else {
            *d++ = '%';
            *d++ = hex[ch >> 4];
            *d++ = hex[ch & 15];
        }
    }
    out->len = (size_t)(d - out->data);
    out->data[out->len] = '\0';
    return 0;
}

/* ---- random ids ----------------------------------------------------------- */

static int random_hex(ba_app *app, char *out, size_t nbytes)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < nbytes; i++) {
        if (app->rnd_pos == sizeof(app->rnd)) {
            size_t got = 0;
            while (got < sizeof(app->rnd)) {
                ssize_t k = getrandom(app->rnd + got, sizeof(app->rnd) - got, 0);
                if (k < 0 && errno == EINTR) continue;
                if (k < 0) return -errno;
                got += (size_t)k;
            }
            app->rnd_pos = 0;
        }
        uint8_t b = app->rnd[app->rnd_pos++];
        out[2 * i] = digits[b >> 4];
        out[2 * i + 1] = digits[b & 15];
    }
    out[2 * nbytes] = '\0';
    return 0;
}

/* ---- patch queues ----------------------------------------------------------- */

static ba_queue *queue_new(ba_app *app)
{
    ba_queue *q = hm_calloc(1, sizeof(*q));
    if (!q) return NULL;
    q->refs = 1;
    if (app->poll_ns == 0 && hm_chan_create(&q->bell, 1) < 0) {
        hm_free(q);
        return NULL;
    }
    return q;
}

static void queue_unref(ba_queue *q)
{
    if (!q || --q->refs > 0) return;
    for (size_t i = 0; i < BA_QUEUE_CAP; i++)
        ba_buf_free(&q->slot[i]);
    hm_chan_destroy(q->bell); /* no waiter: a waiting stream holds a reference */
    hm_free(q);
}

/* The slot the next event goes into, emptied. A full queue first drops its
 * oldest event, as PatchManager::queuePatch() does with its Channel. */
static ba_buf *queue_push_begin(ba_queue *q)
{
    if (q->len == BA_QUEUE_CAP) {
        q->head = (q->head + 1) % BA_QUEUE_CAP;
        q->len--;
        q->dropped++;
    }
    ba_buf *b = &q->slot[(q->head + q->len) % BA_QUEUE_CAP];
    b->len = 0;
    return b;
}

static void queue_push_commit(ba_queue *q)
{
    q->len++;
    if (q->bell) hm_chan_try_push(q->bell, q); /* -EAGAIN: already rung */
}

/* Pops the oldest event by swapping its buffer with *mine. */
static bool queue_pop_swap(ba_queue *q, ba_buf *mine)
{
    if (!q->len) return false;
    ba_buf *s = &q->slot[q->head];
    ba_buf t = *s;
    *s = *mine;
    *mine = t;
    q->head = (q->head + 1) % BA_QUEUE_CAP;
    q->len--;
    return true;
}

static ba_queue *ctx_queue(ba_ctx *ctx)
{
    if (!ctx->queue) ctx->queue = queue_new(ctx->app);
    return ctx->queue;
}

/* ---- signals ----------------------------------------------------------------- */

int64_t ba_signal_get(const ba_ctx *ctx, size_t idx)
{
    return ctx->sig[idx];
}

void ba_signal_set(ba_ctx *ctx, size_t idx, int64_t v)
{
    ctx->sig[idx] = v;
    ctx->changed |= 1u << idx; /* setValue() marks changed even when equal */
}

const char *ba_signal_str(const ba_ctx *ctx, size_t idx, size_t *len)
{
    const ba_buf *b = ctx->str ? &ctx->str[idx] : NULL;
    *len = b && b->data ? b->len : 0;
    return b && b->data ? b->data : "";
}

/* Stores a string value without marking it changed; the buffer keeps its
 * capacity, so only a longer value than ever before allocates. On -ENOMEM
 * the old value stays. */
static int str_store(ba_ctx *ctx, size_t idx, const char *s, size_t n)
{
    if (!ctx->str) return -EINVAL;
    ba_buf *b = &ctx->str[idx];
    size_t old = b->len;
    b->len = 0;
    int rc = ba_buf_reserve(b, n);
    if (rc) {
        b->len = old;
        return rc;
    }
    if (n) memcpy(b->data, s, n);
    b->len = n;
    b->data[n] = '\0';
    return 0;
}

int ba_signal_set_str(ba_ctx *ctx, size_t idx, const char *s, size_t n)
{
    int rc = str_store(ctx, idx, s, n);
    if (rc == 0) ctx->changed |= 1u << idx;
    return rc;
}

size_t ba_signal_wire_id(const ba_ctx *ctx, size_t idx, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s%s%s", ctx->route->def->signals[idx].name, ctx->route->wire_mid,
                     ctx->hex);
    return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}

ba_app *ba_ctx_app(const ba_ctx *ctx)
{
    return ctx->app;
}

/* Decodes one UTF-8 sequence at s[0..n); returns its length, or 0 when it
 * is malformed (overlong, surrogate, beyond U+10FFFF, truncated). */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, v = c & 0x1F, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, v = c & 0x0F, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, v = c & 0x07, min = 0x10000;
    else
        return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = v << 6 | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return len;
}

/* A JSON string as PHP's json_encode() writes it by default: escaped
 * slashes, non-ASCII as \uXXXX (lowercase hex, surrogate pairs). Bytes that
 * are not UTF-8 become \ufffd (json_encode would fail outright; client
 * strings have been through jansson, which accepts only UTF-8). */
static int json_str_append(ba_buf *b, const char *str, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    if (n > SIZE_MAX / 16) return -ENOMEM;
    int rc = ba_buf_reserve(b, 6 * n + 2); /* \u00XX per byte at worst */
    if (rc) return rc;
    const unsigned char *s = (const unsigned char *)str;
    char *d = b->data + b->len;
    *d++ = '"';
    for (size_t i = 0; i < n;) {
        unsigned char ch = s[i];
        if (ch >= 0x20 && ch < 0x80 && ch != '"' && ch != '\\' && ch != '/') {
            *d++ = (char)ch;
            i++;
            continue;
        }
        uint32_t cp = ch;
        size_t len = 1;
        const char *esc = NULL;
        switch (ch) {
        case '"':
            esc = "\\\"";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '/':
            esc = "\\/";
            break;
        case '\b':
            esc = "\\b";
            break;
        case '\f':
            esc = "\\f";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        default:
            if (ch >= 0x80 && !(len = utf8_decode(s + i, n - i, &cp))) {
                cp = 0xFFFD;
                len = 1;
            }
        }
        i += len;
        if (esc) {
            size_t el = strlen(esc);
            memcpy(d, esc, el);
            d += el;
            continue;
        }
        uint32_t units[2] = {cp, 0};
        int nu = 1;
        if (cp > 0xFFFF) {
            cp -= 0x10000;
            units[0] = 0xD800 | (cp >> 10);
            units[1] = 0xDC00 | (cp & 0x3FF);
            nu = 2;
        }
        for (int u = 0; u < nu; u++) {
            *d++ = '\\';
            *d++ = 'u';
            for (int sh = 12; sh >= 0; sh -= 4)
                *d++ = hex[(units[u] >> sh) & 15];
        }
    }
    *d++ = '"';
    b->len = (size_t)(d - b->data);
    b->data[b->len] = '\0';
    return 0;
}

/* Queues a datastar-patch-signals event holding the signals in mask
 * (php-via's syncSignals() with its changed set); an empty set queues nothing. */
static int queue_signals(ba_ctx *ctx, uint32_t mask)
{
    const ba_route_def *def = ctx->route->def;
    mask &= all_signals(ctx->route);
    if (!mask) return 0;
    ba_queue *q = ctx_queue(ctx);
    if (!q) return -ENOMEM;
    ba_buf *b = queue_push_begin(q);
    int rc = ba_buf_lit(b, "event: datastar-patch-signals\ndata: signals {");
    bool first = true;
    for (size_t i = 0; i < def->n_signals && rc == 0; i++) {
        if (!(mask & (1u << i))) continue;
        /* Wire ids are [A-Za-z0-9_] only, so no JSON escaping is needed. */
        char id[160];
        size_t il = ba_signal_wire_id(ctx, i, id, sizeof(id));
        if (!first) rc = ba_buf_lit(b, ",");
        if (!rc) rc = ba_buf_lit(b, "\"");
        if (!rc) rc = ba_buf_append(b, id, il);
        if (!rc) rc = ba_buf_lit(b, "\":");
        if (rc) break;
        if (def->signals[i].type == BA_SIG_STR) {
            size_t sl;
            const char *sv = ba_signal_str(ctx, i, &sl);
            rc = json_str_append(b, sv, sl);
        } else {
            char num[24];
            int k = snprintf(num, sizeof(num), "%" PRId64, ctx->sig[i]);
            rc = ba_buf_append(b, num, (size_t)k);
        }
        first = false;
    }
    if (rc == 0) rc = ba_buf_lit(b, "}\n\n");
    if (rc < 0) return rc;
    queue_push_commit(q);
    ctx->changed &= ~mask;
    return 0;
}

/* datastar-php's patchElements(): event line, optional selector, the HTML
 * trimmed (PHP trim()) and split on \n, one data line per line. */
static int append_elements_event(ba_buf *b, const char *selector, const char *html, size_t n)
{
    static const char ws[] = " \t\n\r\v";
    while (n && (memchr(ws, html[n - 1], sizeof(ws) - 1) || html[n - 1] == '\0'))
        n--;
    while (n && (memchr(ws, *html, sizeof(ws) - 1) || *html == '\0'))
        html++, n--;
    int rc = ba_buf_reserve(b, n + 64); /* most of it, at once */
    if (!rc) rc = ba_buf_lit(b, "event: datastar-patch-elements\n");
    if (!rc && selector) {
        rc = ba_buf_lit(b, "data: selector ");
        if (!rc) rc = ba_buf_lit(b, selector);
        if (!rc) rc = ba_buf_lit(b, "\n");
    }
    while (rc == 0) {
        const char *nl = memchr(html, '\n', n);
        size_t line = nl ? (size_t)(nl - html) : n;
        rc = ba_buf_lit(b, "data: elements ");
        if (!rc) rc = ba_buf_append(b, html, line);
        if (!rc) rc = ba_buf_lit(b, "\n");
        if (!nl) break;
        html += line + 1;
        n -= line + 1;
    }
    return rc ? rc : ba_buf_lit(b, "\n");
}

int ba_patch_elements(ba_ctx *ctx, const char *selector, const char *html, size_t n)
{
    ba_queue *q = ctx_queue(ctx);
    if (!q) return -ENOMEM;
    ba_buf *b = queue_push_begin(q);
    int rc = append_elements_event(b, selector, html, n);
    if (rc < 0) return rc;
    queue_push_commit(q);
    return 0;
}

int ba_sync_signals(ba_ctx *ctx)
{
    return queue_signals(ctx, ctx->changed);
}

/* PHP's (int) of a float, saturating where PHP's result is undefined. */
static int64_t int_of_double(double d)
{
    if (!isfinite(d)) return 0;
    if (d >= 9.2233720368547758e18) return INT64_MAX;
    if (d <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)d;
}

/* (int) of a decoded JSON value, as PHP would cast what the client sent;
 * false when the value would not reach a TAB signal at all. */
static bool php_int(const json_t *v, int64_t *out)
{
    switch (json_typeof(v)) {
    case JSON_INTEGER:
        *out = json_integer_value(v);
        return true;
    case JSON_REAL:
        *out = int_of_double(json_real_value(v));
        return true;
    case JSON_STRING: {
        /* The leading numeric prefix: "12abc" is 12, "1e3" is 1000. */
        const char *s = json_string_value(v);
        char *e;
        long long ll = strtoll(s, &e, 10);
        *out = (*e == '.' || *e == 'e' || *e == 'E') ? int_of_double(strtod(s, NULL)) : ll;
        return true;
    }
    case JSON_TRUE:
        *out = 1;
        return true;
    case JSON_FALSE:
    case JSON_NULL:
        *out = 0;
        return true;
    case JSON_ARRAY:
        *out = json_array_size(v) > 0;
        return true;
    case JSON_OBJECT:
        /* nestedToFlat() flattens a non-empty object away from the TAB key. */
        if (json_object_size(v) > 0) return false;
        *out = 0;
        return true;
    }
    return false;
}

/* PHP's `!$x` for a decoded JSON value (NULL = missing key). */
static bool php_falsy(const json_t *v)
{
    if (!v) return true;
    switch (json_typeof(v)) {
    case JSON_NULL:
    case JSON_FALSE:
        return true;
    case JSON_INTEGER:
        return json_integer_value(v) == 0;
    case JSON_REAL:
        return json_real_value(v) == 0.0;
    case JSON_STRING:
        return json_string_length(v) == 0 ||
               (json_string_length(v) == 1 && json_string_value(v)[0] == '0');
    case JSON_ARRAY:
        return json_array_size(v) == 0;
    case JSON_OBJECT:
        return json_object_size(v) == 0;
    default:
        return false;
    }
}

/* PHP's (string) of a float: `precision` (14) significant digits, and
 * zend_gcvt()'s layout: fixed unless the decimal exponent is below -4 or
 * above 14, else "1.0E+25" style. */
static size_t php_double_str(double d, char *out)
{
    char *o = out;
    if (signbit(d)) *o++ = '-';
    if (d == 0) {
        *o++ = '0';
        *o = '\0';
        return (size_t)(o - out);
    }
    char tmp[40];
    snprintf(tmp, sizeof(tmp), "%.13e", fabs(d)); /* d.ddddddddddddde+XX, correctly rounded */
    char digits[16];
    size_t nd = 0;
    digits[nd++] = tmp[0];
    for (const char *p = tmp + 2; *p && *p != 'e'; p++)
        digits[nd++] = *p;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    int decpt = atoi(strchr(tmp, 'e') + 1) + 1;
    if (decpt < 0 ? decpt < -3 : decpt > 14) {
        int e = decpt - 1;
        *o++ = digits[0];
        *o++ = '.';
        if (nd == 1) *o++ = '0';
        for (size_t i = 1; i < nd; i++)
            *o++ = digits[i];
        o += sprintf(o, "E%c%d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    } else if (decpt <= 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = decpt; i < 0; i++)
            *o++ = '0';
        for (size_t i = 0; i < nd; i++)
            *o++ = digits[i];
        *o = '\0';
    } else {
        for (int i = 0; i < decpt; i++)
            *o++ = (size_t)i < nd ? digits[i] : '0';
        if ((size_t)decpt < nd) {
            *o++ = '.';
            for (size_t i = (size_t)decpt; i < nd; i++)
                *o++ = digits[i];
        }
        *o = '\0';
    }
    return (size_t)(o - out);
}

/* Stores PHP's (string) of a decoded JSON value in a string signal; a
 * value that would not reach a TAB signal at all (as php_int) is ignored. */
static void inject_str(ba_ctx *ctx, size_t idx, const json_t *v)
{
    char num[48];
    const char *s = num;
    size_t n;
    switch (json_typeof(v)) {
    case JSON_STRING:
        s = json_string_value(v);
        n = json_string_length(v);
        break;
    case JSON_INTEGER:
        n = (size_t)snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        n = php_double_str(json_real_value(v), num);
        break;
    case JSON_TRUE:
        s = "1", n = 1;
        break;
    case JSON_FALSE:
    case JSON_NULL:
        s = "", n = 0;
        break;
    case JSON_OBJECT:
        if (json_object_size(v) > 0) return; /* flattened away, as in php_int */
        /* json_decode(..., true) made it an empty array: */
        __attribute__((fallthrough));
    case JSON_ARRAY:
        s = "Array", n = 5; /* PHP's (string) of an array */
        break;
    default:
        return;
    }
    str_store(ctx, idx, s, n); /* -ENOMEM keeps the old value */
}

/* SignalFactory::injectSignals(): the client's TAB values replace ours
 * without marking them changed, cast to the signal's type. */
static void inject_signals(ba_ctx *ctx, const json_t *root)
{
    if (!json_is_object(root)) return;
    const ba_route_def *def = ctx->route->def;
    for (size_t i = 0; i < def->n_signals; i++) {
        char id[160];
        ba_signal_wire_id(ctx, i, id, sizeof(id));
        const json_t *v = json_object_get(root, id);
        if (!v) continue;
        int64_t val;
        if (def->signals[i].type == BA_SIG_STR)
            inject_str(ctx, i, v);
        else if (php_int(v, &val))
            ctx->sig[i] = val;
    }
}

/* ---- the context map ---------------------------------------------------------- */

static uint64_t hash_id(const char *s, size_t n)
{
    uint64_t h = 14695981039346656037ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (uint8_t)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static ba_ctx *ctx_lookup(ba_app *app, const char *id, size_t n)
{
    if (n == 0 || n >= BA_CTX_ID_MAX || !app->n_buckets) return NULL;
    uint64_t h = hash_id(id, n);
    for (ba_ctx *x = app->buckets[h & (app->n_buckets - 1)]; x; x = x->hnext)
        if (x->hash == h && x->id_len == n && memcmp(x->id, id, n) == 0) return x;
    return NULL;
}

static int map_grow(ba_app *app)
{
    size_t nb = app->n_buckets ? app->n_buckets * 2 : 1024;
    ba_ctx **b = hm_calloc(nb, sizeof(*b));
    if (!b) return -ENOMEM;
    for (size_t i = 0; i < app->n_buckets; i++) {
        ba_ctx *x = app->buckets[i];
        while (x) {
            ba_ctx *next = x->hnext;
            size_t j = x->hash & (nb - 1);
            x->hnext = b[j];
            b[j] = x;
            x = next;
        }
    }
    hm_free(app->buckets);
    app->buckets = b;
    app->n_buckets = nb;
    return 0;
}

/* Publishes the worker's context and stream counts for /_health. */
static void publish(ba_app *app)
{
    atomic_store_explicit(&app->ws->contexts, (int64_t)app->n_ctx, memory_order_relaxed);
    atomic_store_explicit(&app->ws->sse, app->sse_total, memory_order_relaxed);
}

static void pending_unlink(ba_ctx *ctx)
{
    if (!ctx->pending) return;
    if (ctx->pprev)
        ctx->pprev->pnext = ctx->pnext;
    else
        ctx->app->pending = ctx->pnext;
    if (ctx->pnext) ctx->pnext->pprev = ctx->pprev;
    ctx->pprev = ctx->pnext = NULL;
    ctx->pending = false;
}

/* Application::scheduleContextCleanup(): replaces any earlier timer. */
static void schedule_cleanup(ba_ctx *ctx)
{
    ba_app *app = ctx->app;
    ctx->cleanup_at = hm_now_ns() + app->cleanup_ns;
    if (ctx->pending) return;
    ctx->pending = true;
    ctx->pprev = NULL;
    ctx->pnext = app->pending;
    if (app->pending) app->pending->pprev = ctx;
    app->pending = ctx;
}

static void ctx_free(ba_ctx *ctx)
{
    queue_unref(ctx->queue);
    if (ctx->str) {
        for (size_t i = 0; i < ctx->route->def->n_signals; i++)
            ba_buf_free(&ctx->str[i]);
        hm_free(ctx->str);
    }
    if (ctx->session != ctx->session_inline) hm_free(ctx->session);
    hm_free(ctx);
}

static void ctx_destroy(ba_ctx *ctx)
{
    ba_app *app = ctx->app;
    pending_unlink(ctx);
    ba_ctx **pp = &app->buckets[ctx->hash & (app->n_buckets - 1)];
    while (*pp != ctx)
        pp = &(*pp)->hnext;
    *pp = ctx->hnext;
    app->n_ctx--;
    publish(app);
    ctx_free(ctx);
}

static ba_ctx *ctx_create(ba_app *app, const ba_route_rt *rt, const char *session, size_t slen)
{
    if (app->n_ctx >= app->n_buckets && map_grow(app) < 0) return NULL;
    ba_ctx *ctx = hm_calloc(1, sizeof(*ctx));
    if (!ctx) return NULL;
    ctx->app = app;
    ctx->route = rt;
    if (slen < sizeof(ctx->session_inline)) {
        ctx->session = ctx->session_inline;
    } else if (!(ctx->session = hm_alloc(slen + 1))) {
        hm_free(ctx);
        return NULL;
    }
    memcpy(ctx->session, session, slen);
    ctx->session[slen] = '\0';
    ctx->session_len = slen;
    for (;;) { /* a collision of 64 random bits is all but impossible; still */
        if (random_hex(app, ctx->hex, BA_CTX_HEX / 2) < 0) {
            ctx_free(ctx);
            return NULL;
        }
        memcpy(ctx->id, rt->def->path, rt->path_len);
        memcpy(ctx->id + rt->path_len, "_/", 2);
        memcpy(ctx->id + rt->path_len + 2, ctx->hex, BA_CTX_HEX);
        ctx->id_len = rt->path_len + 2 + BA_CTX_HEX;
        ctx->id[ctx->id_len] = '\0';
        if (!ctx_lookup(app, ctx->id, ctx->id_len)) break;
    }
    ctx->hash = hash_id(ctx->id, ctx->id_len);
    if (rt->has_str && !(ctx->str = hm_calloc(rt->def->n_signals, sizeof(*ctx->str)))) {
        ctx_free(ctx);
        return NULL;
    }
    for (size_t i = 0; i < rt->def->n_signals; i++) {
        const ba_signal_def *sd = &rt->def->signals[i];
        ctx->sig[i] = sd->initial;
        if (sd->type == BA_SIG_STR) {
            const char *init = sd->initial_str ? sd->initial_str : "";
            if (str_store(ctx, i, init, strlen(init)) < 0) {
                ctx_free(ctx);
                return NULL;
            }
        }
    }
    ctx->changed = all_signals(rt); /* a new Signal starts changed */
    size_t j = ctx->hash & (app->n_buckets - 1);
    ctx->hnext = app->buckets[j];
    app->buckets[j] = ctx;
    app->n_ctx++;
    publish(app);
    return ctx;
}

void ba_via_tick(ba_app *app, int64_t now)
{
    ba_ctx *ctx = app->pending;
    while (ctx) {
        ba_ctx *next = ctx->pnext;
        if (now >= ctx->cleanup_at) {
            /* The active-SSE guard: reschedule while a stream is open. */
            if (ctx->sse_count > 0 || ctx->busy > 0)
                ctx->cleanup_at = now + app->cleanup_ns;
            else
                ctx_destroy(ctx);
        }
        ctx = next;
    }
}

/* isSessionAuthorized(): the caller's session must be the context's (a
 * request without one gets a fresh id, which never matches). */
static bool session_matches(const ba_conn *c, const ba_ctx *ctx)
{
    char sess[BA_COOKIE_MAX];
    size_t slen;
    return session_of(c, sess, &slen) && slen == ctx->session_len &&
           memcmp(sess, ctx->session, slen) == 0;
}

/* ---- responses ------------------------------------------------------------------ */

/* A body with OpenSwoole's default Content-Type (php-via sets none here). */
static int reply(ba_conn *c, int status, const char *text)
{
    const hm_http_header h[] = {{"Content-Type", "text/html"}};
    int rc = ba_respond(c, status, h, 1, text, strlen(text), false);
    return rc < 0 ? BA_DROP : BA_NEXT;
}

static const hm_http_header SSE_HEADERS[] = {
    {"Content-Type", "text/event-stream"},
    {"Cache-Control", "no-cache"},
    {"X-Accel-Buffering", "no"},
};

/* ---- pages ----------------------------------------------------------------------- */

static const ba_route_rt *route_match(const ba_app *app, const char *path, size_t n)
{
    for (size_t i = 0; i < app->n_routes; i++)
        if (app->routes[i].path_len == n && memcmp(app->routes[i].def->path, path, n) == 0)
            return &app->routes[i];
    return NULL;
}

/* "Www, DD-Mon-YYYY HH:MM:SS GMT" of now + 30 days, as OpenSwoole's
 * cookie() formats expires (PHP date "D, d-M-Y H:i:s T"); cached per second. */
static const char *cookie_expires(ba_app *app)
{
    static const char wd[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char mon[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t now = time(NULL);
    if (now != app->cookie_sec || !app->cookie_expires[0]) {
        time_t t = now + 30 * 24 * 3600;
        struct tm tm;
        gmtime_r(&t, &tm);
        snprintf(app->cookie_expires, sizeof(app->cookie_expires),
                 "%s, %02d-%s-%04d %02d:%02d:%02d GMT", wd[tm.tm_wday % 7], tm.tm_mday,
                 mon[tm.tm_mon % 12], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
        app->cookie_sec = now;
    }
    return app->cookie_expires;
}

/* RequestHandler::doHandlePage(): a new context bound to the session, the
 * shell with its data-signals meta tag, the session cookie (every time). */
static int handle_page(ba_conn *c, const ba_route_rt *rt)
{
    ba_app *app = c->app;
    char sess[BA_COOKIE_MAX];
    size_t slen;
    if (!session_of(c, sess, &slen)) {
        if (random_hex(app, sess, BA_SESSION_HEX / 2) < 0)
            return reply(c, 500, "Internal Server Error");
        slen = BA_SESSION_HEX;
    }
    ba_ctx *ctx = ctx_create(app, rt, sess, slen);
    if (!ctx) return reply(c, 500, "Internal Server Error");

    /* scratch = Set-Cookie value, NUL, page body. */
    ba_buf *s = &c->scratch;
    s->len = 0;
    int rc = ba_buf_lit(s, SESSION_COOKIE "=");
    if (!rc) rc = url_encode_append(s, ctx->session, ctx->session_len);
    if (!rc) rc = ba_buf_lit(s, "; expires=");
    if (!rc) rc = ba_buf_lit(s, cookie_expires(app));
    if (!rc) rc = ba_buf_lit(s, "; path=/; httponly; samesite=Lax");
    if (!rc) rc = ba_buf_append(s, "", 1);
    size_t body_off = s->len;
    if (!rc) rc = ba_buf_append(s, rt->page_a.data, rt->page_a.len);
    if (!rc) rc = ba_buf_append(s, ctx->hex, BA_CTX_HEX);
    if (!rc) rc = ba_buf_append(s, rt->page_b.data, rt->page_b.len);
    if (!rc) rc = ba_buf_append(s, ctx->hex, BA_CTX_HEX);
    if (!rc) rc = ba_buf_append(s, rt->page_c.data, rt->page_c.len);
    if (!rc && rt->def->render) {
        rc = rt->def->render(ctx, s);
        if (!rc) rc = ba_buf_lit(s, SHELL_BOTTOM);
    }
    if (rc) return reply(c, 500, "Internal Server Error");
    const hm_http_header h[] = {
        {"Content-Type", "text/html; charset=utf-8"},
        {"Set-Cookie", s->data},
    };
    rc = ba_respond(c, 200, h, HM_ARRAY_LEN(h), s->data + body_off, s->len - body_off, false);
    return rc < 0 ? BA_DROP : BA_NEXT;
}

/* ---- actions --------------------------------------------------------------------- */

/* ActionHandler::isOriginAllowed() without an allowlist: Origin minus
 * http(s):// must equal Host; a missing Origin or Host passes in devMode. */
static bool origin_allowed(const ba_conn *c)
{
    hm_http_str o = c->req.hdr.origin, h = c->req.hdr.host;
    if (!o.ptr || !h.ptr) return c->app->opt.dev_mode;
    const char *p = o.ptr;
    size_t n = o.len;
    if (n >= 7 && memcmp(p, "http://", 7) == 0)
        p += 7, n -= 7;
    else if (n >= 8 && memcmp(p, "https://", 8) == 0)
        p += 8, n -= 8;
    return n == h.len && memcmp(p, h.ptr, n) == 0;
}

/* The checks of ActionHandler::handleAction(), in its order. */
static int handle_action(ba_conn *c, const char *aid, size_t aid_len)
{
    ba_app *app = c->app;
    if (!origin_allowed(c)) return reply(c, 403, "Forbidden: untrusted origin");

    json_t *root = read_signals(c);
    /* $signals['via_ctx'] ?? $request->post['via_ctx']: only a missing or
     * null via_ctx falls back to the form field. */
    const char *cid = NULL;
    size_t cid_len = 0;
    bool bad_type = false;
    const json_t *v = json_is_object(root) ? json_object_get(root, "via_ctx") : NULL;
    if (v && json_is_string(v)) {
        cid = json_string_value(v);
        cid_len = json_string_length(v);
    } else if (v && !json_is_null(v)) {
        bad_type = true;
    } else if (is_form(&c->req) &&
               form_find(c->req.body, c->req.body_len, "via_ctx", &c->scratch)) {
        cid = c->scratch.data;
        cid_len = c->scratch.len;
    }
    ba_ctx *ctx = NULL;
    if (!bad_type && cid && !(cid_len == 1 && cid[0] == '0')) ctx = ctx_lookup(app, cid, cid_len);
    int ret;
    if (!ctx) {
        ret = reply(c, 400, "Invalid context");
        goto out;
    }
    if (!session_matches(c, ctx)) {
        ret = reply(c, 403, "Forbidden");
        goto out;
    }
    inject_signals(ctx, root);
    const ba_action_def *act = NULL;
    for (size_t i = 0; i < ctx->route->def->n_actions; i++)
        if (str_eq(aid, aid_len, ctx->route->def->actions[i].id))
            act = &ctx->route->def->actions[i];
    if (!act) { /* Context::executeAction() throws: caught as 500 */
        ret = reply(c, 500, "Action failed");
        goto out;
    }
    ctx->busy++;
    int rc = act->fn(ctx);
    ctx->busy--;
    if (rc < 0) {
        ret = reply(c, 500, "Action failed");
        goto out;
    }
    ret = reply(c, 200, "");
out:
    json_decref(root);
    return ret;
}

/* ---- SSE --------------------------------------------------------------------------- */

/* Watches a streaming connection for the peer going away (php-via notices
 * only at its next write; we notice at once, which also ends silent
 * streams). What a client sends meanwhile is discarded. */
static void peer_watch(void *arg)
{
    ba_conn *c = arg;
    char buf[512];
    while (!c->reader_stop && !c->app->stopping) {
        ssize_t n = ba_watch_read(c, buf, sizeof(buf));
        if (n > 0) continue;           /* nothing a client may send now matters */
        if (n == -ECANCELED) continue; /* the loop condition decides */
        c->peer_gone = true;
        hm_coro_cancel(c->co); /* -ESRCH: it is ready and checks peer_gone */
        break;
    }
    c->reader = NULL;
    hm_wg_done(&c->reader_wg);
}

void ba_peer_watch_start(ba_conn *c)
{
    c->reader_stop = c->peer_gone = false;
    hm_wg_init(&c->reader_wg);
    hm_wg_add(&c->reader_wg, 1);
    if (hm_coro_spawn(c->app->loop, peer_watch, c, &c->reader) < 0) {
        c->reader = NULL; /* no early EOF detection; a failed write still ends it */
        hm_wg_done(&c->reader_wg);
    }
}

void ba_peer_watch_stop(ba_conn *c)
{
    c->reader_stop = true;
    /* A wait cancelled by the stop ticker just waits again: the socket must
     * not be closed while the watcher is still inside a read. */
    while (c->reader_wg.count > 0) {
        if (c->reader) hm_coro_cancel(c->reader);
        hm_wg_wait(&c->reader_wg, 0);
    }
}

/* Writes c->out (the response head, first time) and one event as one chunk,
 * in one call (TLS: one SSL_write of the whole, appended to c->out). */
static int sse_write_event(ba_conn *c, const ba_buf *ev)
{
    char head[24];
    ssize_t hl = hm_http_write_chunk_head(head, sizeof(head), ev->len);
    if (hl < 0) return (int)hl;
    if (c->tls) {
        int rc = ba_buf_append(&c->out, head, (size_t)hl);
        if (rc == 0) rc = ba_buf_append(&c->out, ev->data, ev->len);
        if (rc == 0) rc = ba_buf_append(&c->out, "\r\n", 2);
        if (rc < 0) {
            c->out.len = 0;
            return rc;
        }
        return ba_flush(c);
    }
    struct iovec iov[4];
    int n = 0;
    if (c->out.len) iov[n++] = (struct iovec){c->out.data, c->out.len};
    iov[n++] = (struct iovec){head, (size_t)hl};
    iov[n++] = (struct iovec){ev->data, ev->len};
    iov[n++] = (struct iovec){(void *)"\r\n", 2};
    ssize_t r = hm_sock_writev(c->sock, iov, n, ba_deadline(c->app), NULL);
    c->out.len = 0;
    return r < 0 ? (int)r : 0;
}

/* The stream part of SseHandler::handleSSE() for a live, authorised context. */
static int sse_stream(ba_conn *c, ba_ctx *ctx)
{
    ba_app *app = c->app;
    c->keep_alive = true; /* OpenSwoole's Connection: keep-alive */
    if (ba_respond_chunked_head(c, 200, SSE_HEADERS, HM_ARRAY_LEN(SSE_HEADERS)) < 0) return BA_DROP;

    /* Cancel any pending cleanup (reconnection), then recreate the patch
     * channel: what was queued before is lost, an older stream goes silent. */
    pending_unlink(ctx);
    ba_queue *q = queue_new(app);
    if (!q) return BA_DROP;
    if (ctx->queue) ctx->queue->len = 0; /* an older stream still reading it gets nothing */
    queue_unref(ctx->queue);
    ctx->queue = q;
    q->refs++; /* the stream's reference */
    ctx->sse_count++;
    app->sse_total++;
    publish(app);

    /* sync(): the view, then the TAB signals. First connect: all of them;
     * later: those changed since they were last queued (php-via's flags). */
    if (ctx->route->def->render) {
        /* The view rendered now, as php-via's sync() re-runs the view. */
        c->scratch.len = 0;
        if (ctx->route->def->render(ctx, &c->scratch) == 0)
            ba_patch_elements(ctx, NULL, c->scratch.data, c->scratch.len);
    } else {
        ba_buf *b = queue_push_begin(q);
        if (ba_buf_append(b, ctx->route->elements_event.data, ctx->route->elements_event.len) == 0)
            queue_push_commit(q);
    }
    queue_signals(ctx, ctx->connected_once ? ctx->changed : all_signals(ctx->route));
    ctx->connected_once = true;

    ba_peer_watch_start(c);

    /* php-via's loop: pop without blocking and write; when empty, sleep the
     * poll interval (0: wait for the next push instead). No heartbeat. */
    for (;;) {
        if (app->stopping || c->peer_gone) break;
        if (queue_pop_swap(q, &c->ev)) {
            if (c->ev.len && sse_write_event(c, &c->ev) < 0) break;
            continue;
        }
        if (c->out.len && ba_flush(c) < 0) break;
        if (app->poll_ns > 0) {
            hm_coro_sleep(app->poll_ns);
        } else {
            void *token;
            hm_chan_pop(q->bell, &token, 0);
        }
    }

    ba_peer_watch_stop(c);
    ctx->sse_count--;
    app->sse_total--;
    publish(app);
    if (ctx->sse_count == 0) schedule_cleanup(ctx);
    queue_unref(q);
    return BA_DROP;
}

static int handle_sse(ba_conn *c)
{
    ba_app *app = c->app;
    json_t *root = read_signals(c);
    const json_t *v = json_is_object(root) ? json_object_get(root, "via_ctx") : NULL;
    if (php_falsy(v)) { /* `if (!$contextId)` */
        json_decref(root);
        return reply(c, 400, "Invalid context");
    }
    /* A truthy non-string cannot name a context: the reload answer below. */
    const char *cid = json_is_string(v) ? json_string_value(v) : NULL;
    size_t cid_len = cid ? json_string_length(v) : 0;
    ba_ctx *ctx = cid ? ctx_lookup(app, cid, cid_len) : NULL;
    json_decref(root); /* a live context reads only via_ctx */
    if (!ctx) {
        /* Expired/unknown: the reload script, then end. (php-via first tries
         * to revive the context, and answers a repeat within 5 min with an
         * empty body; bench_app has no revival.) */
        char head[24];
        ssize_t hl = hm_http_write_chunk_head(head, sizeof(head), sizeof(RELOAD_EVENT) - 1);
        int rc = ba_respond_chunked_head(c, 200, SSE_HEADERS, HM_ARRAY_LEN(SSE_HEADERS));
        if (!rc) rc = ba_buf_append(&c->out, head, (size_t)hl);
        if (!rc) rc = ba_buf_append(&c->out, RELOAD_EVENT, sizeof(RELOAD_EVENT) - 1);
        if (!rc) rc = ba_buf_lit(&c->out, "\r\n0\r\n\r\n");
        return rc < 0 ? BA_DROP : BA_NEXT;
    }
    if (!session_matches(c, ctx)) {
        /* Sent with the SSE headers already set, as php-via does. */
        int rc = ba_respond(c, 403, SSE_HEADERS, HM_ARRAY_LEN(SSE_HEADERS), "Forbidden", 9, false);
        return rc < 0 ? BA_DROP : BA_NEXT;
    }
    return sse_stream(c, ctx); /* earlier pipelined answers go out with its first write */
}

/* ---- /_session/close and /_health ------------------------------------------------ */

static int handle_session_close(ba_conn *c)
{
    ba_ctx *ctx = ctx_lookup(c->app, c->req.body, c->req.body_len);
    if (ctx) schedule_cleanup(ctx); /* deferred by the tick while SSE is open */
    return reply(c, 200, "");
}

/* RequestHandler::handleHealth(): "connections" counts the answering
 * worker's contexts and streams, as php-via's; bench_app adds "worker" (its
 * id) and "workers", every worker of the run with its counts. */
static json_t *workers_json(const ba_app *app)
{
    json_t *a = json_array();
    const ba_run *run = app->run;
    for (int w = 0; a && w < run->n_workers; w++) {
        const ba_wstats *ws = &run->stats[w];
        json_t *o =
            json_pack("{s:i, s:I, s:I, s:I}", "id", run->first_id + w, "contexts",
                      (json_int_t)atomic_load_explicit(&ws->contexts, memory_order_relaxed), "sse",
                      (json_int_t)atomic_load_explicit(&ws->sse, memory_order_relaxed), "requests",
                      (json_int_t)atomic_load_explicit(&ws->requests, memory_order_relaxed));
        if (!o || json_array_append_new(a, o) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static int handle_health(ba_conn *c)
{
    ba_app *app = c->app;
    json_t *ws = workers_json(app);
    json_t *j = ws ? json_pack("{s:s, s:s, s:{s:s, s:b}, s:{s:I, s:I}, s:i, s:o}", "status", "ok",
                               "version", HM_VERSION "-bench_app", "broker", "driver",
                               "InMemoryBroker", "connected", 1, "connections", "contexts",
                               (json_int_t)app->n_ctx, "sse", (json_int_t)app->sse_total, "worker",
                               app->run->first_id + app->worker, "workers", ws)
                   : NULL;
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (!s) return reply(c, 500, "Internal Server Error");
    const hm_http_header h[] = {{"Content-Type", "application/json"},
                                {"Cache-Control", "no-store"}};
    int rc = ba_respond(c, 200, h, HM_ARRAY_LEN(h), s, strlen(s), false);
    free(s); /* jansson's default allocator */
    return rc < 0 ? BA_DROP : BA_NEXT;
}

/* ---- routing ------------------------------------------------------------------------ */

/* RequestHandler::handleRequest() of v0.12.0, minus static files
 * (/datastar.js, /via.css answer 404 here), /_stats and the Dev Bar. */
int ba_via_handle(ba_conn *c)
{
    const hm_http_req_parser *r = &c->req;
    const char *path = r->path.ptr ? r->path.ptr : "";
    size_t plen = r->path.len;

    if (r->method == HTTP_HEAD) {
        /* handleHeadRequest(): a route answers 200 with no body, anything else 404. */
        if (route_match(c->app, path, plen)) {
            const hm_http_header h[] = {{"Content-Type", "text/html; charset=utf-8"}};
            return ba_respond(c, 200, h, 1, NULL, 0, true) < 0 ? BA_DROP : BA_NEXT;
        }
        const hm_http_header h[] = {{"Content-Type", "text/html"}};
        return ba_respond(c, 404, h, 1, NULL, 0, true) < 0 ? BA_DROP : BA_NEXT;
    }
    if (str_eq(path, plen, "/_sse")) return handle_sse(c);
    static const char act[] = "/_action/";
    if (plen > sizeof(act) - 1 && memcmp(path, act, sizeof(act) - 1) == 0) {
        if (r->method == HTTP_GET) {
            const hm_http_header h[] = {{"Content-Type", "text/html"}, {"Allow", "POST"}};
            static const char body[] = "Method Not Allowed";
            return ba_respond(c, 405, h, 2, body, sizeof(body) - 1, false) < 0 ? BA_DROP : BA_NEXT;
        }
        return handle_action(c, path + sizeof(act) - 1, plen - (sizeof(act) - 1));
    }
    if (r->method == HTTP_POST && str_eq(path, plen, "/_session/close"))
        return handle_session_close(c);
    if (r->method == HTTP_GET && str_eq(path, plen, "/_health")) return handle_health(c);
    const ba_route_rt *rt = route_match(c->app, path, plen);
    if (rt) return handle_page(c, rt); /* any method but HEAD renders the page */
    return reply(c, 404, "Not Found");
}

/* ---- set-up and tear-down -------------------------------------------------------------- */

static int build_route(ba_route_rt *rt, const ba_route_def *def)
{
    rt->def = def;
    rt->path_len = strlen(def->path);
    if (rt->path_len == 0 || rt->path_len >= BA_ROUTE_MAX || def->n_signals > BA_MAX_SIGNALS)
        return -EINVAL;
    for (size_t i = 0; i < def->n_signals; i++) {
        if (strlen(def->signals[i].name) > 64) return -EINVAL;
        if (def->signals[i].type == BA_SIG_STR) rt->has_str = true;
    }
    if (!def->view && !def->render) return -EINVAL;

    /* SignalFactory's sanitising of "name_" + ctx id, minus the name and hex. */
    size_t k = 0;
    rt->wire_mid[k++] = '_';
    for (size_t i = 0; i < rt->path_len; i++) {
        unsigned char ch = (unsigned char)def->path[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '_';
        rt->wire_mid[k++] = ok ? (char)ch : '_';
    }
    rt->wire_mid[k++] = '_';
    rt->wire_mid[k++] = '_';
    rt->wire_mid[k] = '\0';
    rt->wire_mid_len = k;

    /* The meta tag's JSON is php-via's json_encode() output: jansson with
     * escaped slashes and ASCII only, compact. A placeholder stands for the
     * hex part, which needs no escaping, so each page just splices it in. */
    char id[BA_CTX_ID_MAX];
    snprintf(id, sizeof(id), "%s_/XXXXXXXXXXXXXXXX", def->path);
    json_t *j = json_pack("{s:s, s:b}", "via_ctx", id, "_disconnected", 0);
    char *js = j ? json_dumps(j, JSON_COMPACT | JSON_ESCAPE_SLASH | JSON_ENSURE_ASCII) : NULL;
    json_decref(j);
    if (!js) return -ENOMEM;
    static const char tail[] = "\",\"_disconnected\":false}";
    size_t jl = strlen(js);
    int rc = -EINVAL;
    if (jl > sizeof(tail) - 1 + BA_CTX_HEX && strcmp(js + jl - (sizeof(tail) - 1), tail) == 0) {
        size_t hex_at = jl - (sizeof(tail) - 1) - BA_CTX_HEX;
        rc = ba_buf_lit(&rt->page_a, SHELL_TOP);
        if (!rc) rc = ba_buf_append(&rt->page_a, js, hex_at);
        if (!rc) rc = ba_buf_lit(&rt->page_b, js + hex_at + BA_CTX_HEX);
        if (!rc) rc = ba_buf_lit(&rt->page_b, SHELL_AFTER_SIGNALS);
        if (!rc) rc = ba_buf_append(&rt->page_b, def->path, rt->path_len);
        if (!rc) rc = ba_buf_lit(&rt->page_b, "_/");
        if (!rc) rc = ba_buf_lit(&rt->page_c, SHELL_AFTER_BEACON);
        if (!def->render) { /* a static view: the whole page tail, and its sync event */
            if (!rc) rc = ba_buf_lit(&rt->page_c, def->view);
            if (!rc) rc = ba_buf_lit(&rt->page_c, SHELL_BOTTOM);
            if (!rc)
                rc = append_elements_event(&rt->elements_event, NULL, def->view, strlen(def->view));
        }
    }
    free(js);
    return rc;
}

static void free_route(ba_route_rt *rt)
{
    ba_buf_free(&rt->page_a);
    ba_buf_free(&rt->page_b);
    ba_buf_free(&rt->page_c);
    ba_buf_free(&rt->elements_event);
}

int ba_via_init(ba_app *app)
{
    int rrc = ba_routes_init(app);
    if (rrc < 0) return rrc; /* ba_via_free() releases what was made */
    app->routes = hm_calloc(ba_n_routes, sizeof(*app->routes));
    if (!app->routes) return -ENOMEM;
    app->n_routes = ba_n_routes;
    for (size_t i = 0; i < ba_n_routes; i++) {
        int rc = build_route(&app->routes[i], &ba_routes[i]);
        if (rc < 0) return rc; /* ba_via_free() releases what was built */
    }
    return map_grow(app);
}

void ba_via_free(ba_app *app)
{
    for (size_t i = 0; i < app->n_buckets; i++) {
        ba_ctx *x = app->buckets[i];
        while (x) {
            ba_ctx *next = x->hnext;
            ctx_free(x);
            x = next;
        }
    }
    hm_free(app->buckets);
    app->buckets = NULL;
    app->n_buckets = app->n_ctx = 0;
    app->pending = NULL;
    for (size_t i = 0; i < app->n_routes; i++)
        free_route(&app->routes[i]);
    hm_free(app->routes);
    app->routes = NULL;
    app->n_routes = 0;
    ba_routes_free(app);
}
