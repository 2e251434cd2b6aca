/* test_hdr_log.c — HdrHistogram's V2 compressed encoding and interval log
 * (src/stats/hdr_log.c), against the reference.
 *
 * REFERENCE_B64 was produced by hdr-histogram-js 3.0.1 (the npm package the
 * HdrHistogram project publishes), with:
 *   h = build({lowestDiscernibleValue: 1, highestTrackableValue: 3600000000,
 *              numberOfSignificantValueDigits: 3, bitBucketSize: 64})
 *   record 1 x1, 100 x2, 1000 x1, 12345 x5, 1000000 x3, 3599999999 x1
 *   encodeIntoCompressedBase64(h)
 * and the same histogram reported count 13, p50 12351, p99 3600809983,
 * max 3599999999 (lowest equivalent of the top slot) and min 1. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hm_base.h"
#include "hm_test.h"
#include "stats/hdr_log.h"

static const char REFERENCE_B64[] =
    "HISTFAAAADV4nJNpmSzMwMAgxMDAwMjAwMDMAAEgNsO1yUsY4Hymw4wsrXxMuy24NqaxLd7DyAQAsiUIRw==";

static void fill_reference(hm_hdr *h)
{
    ASSERT_EQ(hm_hdr_init(h, 1, HM_HDR_HIGHEST_US, 3), 0);
    ASSERT_EQ(hm_hdr_record_n(h, 1, 1), 0);
    ASSERT_EQ(hm_hdr_record_n(h, 100, 2), 0);
    ASSERT_EQ(hm_hdr_record_n(h, 1000, 1), 0);
    ASSERT_EQ(hm_hdr_record_n(h, 12345, 5), 0);
    ASSERT_EQ(hm_hdr_record_n(h, 1000000, 3), 0);
    ASSERT_EQ(hm_hdr_record_n(h, 3599999999, 1), 0);
}

static void assert_same(const hm_hdr *a, const hm_hdr *b)
{
    ASSERT_EQ(a->lowest, b->lowest);
    ASSERT_EQ(a->highest, b->highest);
    ASSERT_EQ(a->sigfigs, b->sigfigs);
    ASSERT_EQ(a->counts_len, b->counts_len);
    ASSERT_EQ(hm_hdr_count(a), hm_hdr_count(b));
    for (int32_t i = 0; i < a->counts_len; i++)
        ASSERT_EQ(a->counts[i], b->counts[i]);
    ASSERT_EQ(hm_hdr_min(a), hm_hdr_min(b));
    ASSERT_EQ(hm_hdr_max(a), hm_hdr_max(b));
    const double ps[] = {0, 10, 50, 90, 99, 99.9, 99.99, 100};
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
        ASSERT_EQ(hm_hdr_value_at_percentile(a, ps[i]), hm_hdr_value_at_percentile(b, ps[i]));
}

/* The reference's bytes decode to the reference's numbers. */
static void test_decode_reference(void)
{
    hm_hdr h, want;
    ASSERT_EQ(hm_hdr_decode_base64(REFERENCE_B64, strlen(REFERENCE_B64), &h), 0);
    ASSERT_EQ(hm_hdr_count(&h), 13);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 50), 12351);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 99), 3600809983);
    ASSERT_EQ(hm_hdr_min(&h), 1);
    ASSERT_EQ(hm_hdr_count_at_value(&h, 12345), 5);
    fill_reference(&want);
    assert_same(&h, &want);
    hm_hdr_destroy(&h);
    hm_hdr_destroy(&want);
}

/* Our encoding of the same histogram reads back the same, and has the
 * reference's compression cookie (so "HISTF"). The bytes differ
 * from hdr-histogram-js's only in two header fields that it fills with
 * placeholders (normalizing offset 1, ratio bits 1; Java and C write 0 and
 * 1.0 as we do) and in the deflate stream (pako vs zlib), which is why the
 * decoded counts, not the strings, are compared. */
static void test_encode_matches_reference(void)
{
    hm_hdr h;
    fill_reference(&h);
    char *b64;
    ASSERT_EQ(hm_hdr_encode_base64(&h, &b64), 0);
    ASSERT_EQ(strncmp(b64, "HISTF", 5), 0);
    hm_hdr back, want;
    ASSERT_EQ(hm_hdr_decode_base64(b64, strlen(b64), &back), 0);
    fill_reference(&want);
    assert_same(&back, &want);
    hm_hdr_destroy(&back);
    hm_hdr_destroy(&want);
    hm_free(b64);
    hm_hdr_destroy(&h);
}

/* Random-ish data over the whole range, long zero runs, big counts (9-byte
 * varints), and the empty histogram all survive the round trip. */
