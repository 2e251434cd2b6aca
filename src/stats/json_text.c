/* json_text.c — text from outside hammer as a JSON string; see json_text.h. */
#include "stats/json_text.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/hm_base.h"

/* Length of the valid UTF-8 sequence at p (1-4), or 0 if it is not one. */
static int utf8_seq(const unsigned char *p)
{
    if (p[0] < 0x80) return 1;
    /* Lead bytes 0xc0, 0xc1 and 0xf5-0xff start no valid sequence. */
    int n = p[0] >= 0xf0 && p[0] <= 0xf4  ? 4
            : p[0] >= 0xe0 && p[0] < 0xf0 ? 3
            : p[0] >= 0xc2 && p[0] < 0xe0 ? 2
                                          : 0;
    if (!n) return 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    /* Overlong three- and four-byte forms, surrogates, above U+10FFFF. */
    if (n == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))) return 0;
    if (n == 4 && ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))) return 0;
    return n;
}

bool hm_utf8_valid(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int k = utf8_seq(p);
        if (!k) return false;
        p += k;
    }
    return true;
}

json_t *hm_json_text(const char *s)
{
    if (!s) return json_null();
    if (hm_utf8_valid(s)) return json_string(s);
    size_t n = strlen(s);
    char *clean = hm_alloc(4 * n + 1);
    if (!clean) return NULL;
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    while (*p) {
        int k = utf8_seq(p);
        if (k) {
            memcpy(clean + o, p, (size_t)k);
            o += (size_t)k, p += k;
        } else {
            o += (size_t)snprintf(clean + o, 5, "\\x%02x", *p++);
        }
    }
    clean[o] = 0;
    json_t *j = json_string(clean);
    hm_free(clean);
    return j;
}
