#include "hm_base.h"
#include <ctype.h>

#include <stdlib.h>
#include <string.h>

#ifndef HM_USE_LIBC_MALLOC
#include <mimalloc.h>
#endif

const char *hm_strerror(int err)
{
    if (err >= 0) return "success";
    switch (-err) {
    case HM_EPROTO_HTTP:
        return "malformed HTTP message";
    case HM_ETOOBIG:
        return "message over the size limit";
    case HM_ECLOSED:
        return "connection closed by peer";
    case HM_EPARSE:
        return "malformed input";
    case HM_ENOTFOUND:
        return "expected item not found";
    case HM_ESTATUS:
        return "unexpected HTTP status";
    case HM_ETLS:
        return "TLS failure";
    default:
        return strerror(-err);
    }
}

#ifdef HM_USE_LIBC_MALLOC
void *hm_alloc(size_t size)
{
    return malloc(size);
}
void *hm_calloc(size_t n, size_t size)
{
    return calloc(n, size);
}
void *hm_realloc(void *p, size_t size)
{
    return realloc(p, size);
}
void hm_free(void *p)
{
    free(p);
}
#else
void *hm_alloc(size_t size)
{
    return mi_malloc(size);
}
void *hm_calloc(size_t n, size_t size)
{
    return mi_calloc(n, size);
}
void *hm_realloc(void *p, size_t size)
{
    return mi_realloc(p, size);
}
void hm_free(void *p)
{
    mi_free(p);
}
#endif

char *hm_strndup(const char *s, size_t n)
{
    char *d = hm_alloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *hm_strdup(const char *s)
{
    return hm_strndup(s, strlen(s));
}

int hm_parse_int(const char *s, long long min, long long max, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) return -EINVAL;
    *out = v;
    return 0;
}

/* One "<number><unit>" of a duration; *unit_len 0 when no unit follows. */
static double duration_unit(const char *u, size_t *unit_len)
{
    static const struct {
        const char *name;
        double ns;
    } units[] = {{"ms", 1e6}, {"us", 1e3}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        size_t n = strlen(units[i].name);
        if (!strncmp(u, units[i].name, n)) {
            *unit_len = n;
            return units[i].ns;
        }
    }
    *unit_len = 0;
    return 0;
}

int hm_parse_duration(const char *s, int64_t *ns)
{
    /* Parts such as "1h30m" or "1m30.5s" add up, as in Go, k6 and vegeta;
     * a bare number stands alone (seconds). */
    double total = 0;
    const char *p = s;
    do {
        if (!isdigit((unsigned char)*p) && *p != '.') return -EINVAL;
        char *end;
        double v = strtod(p, &end);
        if (end == p || !(v >= 0)) return -EINVAL;
        size_t unit_len;
        double mul = duration_unit(end, &unit_len);
        if (!unit_len) {
            if (*end || p != s) return -EINVAL;
            mul = 1e9;
        }
        total += v * mul;
        p = end + unit_len;
    } while (*p);
    if (total > 9e18) return -EINVAL;
    *ns = (int64_t)total;
    return 0;
}

size_t hm_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return SIZE_MAX;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

bool hm_near_miss(const char *typed, const char *known)
{
    size_t len = strlen(typed);
    size_t near = len / 3 > 2 ? len / 3 : 2;
    return len > 1 && hm_edit_distance(typed, known) <= near;
}
