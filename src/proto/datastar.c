/* datastar.c — datastar-patch-* decoding and php-via signal-name matching. */
#include "proto/datastar.h"

#include "base/hm_base.h"
#include "proto/json_limit.h"

#include <string.h>

/* The reasons below name these bounds. */
_Static_assert(HM_JSON_MAX_DEPTH == 64, "update the depth in the error text");
_Static_assert(HM_DATASTAR_MAX_SIGNALS_BYTES == 256 << 10, "update the size in the error text");

/* The data-line keys Datastar's client reads; one slot each while decoding. */
enum {
    K_SIGNALS,
    K_ONLY_IF_MISSING,
    K_SELECTOR,
    K_MODE,
    K_ELEMENTS,
    K_USE_VIEW_TRANSITION,
    K_WRAP,
    K_COUNT
};

static const char *const key_names[K_COUNT] = {
    [K_SIGNALS] = "signals",   [K_ONLY_IF_MISSING] = "onlyIfMissing",
    [K_SELECTOR] = "selector", [K_MODE] = "mode",
    [K_ELEMENTS] = "elements", [K_USE_VIEW_TRANSITION] = "useViewTransition",
    [K_WRAP] = "wrap",
};

typedef struct {
    size_t count; /* lines seen with this key */
    size_t len;   /* joined length: values plus "\n" between them */
    size_t off;   /* where the joined value starts in the scratch buffer */
} slot;

static bool mem_is(const char *s, size_t n, const char *lit)
{
    return n == strlen(lit) && memcmp(s, lit, n) == 0;
}

static int key_index(const char *k, size_t n)
{
    for (int i = 0; i < K_COUNT; i++)
        if (mem_is(k, n, key_names[i])) return i;
    return -1;
}

/* Splits the next "\n"-terminated line of data off at *pos; false at the end. */
static bool next_line(const char *data, size_t len, size_t *pos, const char **line, size_t *n)
{
    if (*pos > len) return false;
    const char *start = data + *pos;
    const char *nl = memchr(start, '\n', len - *pos);
    *line = start;
    *n = nl ? (size_t)(nl - start) : len - *pos;
    *pos += *n + 1; /* past the "\n", or past len for the last line */
    return true;
}

