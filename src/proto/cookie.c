#include "proto/cookie.h"

#include "base/hm_base.h"

#include <arpa/inet.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Cookie deleted by Max-Age<=0: earlier than any now_s. */
#define EXPIRED_ALREADY INT64_MIN

static bool is_wsp(char c)
{
    return c == ' ' || c == '\t';
}

static void trim(const char **p, const char **end)
{
    while (*p < *end && is_wsp(**p))
        (*p)++;
    while (*end > *p && is_wsp((*end)[-1]))
        (*end)--;
}

static bool token_is(const char *p, const char *end, const char *lit)
{
    size_t n = strlen(lit);
    return (size_t)(end - p) == n && strncasecmp(p, lit, n) == 0;
}

/* RFC 6265bis §5.6: browsers drop cookies with control characters (HTAB
 * aside); NUL in particular could not be stored in a C string. */
static bool has_ctl(const char *p, const char *end)
{
    for (; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if ((c < 0x20 && c != '\t') || c == 0x7f) return true;
    }
    return false;
}

static bool starts_with_ci(const char *s, size_t n, const char *prefix)
{
    size_t pl = strlen(prefix);
    return n >= pl && strncasecmp(s, prefix, pl) == 0;
}

/* Parses the date forms servers send: RFC 1123, the Netscape / OpenSwoole
 * "Sat, 28-Dec-2026 10:00:00 GMT", RFC 850 and asctime, with or without a
 * weekday. Two-digit years follow RFC 6265 §5.1.1 (70-99 → 19xx, 0-69 →
 * 20xx), which also covers "%Y" reading "26" as year 26. */
static bool parse_cookie_date(const char *p, const char *end, int64_t *out)
{
    static const char *const formats[] = {
        "%a, %d %b %Y %H:%M:%S", "%a, %d-%b-%Y %H:%M:%S", "%a %b %d %H:%M:%S %Y",
        "%d %b %Y %H:%M:%S",     "%d-%b-%Y %H:%M:%S",
    };
    char buf[80];
    trim(&p, &end);
    size_t n = (size_t)(end - p);
    if (n == 0 || n >= sizeof(buf)) return false;
    memcpy(buf, p, n);
    buf[n] = '\0';

    for (size_t i = 0; i < HM_ARRAY_LEN(formats); i++) {
        struct tm tm;
        memset(&tm, 0, sizeof(tm));
        const char *rest = strptime(buf, formats[i], &tm);
        if (!rest) continue;
        while (is_wsp(*rest))
            rest++;
        if (*rest && strcasecmp(rest, "GMT") != 0 && strcasecmp(rest, "UTC") != 0 &&
            strcmp(rest, "+0000") != 0 && strcmp(rest, "-0000") != 0)
            continue;
        int year = tm.tm_year + 1900;
        if (year >= 70 && year <= 99)
            year += 1900;
        else if (year >= 0 && year <= 69)
            year += 2000;
        if (year < 1601) return false;
        tm.tm_year = year - 1900;
        tm.tm_isdst = 0;
        *out = (int64_t)timegm(&tm);
        return true;
    }
    return false;
}

/* Max-Age per RFC 6265 §5.2.2: optional '-', then digits only. */
static bool parse_max_age(const char *p, const char *end, int64_t now_s, int64_t *out)
{
    bool neg = false;
    if (p < end && *p == '-') {
        neg = true;
        p++;
    }
    if (p == end) return false;
    int64_t v = 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9') return false;
        if (v < INT64_MAX / 16) v = v * 10 + (*p - '0'); /* saturate: beyond any run */
    }
    if (neg || v == 0)
        *out = EXPIRED_ALREADY;
    else
        *out = now_s > INT64_MAX - v ? HM_COOKIE_SESSION : now_s + v;
    return true;
}

static bool is_ip_literal(const char *host)
{
    struct in_addr a4;
    return strchr(host, ':') != NULL || inet_pton(AF_INET, host, &a4) == 1;
}

