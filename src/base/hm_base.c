#include "hm_base.h"

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

int hm_parse_duration(const char *s, int64_t *ns)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0)) return -EINVAL;
    double mul;
    if (!strcmp(end, "ms"))
        mul = 1e6;
    else if (!strcmp(end, "us"))
        mul = 1e3;
    else if (!strcmp(end, "s") || !*end)
        mul = 1e9;
    else if (!strcmp(end, "m"))
        mul = 60e9;
    else if (!strcmp(end, "h"))
        mul = 3600e9;
    else
        return -EINVAL;
    if (v * mul > 9e18) return -EINVAL;
    *ns = (int64_t)(v * mul);
    return 0;
}