/* Splits a line into key and value at the first space; false if it has none. */
static bool split_kv(const char *line, size_t n, int *key, const char **val, size_t *vlen)
{
    const char *sp = memchr(line, ' ', n);
    if (!sp) return false;
    *key = key_index(line, (size_t)(sp - line));
    *val = sp + 1;
    *vlen = n - (size_t)(sp - line) - 1;
    return *key >= 0;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Datastar's isBoolString: the trimmed value is exactly "true". */
static bool bool_value(const char *s, size_t n)
{
    while (n && is_space(*s))
        s++, n--;
    while (n && is_space(s[n - 1]))
        n--;
    return mem_is(s, n, "true");
}

static void reset_fields(hm_datastar_event *out)
{
    json_decref(out->signals);
    char *buf = out->buf_;
    size_t cap = out->cap_;
    memset(out, 0, sizeof(*out));
    out->buf_ = buf;
    out->cap_ = cap;
}

void hm_datastar_event_clear(hm_datastar_event *out)
{
    json_decref(out->signals);
    hm_free(out->buf_);
    memset(out, 0, sizeof(*out));
}

int hm_datastar_decode(const hm_sse_event *ev, hm_datastar_event *out)
{
    reset_fields(out);
    if (mem_is(ev->type, ev->type_len, "datastar-patch-signals"))
        out->kind = HM_DATASTAR_PATCH_SIGNALS;
    else if (mem_is(ev->type, ev->type_len, "datastar-patch-elements"))
        out->kind = HM_DATASTAR_PATCH_ELEMENTS;
    else
        return 0;

    /* Pass 1 sizes each key's joined value, so the scratch buffer grows at
     * most once and pointers into it can be set without being invalidated. */
    slot slots[K_COUNT] = {{0}};
    const char *line, *val;
    size_t n, vlen, pos = 0;
    int k;
    while (next_line(ev->data, ev->data_len, &pos, &line, &n)) {
        if (!split_kv(line, n, &k, &val, &vlen)) continue;
        slots[k].len += (slots[k].count ? 1 : 0) + vlen;
        slots[k].count++;
    }
    size_t total = 0;
    for (int i = 0; i < K_COUNT; i++) {
        slots[i].off = total;
        total += slots[i].count ? slots[i].len + 1 : 0;
    }
    if (total > out->cap_) {
        size_t ncap = total > out->cap_ * 2 ? total : out->cap_ * 2;
        char *nb = hm_realloc(out->buf_, ncap);
        if (!nb) return -ENOMEM;
        out->buf_ = nb;
        out->cap_ = ncap;
    }

    /* Pass 2 copies the values in, joined with "\n" and NUL-terminated. */
    size_t fill[K_COUNT] = {0};
    bool started[K_COUNT] = {0};
    pos = 0;
    while (next_line(ev->data, ev->data_len, &pos, &line, &n)) {
        if (!split_kv(line, n, &k, &val, &vlen)) continue;
        char *dst = out->buf_ + slots[k].off;
        if (started[k]) dst[fill[k]++] = '\n';
        started[k] = true;
        if (vlen) memcpy(dst + fill[k], val, vlen);
        fill[k] += vlen;
    }
    const char *v[K_COUNT] = {0};
    for (int i = 0; i < K_COUNT; i++) {
        if (!slots[i].count) continue;
        out->buf_[slots[i].off + slots[i].len] = '\0';
        v[i] = out->buf_ + slots[i].off;
    }

    if (out->kind == HM_DATASTAR_PATCH_SIGNALS) {
        out->only_if_missing =
            v[K_ONLY_IF_MISSING] && bool_value(v[K_ONLY_IF_MISSING], slots[K_ONLY_IF_MISSING].len);
        if (!v[K_SIGNALS]) {
            /* The client treats a missing signals line as "{}". */
            out->signals = json_object();
            return out->signals ? 0 : -ENOMEM;
        }
        if (slots[K_SIGNALS].len > HM_DATASTAR_MAX_SIGNALS_BYTES) {
            out->error = "signals JSON over 256 KiB";
            return -HM_ETOOBIG;
        }
        json_t *j;
        int rc = hm_json_load_bounded(v[K_SIGNALS], slots[K_SIGNALS].len, JSON_ALLOW_NUL, &j, NULL);
        if (rc == -HM_ETOOBIG) {
            out->error = "signals JSON nests deeper than 64 levels";
            return rc;
        }
        if (rc < 0 || !json_is_object(j)) {
            out->error = rc < 0 ? "signals JSON is malformed" : "signals JSON is not an object";
            json_decref(j);
            return -HM_EPARSE;
        }
        out->signals = j;
        return 0;
    }

    out->selector = v[K_SELECTOR];
    out->mode = v[K_MODE];
    out->elements = v[K_ELEMENTS];
    out->elements_len = v[K_ELEMENTS] ? slots[K_ELEMENTS].len : 0;
    out->wrap = v[K_WRAP];
    out->use_view_transition =
        v[K_USE_VIEW_TRANSITION] &&
        bool_value(v[K_USE_VIEW_TRANSITION], slots[K_USE_VIEW_TRANSITION].len);
    return 0;
}

/* --- signal names ------------------------------------------------------- */

static bool is_id_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool all_id_chars(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_id_char(s[i])) return false;
    return true;
}

static bool has_prefix(const char *s, size_t n, const char *pre, size_t pn)
{
    return n >= pn && memcmp(s, pre, pn) == 0;
}