/* RFC 6265 §5.1.3; domain is already lower-case. */
static bool domain_match(const char *host, const char *domain)
{
    if (strcasecmp(host, domain) == 0) return true;
    size_t hl = strlen(host), dl = strlen(domain);
    if (dl == 0 || hl <= dl) return false;
    if (strcasecmp(host + hl - dl, domain) != 0 || host[hl - dl - 1] != '.') return false;
    return !is_ip_literal(host);
}

/* RFC 6265 §5.1.4 path-match; req is not NUL-terminated. */
static bool path_match(const char *req, size_t rl, const char *cpath)
{
    size_t cl = strlen(cpath);
    if (cl > rl || memcmp(req, cpath, cl) != 0) return false;
    return cl == rl || cpath[cl - 1] == '/' || req[cl] == '/';
}

/* The request's uri-path: up to '?' or '#', "/" when empty. */
static void uri_path(const char *path, const char **p, size_t *n)
{
    if (!path || path[0] != '/') {
        *p = "/";
        *n = 1;
        return;
    }
    *p = path;
    *n = strcspn(path, "?#");
}

/* RFC 6265 §5.1.4 default-path. */
static void default_path(const char *req, size_t rl, const char **p, size_t *n)
{
    const char *last = NULL;
    for (size_t i = 0; i < rl; i++)
        if (req[i] == '/') last = req + i;
    if (rl == 0 || req[0] != '/' || last == req) {
        *p = "/";
        *n = 1;
        return;
    }
    *p = req;
    *n = (size_t)(last - req);
}