static void test_round_trip(void)
{
    hm_hdr h, back;
    ASSERT_EQ(hm_hdr_init(&h, 1, HM_HDR_HIGHEST_US, 3), 0);
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t v = (int64_t)(x % 1000) * (int64_t)(1 + (x >> 40) % 100000);
        ASSERT_EQ(hm_hdr_record(&h, v), 0);
    }
    ASSERT_EQ(hm_hdr_record_n(&h, 777, INT64_C(1) << 60), 0);
    char *b64;
    ASSERT_EQ(hm_hdr_encode_base64(&h, &b64), 0);
    ASSERT_EQ(hm_hdr_decode_base64(b64, strlen(b64), &back), 0);
    assert_same(&h, &back);
    hm_free(b64);
    hm_hdr_destroy(&back);

    hm_hdr_reset(&h);
    ASSERT_EQ(hm_hdr_encode_base64(&h, &b64), 0);
    ASSERT_EQ(hm_hdr_decode_base64(b64, strlen(b64), &back), 0);
    ASSERT_EQ(hm_hdr_count(&back), 0);
    hm_free(b64);
    hm_hdr_destroy(&back);
    hm_hdr_destroy(&h);
}

/* Garbage is refused with -EINVAL, never read past. */
static void test_bad_input(void)
{
    hm_hdr h;
    const char *bad[] = {"", "HISTF", "!!!!", "AAAAAAAAAAAA",
                         /* right cookie, truncated zlib stream */
                         "HISTFAAAADV4nJNpmSzMwMAgxMDAwMjAwMDMAAEg"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ASSERT_EQ(hm_hdr_decode_base64(bad[i], strlen(bad[i]), &h), -EINVAL);
        ASSERT(h.counts == NULL);
    }
    /* Well-formed, but two counts of INT64_MAX: their total cannot exist. */
    hm_hdr big;
    ASSERT_EQ(hm_hdr_init(&big, 1, HM_HDR_HIGHEST_US, 3), 0);
    hm_hdr_record(&big, 1);
    hm_hdr_record(&big, 2);
    big.counts[hm_hdr_index_of(&big, 1)] = INT64_MAX;
    big.counts[hm_hdr_index_of(&big, 2)] = INT64_MAX;
    char *b64;
    ASSERT_EQ(hm_hdr_encode_base64(&big, &b64), 0);
    ASSERT_EQ(hm_hdr_decode_base64(b64, strlen(b64), &h), -EINVAL);
    hm_free(b64);
    hm_hdr_destroy(&big);
}

/* A log written interval by interval reads back to the same intervals, and
 * its sum is the whole run. */
static void test_log_round_trip(void)
{
    char path[] = "/tmp/hm_hlog_XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    close(fd);
    hm_hlog log;
    ASSERT_EQ(hm_hlog_open(&log, path), 0);
    hm_hdr interval, total;
    ASSERT_EQ(hm_hdr_init(&interval, 1, HM_HDR_HIGHEST_US, 3), 0);
    ASSERT_EQ(hm_hdr_init(&total, 1, HM_HDR_HIGHEST_US, 3), 0);
    int64_t t0 = log.start_ns;
    for (int i = 0; i < 5; i++) {
        hm_hdr_reset(&interval);
        for (int k = 0; k <= i * 100; k++)
            hm_hdr_record(&interval, 100 + k * (i + 1));
        hm_hdr_add(&total, &interval);
        ASSERT_EQ(hm_hlog_write(&log, i == 4 ? "warm" : NULL, t0 + i * INT64_C(1000000000),
                                t0 + (i + 1) * INT64_C(1000000000), &interval),
                  0);
    }
    ASSERT_EQ(hm_hlog_close(&log), 0);

    FILE *f = fopen(path, "r");
    ASSERT(f);
    char first[128];
    ASSERT(fgets(first, sizeof(first), f));
    rewind(f);
    hm_hdr sum;
    ASSERT_EQ(hm_hdr_init(&sum, 1, HM_HDR_HIGHEST_US, 3), 0);
    hm_hlog_entry e;
    int n = 0, rc;
    while ((rc = hm_hlog_read(f, &e)) == 1) {
        ASSERT_DBL_NEAR(e.start_s, (double)n, 1e-9);
        ASSERT_DBL_NEAR(e.length_s, 1.0, 1e-9);
        ASSERT_EQ(hm_hdr_count(&e.hist), (int64_t)n * 100 + 1);
        ASSERT_STREQ(e.tag, n == 4 ? "warm" : "");
        ASSERT_DBL_NEAR(e.max_ms, (double)hm_hdr_max(&e.hist) / 1000.0, 0.0006);
        hm_hdr_add(&sum, &e.hist);
        hm_hdr_destroy(&e.hist);
        n++;
    }
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(n, 5);
    assert_same(&sum, &total);
    fclose(f);
    unlink(path);
    hm_hdr_destroy(&sum);
    hm_hdr_destroy(&total);
    hm_hdr_destroy(&interval);
}

int main(void)
{
    test_decode_reference();
    test_encode_matches_reference();
    test_round_trip();
    test_bad_input();
    test_log_round_trip();
    puts("hdr_log: all tests passed");
    return 0;
}
