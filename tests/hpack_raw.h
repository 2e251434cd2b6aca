/* hpack_raw.h — HPACK (RFC 7541) written by hand, for the tests' raw
 * HTTP/2 peers (h2_test_server.c, test_bench_app_h2_hostile.c), which
 * send header blocks an encoder never would: size updates out of place,
 * indexes past the tables, one table entry referenced thousands of
 * times. Values are never Huffman-coded. Each function writes into out,
 * which must have room, and returns the bytes written. */
#ifndef HM_TEST_HPACK_RAW_H
#define HM_TEST_HPACK_RAW_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* An integer with an n-bit prefix (section 5.1), the first byte's other
 * bits `flags`: 0x80 an indexed field, 0x40 a literal with incremental
 * indexing, 0x20 a dynamic table size update, 0x00 a literal without
 * indexing. */
static inline size_t hpack_int(uint8_t *out, int prefix, uint8_t flags, size_t v)
{
    size_t max = ((size_t)1 << prefix) - 1, k = 0;
    if (v < max) {
        out[k++] = (uint8_t)(flags | v);
        return k;
    }
    out[k++] = (uint8_t)(flags | max);
    for (v -= max; v >= 128; v >>= 7)
        out[k++] = (uint8_t)(0x80 | (v & 0x7f));
    out[k++] = (uint8_t)v;
    return k;
}

/* A literal field without indexing (section 6.2.2) whose name is static
 * table entry idx. */
static inline size_t hpack_lit(uint8_t *out, size_t idx, const char *v)
{
    size_t n = strlen(v);
    size_t k = hpack_int(out, 4, 0, idx);
    k += hpack_int(out + k, 7, 0, n);
    memcpy(out + k, v, n);
    return k + n;
}

/* A literal field with incremental indexing and a new name (section
 * 6.2.1), its value vlen bytes of 'v': it enters the dynamic table as
 * index 62, evicting the oldest entries that no longer fit. */
static inline size_t hpack_insert(uint8_t *out, const char *name, size_t vlen)
{
    size_t n = strlen(name), k = 0;
    out[k++] = 0x40;
    k += hpack_int(out + k, 7, 0, n);
    memcpy(out + k, name, n);
    k += n;
    k += hpack_int(out + k, 7, 0, vlen);
    memset(out + k, 'v', vlen);
    return k + vlen;
}

#endif