/* Builds the four strings of c in one block, so a cookie is one allocation. */
static int cookie_strings(hm_cookie *c, const char *name, size_t nl, const char *value, size_t vl,
                          const char *domain, size_t dl, const char *path, size_t pl)
{
    char *b = hm_alloc(nl + vl + dl + pl + 4);
    if (!b) return -ENOMEM;
    c->name = b;
    memcpy(b, name, nl);
    b[nl] = '\0';
    c->value = b + nl + 1;
    memcpy(c->value, value, vl);
    c->value[vl] = '\0';
    c->domain = c->value + vl + 1;
    for (size_t i = 0; i < dl; i++) {
        char ch = domain[i];
        c->domain[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
    }
    c->domain[dl] = '\0';
    c->path = c->domain + dl + 1;
    memcpy(c->path, path, pl);
    c->path[pl] = '\0';
    return 0;
}

void hm_cookie_jar_init(hm_cookie_jar *jar)
{
    memset(jar, 0, sizeof(*jar));
}

void hm_cookie_jar_free(hm_cookie_jar *jar)
{
    if (!jar) return;
    for (size_t i = 0; i < jar->len; i++)
        hm_free(jar->items[i].name);
    hm_free(jar->items);
    memset(jar, 0, sizeof(*jar));
}

/* Bytes of one cookie's string block (see cookie_strings). */
static size_t cookie_bytes(const hm_cookie *c)
{
    return (size_t)(c->path + strlen(c->path) + 1 - c->name);
}

static void remove_at(hm_cookie_jar *jar, size_t i)
{
    jar->bytes -= cookie_bytes(&jar->items[i]);
    hm_free(jar->items[i].name);
    memmove(&jar->items[i], &jar->items[i + 1], (jar->len - i - 1) * sizeof(hm_cookie));
    jar->len--;
}

static void sweep_expired(hm_cookie_jar *jar, int64_t now_s)
{
    for (size_t i = jar->len; i-- > 0;)
        if (jar->items[i].expires_s <= now_s) remove_at(jar, i);
}

static bool sorts_before(const hm_cookie *a, const hm_cookie *b)
{
    size_t al = strlen(a->path), bl = strlen(b->path);
    return al > bl || (al == bl && a->created < b->created);
}

_Static_assert(HM_COOKIE_JAR_MAX_COOKIES == 3000 && HM_COOKIE_JAR_MAX_BYTES == 64 << 10,
               "update the limits in the error texts");

/* Refuses c (freeing its strings) when it would take the jar past its
 * bounds; old_bytes is what c replaces. */
static int over_bounds(hm_cookie_jar *jar, hm_cookie *c, size_t old_bytes, bool adds_one)
{
    if (adds_one && jar->len >= HM_COOKIE_JAR_MAX_COOKIES) {
        jar->error = "cookie jar full: 3000 cookies (HM_COOKIE_JAR_MAX_COOKIES)";
    } else if (jar->bytes - old_bytes + cookie_bytes(c) > HM_COOKIE_JAR_MAX_BYTES) {
        jar->error = "cookie jar full: 64 KiB of cookies (HM_COOKIE_JAR_MAX_BYTES)";
    } else {
        return 0;
    }
    hm_free(c->name);
    return -HM_ETOOBIG;
}

/* Takes ownership of c's strings: replaces the cookie with the same name,
 * domain and path (keeping its creation order, §5.3 step 11) or inserts c in
 * header order. An expired c only deletes. A cookie past the jar's bounds
 * is refused and the jar left as it was. */
static int store(hm_cookie_jar *jar, hm_cookie *c, int64_t now_s)
{
    for (size_t i = 0; i < jar->len; i++) {
        hm_cookie *old = &jar->items[i];
        if (strcmp(old->name, c->name) != 0 || strcmp(old->domain, c->domain) != 0 ||
            strcmp(old->path, c->path) != 0)
            continue;
        if (c->expires_s <= now_s) {
            hm_free(c->name);
            remove_at(jar, i);
            return 0;
        }
        size_t old_bytes = cookie_bytes(old);
        if (over_bounds(jar, c, old_bytes, false) < 0) return -HM_ETOOBIG;
        /* Same path, same creation order: the sorted position still holds. */
        c->created = old->created;
        hm_free(old->name);
        *old = *c;
        jar->bytes += cookie_bytes(c) - old_bytes;
        return 0;
    }
    if (c->expires_s <= now_s) {
        hm_free(c->name);
        return 0;
    }
    if (over_bounds(jar, c, 0, true) < 0) return -HM_ETOOBIG;
    if (jar->len == jar->cap) {
        /* A session's jar mostly holds one cookie (a tab's session id). */
        size_t ncap = jar->cap ? jar->cap * 2 : 1;
        hm_cookie *n = hm_realloc(jar->items, ncap * sizeof(*n));
        if (!n) {
            hm_free(c->name);
            jar->error = "out of memory";
            return -ENOMEM;
        }
        jar->items = n;
        jar->cap = (uint32_t)ncap;
    }
    c->created = jar->next_created++;
    size_t at = jar->len;
    while (at > 0 && sorts_before(c, &jar->items[at - 1]))
        at--;
    memmove(&jar->items[at + 1], &jar->items[at], (jar->len - at) * sizeof(hm_cookie));
    jar->items[at] = *c;
    jar->len++;
    jar->bytes += cookie_bytes(c);
    return 0;
}

_Static_assert(HM_COOKIE_MAX_NAME_VALUE == 4096, "update the limit in the error text");

static int refuse(hm_cookie_jar *jar, int rc, const char *why)
{
    jar->error = why;
    return rc;
}

int hm_cookie_jar_set(hm_cookie_jar *jar, const char *v, size_t len, const char *request_host,
                      const char *request_path, bool secure_channel, int64_t now_s)
{
    if (!v || len == 0) return refuse(jar, -HM_EPARSE, "empty Set-Cookie");
    const char *end = v + len;
    const char *semi = memchr(v, ';', len);
    const char *nv_end = semi ? semi : end;
    const char *eq = memchr(v, '=', (size_t)(nv_end - v));
    if (!eq) return refuse(jar, -HM_EPARSE, "Set-Cookie without name=value");
    const char *name = v, *name_end = eq, *value = eq + 1, *value_end = nv_end;
    trim(&name, &name_end);
    trim(&value, &value_end);
    if (name == name_end) return refuse(jar, -HM_EPARSE, "Set-Cookie with an empty name");
    /* 6265bis §5.6: a control character anywhere drops the whole line (a NUL
     * in Domain or Path would also cut the stored string short). */
    if (has_ctl(v, end)) return refuse(jar, -HM_EPARSE, "Set-Cookie with a control character");
    if ((size_t)(name_end - name) + (size_t)(value_end - value) > HM_COOKIE_MAX_NAME_VALUE)
        return refuse(jar, -HM_ETOOBIG, "cookie name and value over 4096 bytes");

    bool has_max_age = false, has_expires = false;
    int64_t max_age_exp = 0, expires = 0;
    const char *dom = NULL, *dom_end = NULL, *path = NULL, *path_end = NULL;
    hm_cookie c = {0};

    for (const char *p = semi; p && p < end;) {
        const char *a = p + 1;
        const char *a_end = memchr(a, ';', (size_t)(end - a));
        if (!a_end) a_end = end;
        p = a_end < end ? a_end : NULL;

        const char *k = a, *k_end = memchr(a, '=', (size_t)(a_end - a));
        const char *val = a_end, *val_end = a_end;
        if (k_end)
            val = k_end + 1;
        else
            k_end = a_end;
        trim(&k, &k_end);
        trim(&val, &val_end);
        if ((size_t)(val_end - val) > HM_COOKIE_MAX_ATTR_VALUE) continue; /* 6265bis §5.6 */

        if (token_is(k, k_end, "expires")) {
            if (parse_cookie_date(val, val_end, &expires)) has_expires = true;
        } else if (token_is(k, k_end, "max-age")) {
            if (parse_max_age(val, val_end, now_s, &max_age_exp)) has_max_age = true;
        } else if (token_is(k, k_end, "domain")) {
            if (val == val_end) continue; /* §5.2.3: ignore an empty Domain */
            if (*val == '.') val++;
            dom = val;
            dom_end = val_end;
        } else if (token_is(k, k_end, "path")) {
            bool ok = val < val_end && *val == '/';
            path = ok ? val : NULL;
            path_end = ok ? val_end : NULL;
        } else if (token_is(k, k_end, "secure")) {
            c.secure = true;
        } else if (token_is(k, k_end, "httponly")) {
            c.http_only = true;
        } else if (token_is(k, k_end, "partitioned")) {
            c.partitioned = true;
        } else if (token_is(k, k_end, "samesite")) {
            c.samesite = token_is(val, val_end, "strict") ? HM_SAMESITE_STRICT
                         : token_is(val, val_end, "lax")  ? HM_SAMESITE_LAX
                         : token_is(val, val_end, "none") ? HM_SAMESITE_NONE
                                                          : HM_SAMESITE_DEFAULT;
        }
    }

    c.expires_s = has_max_age ? max_age_exp : has_expires ? expires : HM_COOKIE_SESSION;

    const char *host = request_host ? request_host : "";
    size_t dl;
    char dombuf[256];
    if (dom && dom < dom_end) {
        dl = (size_t)(dom_end - dom);
        if (dl >= sizeof(dombuf))
            return refuse(jar, -EPERM, "cookie Domain does not cover the request host");
        for (size_t i = 0; i < dl; i++) {
            char ch = dom[i];
            dombuf[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
        }
        dombuf[dl] = '\0';
        if (!domain_match(host, dombuf))
            return refuse(jar, -EPERM, "cookie Domain does not cover the request host");
        dom = dombuf;
    } else {
        c.host_only = true;
        dom = host;
        dl = strlen(host);
    }

    const char *rp;
    size_t rl;
    uri_path(request_path, &rp, &rl);
    size_t pl;
    if (path) {
        pl = (size_t)(path_end - path);
    } else {
        default_path(rp, rl, &path, &pl);
    }

    /* RFC 6265bis §5.6 steps 14 and 20: Secure needs a secure origin, and
     * the name prefixes promise attributes the server must have sent. */
    size_t nl = (size_t)(name_end - name);
    if (c.secure && !secure_channel)
        return refuse(jar, -EPERM, "Secure cookie over an insecure connection");
    if (starts_with_ci(name, nl, "__Secure-") && !c.secure)
        return refuse(jar, -EPERM, "__Secure- cookie without Secure");
    if (starts_with_ci(name, nl, "__Host-") &&
        (!c.secure || !c.host_only || pl != 1 || path[0] != '/'))
        return refuse(jar, -EPERM, "__Host- cookie without Secure, Path=/ or host-only");

    int rc = cookie_strings(&c, name, nl, value, (size_t)(value_end - value), dom, dl, path, pl);
    if (rc < 0) return refuse(jar, rc, "out of memory");
    sweep_expired(jar, now_s);
    jar->error = NULL;
    return store(jar, &c, now_s);
}

int hm_cookie_jar_header(const hm_cookie_jar *jar, const char *host, const char *path,
                         bool secure_channel, int64_t now_s, char *buf, size_t cap)
{
    const char *rp;
    size_t rl, o = 0;
    uri_path(path, &rp, &rl);
    if (!host) host = "";
    if (cap == 0) return -ENOSPC;
    if (cap > INT32_MAX) cap = INT32_MAX; /* so the length fits the int result */

    for (size_t i = 0; i < jar->len; i++) {
        const hm_cookie *c = &jar->items[i];
        if (c->expires_s <= now_s || (c->secure && !secure_channel)) continue;
        if (c->host_only ? strcasecmp(host, c->domain) != 0 : !domain_match(host, c->domain))
            continue;
        if (!path_match(rp, rl, c->path)) continue;

        size_t nl = strlen(c->name), vl = strlen(c->value);
        size_t need = (o ? 2 : 0) + nl + 1 + vl;
        if (o + need >= cap) {
            buf[0] = '\0';
            return -ENOSPC;
        }
        if (o) {
            memcpy(buf + o, "; ", 2);
            o += 2;
        }
        memcpy(buf + o, c->name, nl);
        o += nl;
        buf[o++] = '=';
        memcpy(buf + o, c->value, vl);
        o += vl;
    }
    buf[o] = '\0';
    return (int)o;
}

char *hm_cookie_jar_header_dup(const hm_cookie_jar *jar, const char *host, const char *path,
                               bool secure_channel, int64_t now_s)
{
    /* The whole jar's text bounds any one header: size for it, then trim. */
    size_t cap = 1;
    for (size_t i = 0; i < jar->len; i++)
        cap += strlen(jar->items[i].name) + strlen(jar->items[i].value) + 3;
    char *buf = hm_alloc(cap);
    if (!buf) return NULL;
    int n = hm_cookie_jar_header(jar, host, path, secure_channel, now_s, buf, cap);
    if (n < 0) { /* cannot happen: cap covers every cookie */
        hm_free(buf);
        return NULL;
    }
    char *exact = hm_realloc(buf, (size_t)n + 1);
    return exact ? exact : buf;
}

const char *hm_cookie_jar_get(const hm_cookie_jar *jar, const char *name)
{
    for (size_t i = 0; i < jar->len; i++)
        if (strcmp(jar->items[i].name, name) == 0) return jar->items[i].value;
    return NULL;
}

int hm_cookie_jar_put(hm_cookie_jar *jar, const char *name, const char *value, const char *host)
{
    size_t nl = strlen(name), vl = strlen(value);
    if (nl == 0 || !host || !host[0] || strpbrk(name, ";=") || strchr(value, ';') ||
        has_ctl(name, name + nl) || has_ctl(value, value + vl))
        return refuse(jar, -HM_EPARSE, "cookie name or value not usable");
    if (nl + vl > HM_COOKIE_MAX_NAME_VALUE)
        return refuse(jar, -HM_ETOOBIG, "cookie name and value over 4096 bytes");
    hm_cookie c = {0};
    c.expires_s = HM_COOKIE_SESSION;
    c.host_only = true;
    c.secure = starts_with_ci(name, nl, "__Secure-") || starts_with_ci(name, nl, "__Host-");
    int rc = cookie_strings(&c, name, nl, value, vl, host, strlen(host), "/", 1);
    if (rc < 0) return refuse(jar, rc, "out of memory");
    jar->error = NULL;
    return store(jar, &c, 0); /* a session cookie is never expired */
}