/* TAB id: wanted "__" <route> "__" <hex>+, with <route> possibly empty. */
static bool matches_tab(const char *w, size_t wn, const char *k, size_t kn)
{
    if (kn < wn + 2 || memcmp(k, w, wn) != 0 || k[wn] != '_' || k[wn + 1] != '_') return false;
    size_t route = wn + 2;
    /* The longest hex tail is the only candidate: a shorter one would be
     * preceded by a hex digit, not by "__". */
    size_t h = kn;
    while (h > route && is_hex(k[h - 1]))
        h--;
    if (h == kn || h < route + 2 || k[h - 1] != '_' || k[h - 2] != '_') return false;
    return all_id_chars(k + route, h - 2 - route);
}

/* Scoped id: <scope> "_" wanted, scope "global", or "route_"/"session_"/
 * "global_" followed by a non-empty sanitised rest. */
static bool matches_scoped(const char *w, size_t wn, const char *k, size_t kn)
{
    if (kn < wn + 1 || memcmp(k + kn - wn, w, wn) != 0 || k[kn - wn - 1] != '_') return false;
    const char *head = k;
    size_t hn = kn - wn - 1;
    if (mem_is(head, hn, "global")) return true;
    static const char *const prefixes[] = {"route_", "session_", "global_"};
    for (size_t i = 0; i < HM_ARRAY_LEN(prefixes); i++) {
        size_t pn = strlen(prefixes[i]);
        if (has_prefix(head, hn, prefixes[i], pn) && hn > pn)
            return all_id_chars(head + pn, hn - pn);
    }
    return false;
}

static bool name_matches(const char *w, size_t wn, const char *k, size_t kn)
{
    if (wn == 0) return false;
    if (kn == wn) return memcmp(k, w, wn) == 0;
    return matches_tab(w, wn, k, kn) || matches_scoped(w, wn, k, kn);
}

bool hm_signal_name_matches(const char *wanted, const char *key)
{
    if (!wanted || !key) return false;
    return name_matches(wanted, strlen(wanted), key, strlen(key));
}

static bool json_as_int(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return true;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        /* 2^63 is exact in a double; NaN fails both comparisons. */
        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return false;
        int64_t i = (int64_t)d;
        if ((double)i != d) return false;
        *out = i;
        return true;
    }
    return false;
}

int hm_signals_find_int(json_t *signals, const char *wanted, int64_t *out)
{
    if (!wanted || !out) return -EINVAL;
    json_t *obj = signals;
    const char *name = wanted;
    const char *dot;
    /* Walk the dotted path's leading segments as exact keys. */
    while ((dot = strchr(name, '.')) != NULL) {
        obj = json_is_object(obj) ? json_object_getn(obj, name, (size_t)(dot - name)) : NULL;
        if (!obj) return -HM_ENOTFOUND;
        name = dot + 1;
    }
    if (!json_is_object(obj)) return -HM_ENOTFOUND;

    size_t wn = strlen(name);
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val)
    {
        if (name_matches(name, wn, key, strlen(key)) && json_as_int(val, out)) return 0;
    }
    return -HM_ENOTFOUND;
}

/* --- the scan for one signal -------------------------------------------- */

/* A cursor over the signals line; every step that meets what it does not
 * handle says so (false), and the scan gives the event to jansson. */
typedef struct {
    const char *p, *end;
} scan;

