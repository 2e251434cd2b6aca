/* The growable byte buffer (see hm_buf.h). */
#include "base/hm_buf.h"

#include "base/hm_base.h"

#include <stdint.h>
#include <string.h>

#define HM_BUF_MIN 64

int hm_buf_reserve(hm_buf *b, size_t extra)
{
    if (extra >= SIZE_MAX / 4 - b->len) return -ENOMEM;
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : HM_BUF_MIN;
    while (cap < need)
        cap *= 2;
    char *p = hm_realloc(b->data, cap);
    if (!p) return -ENOMEM;
    b->data = p;
    b->cap = cap;
    return 0;
}

int hm_buf_append(hm_buf *b, const void *p, size_t n)
{
    int rc = hm_buf_reserve(b, n);
    if (rc) return rc;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int hm_buf_set(hm_buf *b, const void *p, size_t n)
{
    if (n > b->len) {
        int rc = hm_buf_reserve(b, n - b->len);
        if (rc) return rc;
    } else if (!b->data) {
        int rc = hm_buf_reserve(b, 0);
        if (rc) return rc;
    }
    if (n) memmove(b->data, p, n);
    b->len = n;
    b->data[n] = '\0';
    return 0;
}

void hm_buf_free(hm_buf *b)
{
    hm_free(b->data);
    *b = (hm_buf){0};
}
