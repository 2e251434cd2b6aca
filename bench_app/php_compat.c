/* php_compat.c — PHP's and OpenSwoole's string, JSON and number behaviour
 * as bench_app needs it (see php_compat.h for each contract). */
#include "bench_app/php_compat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- URLs, forms and cookies ------------------------------------------ */

static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

size_t ba_php_urldecode(char *d, const char *s, size_t n)
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

int ba_php_urldecode_append(ba_buf *out, const char *s, size_t n)
{
    int rc = ba_buf_reserve(out, n);
    if (rc) return rc;
    out->len += ba_php_urldecode(out->data + out->len, s, n);
    out->data[out->len] = '\0';
    return 0;
}

int ba_php_urlencode_append(ba_buf *out, const char *s, size_t n)
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

bool ba_php_form_get(const char *s, size_t n, const char *key, ba_buf *out)
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
        if (!ba_str_eq(name, ba_php_urldecode(name, seg, namelen), key)) continue;
        out->len = 0;
        const char *v = eq ? eq + 1 : seg + seglen;
        size_t vlen = eq ? seglen - namelen - 1 : 0;
        if (ba_php_urldecode_append(out, v, vlen) < 0) return false;
        found = true;
    }
    return found;
}

bool ba_swoole_cookie_get(const char *hdr, size_t hdr_len, const char *name, char *out,
                          size_t *olen)
{
    if (!hdr) return false;
    size_t nlen = strlen(name);
    const char *val = NULL, *p = hdr, *end = hdr + hdr_len;
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
    if (!val || vlen >= BA_SWOOLE_COOKIE_MAX) return false;
    if (vlen && val[0] == '"') val++, vlen--;
    if (vlen && val[vlen - 1] == '"') vlen--;
    *olen = ba_php_urldecode(out, val, vlen);
    return true;
}

void ba_swoole_cookie_date(time_t t, char *out)
{
    static const char wd[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char mon[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    struct tm tm;
    gmtime_r(&t, &tm);
    snprintf(out, BA_SWOOLE_COOKIE_DATE_MAX, "%s, %02d-%s-%04d %02d:%02d:%02d GMT",
             wd[tm.tm_wday % 7], tm.tm_mday, mon[tm.tm_mon % 12], tm.tm_year + 1900, tm.tm_hour,
             tm.tm_min, tm.tm_sec);
}

/* ---- JSON ------------------------------------------------------------- */

/* True when JSON text nests no deeper than BA_PHP_JSON_MAX_DEPTH. */
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
            if (++depth > BA_PHP_JSON_MAX_DEPTH) return false;
        } else if (ch == ']' || ch == '}') {
            depth--;
        }
    }
    return true;
}

json_t *ba_php_json_decode(const char *s, size_t n)
{
    /* jansson without JSON_DECODE_ANY accepts exactly an array or an
     * object at the top. */
    if (!n || !json_depth_ok(s, n)) return NULL;
    json_error_t err;
    return json_loadb(s, n, 0, &err);
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

int ba_php_json_string_append(ba_buf *b, const char *str, size_t n)
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

/* ---- casts of decoded JSON values ------------------------------------- */

int64_t ba_php_int_of_double(double d)
{
    if (!isfinite(d)) return 0;
    if (d >= 9.2233720368547758e18) return INT64_MAX;
    if (d <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)d;
}

int64_t ba_php_int_of_json(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_INTEGER:
        return json_integer_value(v);
    case JSON_REAL:
        return ba_php_int_of_double(json_real_value(v));
    case JSON_STRING: {
        /* The leading numeric prefix: "12abc" is 12, "1e3" is 1000. */
        const char *s = json_string_value(v);
        char *e;
        long long ll = strtoll(s, &e, 10);
        return (*e == '.' || *e == 'e' || *e == 'E') ? ba_php_int_of_double(strtod(s, NULL)) : ll;
    }
    case JSON_TRUE:
        return 1;
    case JSON_FALSE:
    case JSON_NULL:
        return 0;
    case JSON_ARRAY:
        return json_array_size(v) > 0;
    case JSON_OBJECT:
        return json_object_size(v) > 0;
    }
    return 0;
}

size_t ba_php_float_str(double d, char *out)
{
    /* zend_gcvt()'s special values; NAN has no sign. */
    if (isnan(d)) return (size_t)snprintf(out, BA_PHP_FLOAT_STR_MAX, "NAN");
    if (isinf(d)) return (size_t)snprintf(out, BA_PHP_FLOAT_STR_MAX, "%sINF", d < 0 ? "-" : "");
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
    int decpt = atoi(strchr(tmp, 'e') + 1) + 1; /* value = 0.digits x 10^decpt */
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

size_t ba_php_string_of_json(const json_t *v, char *num, const char **s)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        *s = json_string_value(v);
        return json_string_length(v);
    case JSON_INTEGER:
        *s = num;
        return (size_t)snprintf(num, BA_PHP_FLOAT_STR_MAX, "%" JSON_INTEGER_FORMAT,
                                json_integer_value(v));
    case JSON_REAL:
        *s = num;
        return ba_php_float_str(json_real_value(v), num);
    case JSON_TRUE:
        *s = "1";
        return 1;
    case JSON_FALSE:
    case JSON_NULL:
        *s = "";
        return 0;
    case JSON_OBJECT: /* json_decode(..., true) made it an array */
    case JSON_ARRAY:
        *s = "Array";
        return 5;
    }
    *s = "";
    return 0;
}

bool ba_php_falsy(const json_t *v)
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

/* ---- strings ---------------------------------------------------------- */

void ba_php_trim(const char **s, size_t *n)
{
    static const char ws[] = " \t\n\r\v"; /* and NUL, tested apart */
    const char *p = *s;
    size_t len = *n;
    while (len && (memchr(ws, p[len - 1], sizeof(ws) - 1) || p[len - 1] == '\0'))
        len--;
    while (len && (memchr(ws, *p, sizeof(ws) - 1) || *p == '\0'))
        p++, len--;
    *s = p;
    *n = len;
}