static void skip_ws(scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static bool take(scan *s, char c)
{
    skip_ws(s);
    if (s->p == s->end || *s->p != c) return false;
    s->p++;
    return true;
}

/* A string after its opening quote: printable ASCII, no escapes. */
static bool plain_string(scan *s, const char **str, size_t *n)
{
    const char *start = s->p;
    while (s->p < s->end && *s->p != '"') {
        unsigned char c = (unsigned char)*s->p;
        if (c < 0x20 || c > 0x7e || c == '\\') return false;
        s->p++;
    }
    if (s->p == s->end) return false;
    *str = start;
    *n = (size_t)(s->p++ - start);
    return true;
}

/* An integer as JSON writes it (no leading zeros), small enough that no
 * bound of jansson's or int64's is near. */
static bool plain_integer(scan *s, int64_t *v)
{
    bool neg = s->p < s->end && *s->p == '-';
    if (neg) s->p++;
    const char *digits = s->p;
    int64_t x = 0;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9' && s->p - digits < 18)
        x = x * 10 + (*s->p++ - '0');
    size_t n = (size_t)(s->p - digits);
    if (n == 0 || (n > 1 && digits[0] == '0')) return false;
    /* More digits, a fraction or an exponent: jansson's to read. */
    if (s->p < s->end &&
        ((*s->p >= '0' && *s->p <= '9') || *s->p == '.' || *s->p == 'e' || *s->p == 'E'))
        return false;
    *v = neg ? -x : x;
    return true;
}

static bool literal(scan *s, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, lit, n) != 0) return false;
    s->p += n;
    return true;
}

/* One value; *is_int and *v say whether it was an integer, and which. */
static bool scalar_value(scan *s, bool *is_int, int64_t *v)
{
    skip_ws(s);
    *is_int = false;
    if (s->p == s->end) return false;
    const char *str;
    size_t n;
    switch (*s->p) {
    case '"':
        s->p++;
        return plain_string(s, &str, &n);
    case 't':
        return literal(s, "true");
    case 'f':
        return literal(s, "false");
    case 'n':
        return literal(s, "null");
    default:
        return *is_int = plain_integer(s, v);
    }
}

static hm_datastar_scan scan_object(scan *s, const char *wanted, size_t wn, int64_t *out)
{
    if (!take(s, '{')) return HM_DATASTAR_UNDECIDED;
    int matches = 0;
    bool found = false;
    skip_ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
    } else {
        for (;;) {
            const char *key;
            size_t kn;
            bool is_int;
            int64_t v;
            if (!take(s, '"') || !plain_string(s, &key, &kn) || !take(s, ':') ||
                !scalar_value(s, &is_int, &v))
                return HM_DATASTAR_UNDECIDED;
            /* A value that follows without ',' or '}' (true1, "a""b") is
             * malformed: the check below refuses it. */
            if (name_matches(wanted, wn, key, kn)) {
                /* Duplicates: jansson keeps the first key's place and the
                 * last value. */
                if (++matches > 1) return HM_DATASTAR_UNDECIDED;
                if (is_int) found = true, *out = v;
            }
            if (take(s, ',')) continue;
            if (take(s, '}')) break;
            return HM_DATASTAR_UNDECIDED;
        }
    }
    skip_ws(s);
    if (s->p != s->end) return HM_DATASTAR_UNDECIDED; /* text after the object */
    return found ? HM_DATASTAR_FOUND : HM_DATASTAR_ABSENT;
}

hm_datastar_scan hm_datastar_scan_int(const hm_sse_event *ev, const char *wanted, int64_t *out)
{
    if (!wanted || !wanted[0] || strchr(wanted, '.') ||
        !mem_is(ev->type, ev->type_len, "datastar-patch-signals"))
        return HM_DATASTAR_UNDECIDED;
    const char *line, *val, *signals = NULL;
    size_t n, vlen, signals_len = 0, pos = 0, lines = 0;
    int k;
    while (next_line(ev->data, ev->data_len, &pos, &line, &n)) {
        if (!split_kv(line, n, &k, &val, &vlen) || k != K_SIGNALS) continue;
        if (++lines > 1) return HM_DATASTAR_UNDECIDED; /* joined with "\n": jansson's */
        signals = val;
        signals_len = vlen;
    }
    if (lines != 1 || signals_len > HM_DATASTAR_MAX_SIGNALS_BYTES) return HM_DATASTAR_UNDECIDED;
    scan s = {signals, signals + signals_len};
    int64_t v = 0;
    hm_datastar_scan r = scan_object(&s, wanted, strlen(wanted), &v);
    if (r == HM_DATASTAR_FOUND) *out = v;
    return r;
}
