/* hdr_log.c — HdrHistogram V2 compressed encoding and interval log; see
 * hdr_log.h. */
#include "stats/hdr_log.h"

#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "base/hm_base.h"

/* Cookies with the word-size nibble 1 (ZigZag LEB128 counts). */
#define V2_ENCODING_COOKIE UINT32_C(0x1c849313)
#define V2_COMPRESSION_COOKIE UINT32_C(0x1c849314)
#define COOKIE_BASE(c) ((c) & ~UINT32_C(0xf0))
#define ENCODING_HEADER 40
#define COMPRESSION_HEADER 8
#define MAX_VARINT 9

static void put_be32(uint8_t *p, uint32_t v)
{
    for (int i = 3; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get_be64(const uint8_t *p)
{
    return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

/* The reference's varint: 7 bits a byte for up to 8 bytes, then a ninth
 * byte carrying the last 8 bits whole (so 64 bits fit in 9 bytes). */
static size_t zigzag_put(uint8_t *p, int64_t x)
{
    uint64_t v = ((uint64_t)x << 1) ^ (uint64_t)(x >> 63);
    size_t n = 0;
    while (n < 8) {
        if (v < 0x80) {
            p[n++] = (uint8_t)v;
            return n;
        }
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Reads one varint from p[0..len); returns bytes used, 0 if truncated. */
static size_t zigzag_get(const uint8_t *p, size_t len, int64_t *x)
{
    uint64_t v = 0;
    size_t n = 0;
    for (;;) {
        if (n >= len) return 0;
        uint8_t b = p[n];
        if (n == 8) {
            v |= (uint64_t)b << 56;
            n++;
            break;
        }
        v |= (uint64_t)(b & 0x7f) << (7 * n);
        n++;
        if (!(b & 0x80)) break;
    }
    *x = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
    return n;
}

int hm_hdr_encode_base64(const hm_hdr *h, char **out)
{
    *out = NULL;
    int32_t limit = h->total_count ? hm_hdr_index_of(h, h->max_value) + 1 : 0;
    if (limit > h->counts_len) limit = h->counts_len;
    size_t raw_cap = ENCODING_HEADER + MAX_VARINT * (size_t)limit;
    uint8_t *raw = hm_alloc(raw_cap);
    if (!raw) return -ENOMEM;
    size_t n = ENCODING_HEADER;
    for (int32_t i = 0; i < limit;) {
        int64_t c = h->counts[i++];
        if (c == 0) {
            int64_t zeros = 1;
            while (i < limit && h->counts[i] == 0)
                zeros++, i++;
            n += zigzag_put(raw + n, -zeros);
        } else {
            n += zigzag_put(raw + n, c);
        }
    }
    double ratio = 1.0;
    uint64_t ratio_bits;
    memcpy(&ratio_bits, &ratio, sizeof(ratio_bits));
    put_be32(raw, V2_ENCODING_COOKIE);
    put_be32(raw + 4, (uint32_t)(n - ENCODING_HEADER));
    put_be32(raw + 8, 0); /* normalizing index offset */
    put_be32(raw + 12, (uint32_t)h->sigfigs);
    put_be64(raw + 16, (uint64_t)h->lowest);
    put_be64(raw + 24, (uint64_t)h->highest);
    put_be64(raw + 32, ratio_bits);

    uLongf zlen = compressBound((uLong)n);
    uint8_t *packed = hm_alloc(COMPRESSION_HEADER + zlen);
    if (!packed) {
        hm_free(raw);
        return -ENOMEM;
    }
    int zrc = compress(packed + COMPRESSION_HEADER, &zlen, raw, (uLong)n);
    hm_free(raw);
    if (zrc != Z_OK) {
        hm_free(packed);
        return zrc == Z_MEM_ERROR ? -ENOMEM : -EIO;
    }
    put_be32(packed, V2_COMPRESSION_COOKIE);
    put_be32(packed + 4, (uint32_t)zlen);
    size_t plen = COMPRESSION_HEADER + zlen;
    char *b64 = hm_alloc(4 * ((plen + 2) / 3) + 1);
    if (!b64) {
        hm_free(packed);
        return -ENOMEM;
    }
    EVP_EncodeBlock((unsigned char *)b64, packed, (int)plen);
    hm_free(packed);
    *out = b64;
    return 0;
}

/* Inflates src into a buffer that grows until the stream fits. */
static int inflate_all(const uint8_t *src, size_t len, uint8_t **out, size_t *out_len)
{
    size_t cap = 64 * 1024;
    for (;;) {
        uint8_t *buf = hm_alloc(cap);
        if (!buf) return -ENOMEM;
        uLongf n = cap;
        int rc = uncompress(buf, &n, src, (uLong)len);
        if (rc == Z_OK) {
            *out = buf;
            *out_len = n;
            return 0;
        }
        hm_free(buf);
        if (rc != Z_BUF_ERROR || cap >= 64u << 20) return rc == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
        cap *= 4;
    }
}

static int decode_counts(const uint8_t *raw, size_t len, hm_hdr *h)
{
    if (len < ENCODING_HEADER || get_be32(raw) != V2_ENCODING_COOKIE) return -EINVAL;
    uint32_t payload = get_be32(raw + 4);
    /* The normalizing offset and conversion ratio (bytes 8 and 32) are
     * ignored: they matter only for shifted or double histograms, and
     * hdr-histogram-js writes placeholders (1 and raw bits 1) there. */
    int32_t sigfigs = (int32_t)get_be32(raw + 12);
    int64_t lowest = (int64_t)get_be64(raw + 16), highest = (int64_t)get_be64(raw + 24);
    if (payload > len - ENCODING_HEADER) return -EINVAL;
    int rc = hm_hdr_init(h, lowest, highest, sigfigs);
    if (rc < 0) return rc;
    const uint8_t *p = raw + ENCODING_HEADER, *end = p + payload;
    int32_t index = 0;
    while (p < end) {
        int64_t v;
        size_t used = zigzag_get(p, (size_t)(end - p), &v);
        if (!used) goto bad;
        p += used;
        if (v < 0) {
            if (v < -(int64_t)h->counts_len || index - v > h->counts_len) goto bad;
            index += (int32_t)-v;
        } else {
            if (index >= h->counts_len || v > INT64_MAX - h->total_count) goto bad;
            /* Through the public path, so count, min and max are kept. */
            if (v && hm_hdr_record_n(h, hm_hdr_value_at_index(h, index), v) < 0) goto bad;
            index++;
        }
    }
    return 0;
bad:
    hm_hdr_destroy(h);
    memset(h, 0, sizeof(*h));
    return -EINVAL;
}

int hm_hdr_decode_base64(const char *b64, size_t len, hm_hdr *h)
{
    memset(h, 0, sizeof(*h));
    if (len == 0 || len % 4 || len > INT32_MAX) return -EINVAL;
    uint8_t *packed = hm_alloc(len / 4 * 3);
    if (!packed) return -ENOMEM;
    int plen = EVP_DecodeBlock(packed, (const unsigned char *)b64, (int)len);
    /* EVP_DecodeBlock counts the padding as zero bytes. */
    if (plen >= 0 && b64[len - 1] == '=') plen -= b64[len - 2] == '=' ? 2 : 1;
    int rc = -EINVAL;
    if (plen < COMPRESSION_HEADER ||
        COOKIE_BASE(get_be32(packed)) != COOKIE_BASE(V2_COMPRESSION_COOKIE))
        goto out;
    uint32_t zlen = get_be32(packed + 4);
    if (zlen > (uint32_t)plen - COMPRESSION_HEADER) goto out;
    uint8_t *raw;
    size_t raw_len;
    rc = inflate_all(packed + COMPRESSION_HEADER, zlen, &raw, &raw_len);
    if (rc < 0) goto out;
    rc = decode_counts(raw, raw_len, h);
    hm_free(raw);
out:
    hm_free(packed);
    return rc;
}

/* ---- the interval log -------------------------------------------------- */

int hm_hlog_open(hm_hlog *log, const char *path)
{
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    int rc = hm_hlog_open_at(log, path, (double)wall.tv_sec + (double)wall.tv_nsec / 1e9);
    log->start_ns = hm_now_ns();
    return rc;
}

int hm_hlog_open_at(hm_hlog *log, const char *path, double start_epoch_s)
{
    log->f = fopen(path, "w");
    if (!log->f) return -errno;
    log->start_ns = 0;
    time_t secs = (time_t)start_epoch_s;
    char when[64];
    struct tm tm;
    strftime(when, sizeof(when), "%a %b %d %H:%M:%S UTC %Y", gmtime_r(&secs, &tm));
    fprintf(log->f,
            "#[Logged with hammer " HM_VERSION ", values in microseconds]\n"
            "#[Histogram log format version 1.3]\n"
            "#[StartTime: %.3f (seconds since epoch), %s]\n"
            "#[BaseTime: %.3f (seconds since epoch)]\n"
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
            "\"Interval_Compressed_Histogram\"\n",
            start_epoch_s, when, start_epoch_s);
    return fflush(log->f) ? -errno : 0;
}

int hm_hlog_write(hm_hlog *log, const char *tag, int64_t from_ns, int64_t to_ns, const hm_hdr *h)
{
    char *b64;
    int rc = hm_hdr_encode_base64(h, &b64);
    if (rc < 0) return rc;
    if (tag && *tag) fprintf(log->f, "Tag=%s,", tag);
    fprintf(log->f, "%.3f,%.3f,%.3f,%s\n", (double)(from_ns - log->start_ns) / 1e9,
            (double)(to_ns - from_ns) / 1e9, (double)hm_hdr_max(h) / 1000.0, b64);
    hm_free(b64);
    return fflush(log->f) ? -errno : 0;
}

int hm_hlog_close(hm_hlog *log)
{
    if (!log->f) return 0;
    bool bad = ferror(log->f); /* an earlier line's write failed; its errno is gone */
    int rc = fclose(log->f) != 0 ? -errno : bad ? -EIO : 0;
    log->f = NULL;
    return rc;
}

int hm_hlog_start_time(FILE *f, double *epoch_s)
{
    char line[512];
    int rc = -EINVAL;
    while (fgets(line, sizeof(line), f) && line[0] == '#')
        if (sscanf(line, "#[StartTime: %lf", epoch_s) == 1) {
            rc = 0;
            break;
        }
    rewind(f);
    return rc;
}

int hm_hlog_read(FILE *f, hm_hlog_entry *e)
{
    memset(e, 0, sizeof(*e));
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    while ((n = getline(&line, &cap, f)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = 0;
        if (n == 0 || line[0] == '#' || line[0] == '"') continue;
        char *p = line;
        if (!strncmp(p, "Tag=", 4)) {
            char *comma = strchr(p, ',');
            if (!comma || (size_t)(comma - p - 4) >= sizeof(e->tag)) {
                rc = -EINVAL;
                break;
            }
            memcpy(e->tag, p + 4, (size_t)(comma - p - 4));
            p = comma + 1;
        }
        char *end;
        double v[3];
        for (int i = 0; i < 3; i++) {
            v[i] = strtod(p, &end);
            if (end == p || *end != ',') {
                rc = -EINVAL;
                goto out;
            }
            p = end + 1;
        }
        e->start_s = v[0];
        e->length_s = v[1];
        e->max_ms = v[2];
        rc = hm_hdr_decode_base64(p, strlen(p), &e->hist);
        if (rc == 0) rc = 1;
        break;
    }
out:
    free(line);
    return rc;
}
