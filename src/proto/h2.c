/* What both ends of HTTP/2 share (h2.h). */
#include "proto/h2.h"

#include "base/hm_base.h"

#include <strings.h>

static void *mem_malloc(size_t size, void *user)
{
    (void)user;
    return hm_alloc(size);
}

static void mem_free(void *p, void *user)
{
    (void)user;
    hm_free(p);
}

static void *mem_calloc(size_t n, size_t size, void *user)
{
    (void)user;
    return hm_calloc(n, size);
}

static void *mem_realloc(void *p, size_t size, void *user)
{
    (void)user;
    return hm_realloc(p, size);
}

nghttp2_mem *hm_h2_mem(void)
{
    static nghttp2_mem mem = {NULL, mem_malloc, mem_free, mem_calloc, mem_realloc};
    return &mem;
}

bool hm_h2_dropped_field(const char *name, size_t len)
{
    static const struct {
        const char *name;
        size_t len;
    } dropped[] = {
        {"connection", 10},        {"keep-alive", 10}, {"proxy-connection", 16},
        {"transfer-encoding", 17}, {"upgrade", 7},     {"host", 4},
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(dropped); i++)
        if (dropped[i].len == len && strncasecmp(dropped[i].name, name, len) == 0) return true;
    return false;
}

void hm_h2_lower(char *out, const char *name, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char ch = name[i];
        out[i] = ch >= 'A' && ch <= 'Z' ? (char)(ch + 32) : ch;
    }
}
