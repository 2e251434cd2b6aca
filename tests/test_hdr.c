/* test_hdr.c — the HdrHistogram-compatible histogram (src/stats/hdr.c).
 *
 * Every expected number below is derived by hand from HdrHistogram_c's
 * formulas (hdr_calculate_bucket_config, get_bucket_index, counts_index,
 * hdr_value_at_percentile, percentile_iter_next, hdr_percentiles_print);
 * the derivations are in the comments. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hm_test.h"
#include "stats/hdr.h"

#define US_1H INT64_C(3600000000)

static void init_us(hm_hdr *h)
{
    ASSERT_EQ(hm_hdr_init(h, 1, US_1H, 3), 0);
}

/* Configuration for (lowest 1, highest 3600000000, 3 significant figures):
 *   largest value with single-unit resolution = 2 * 10^3 = 2000
 *   sub_bucket_count_magnitude = ceil(log2(2000)) = ceil(10.97) = 11
 *   sub_bucket_half_count_magnitude = 11 - 1 = 10
 *   unit_magnitude = (int)log2(1) = 0
 *   sub_bucket_count = 2^11 = 2048, sub_bucket_half_count = 1024
 *   sub_bucket_mask = (2048 - 1) << 0 = 2047
 *   bucket_count: smallest untrackable value starts at 2048 << 0 = 2^11 and
 *     doubles (one more bucket each time) while <= 3.6e9: 2^31 = 2147483648
 *     <= 3.6e9 < 2^32, so it stops at 2^32 after 21 doublings: 1 + 21 = 22
 *   counts_len = (22 + 1) * 1024 = 23552 (the reference's test_create value) */
static void test_config(void)
{
    hm_hdr h;
    init_us(&h);
    ASSERT_EQ(h.unit_magnitude, 0);
    ASSERT_EQ(h.sub_bucket_half_count_magnitude, 10);
    ASSERT_EQ(h.sub_bucket_count, 2048);
    ASSERT_EQ(h.sub_bucket_half_count, 1024);
    ASSERT_EQ(h.sub_bucket_mask, 2047);
    ASSERT_EQ(h.bucket_count, 22);
    ASSERT_EQ(h.counts_len, 23552);
    ASSERT_EQ(hm_hdr_count(&h), 0);
    hm_hdr_destroy(&h);
    hm_hdr_destroy(&h); /* safe twice */

    /* (1000, 3600000000 * 512, 3), the reference's scaled histogram:
     * unit_magnitude = (int)log2(1000) = (int)9.97 = 9; mask = 2047 << 9 =
     * 1048064; untrackable starts at 2^20 and must pass 1.8432e12, which lies
     * between 2^40 and 2^41: 1 + 21 = 22 buckets, counts_len 23552. */
    ASSERT_EQ(hm_hdr_init(&h, 1000, US_1H * 512, 3), 0);
    ASSERT_EQ(h.unit_magnitude, 9);
    ASSERT_EQ(h.sub_bucket_mask, 1048064);
    ASSERT_EQ(h.bucket_count, 22);
    ASSERT_EQ(h.counts_len, 23552);
    hm_hdr_destroy(&h);

    /* (20000000, 100000000, 5): 2 * 10^5 = 200000, ceil(log2) = 18, half
     * magnitude 17, sub_bucket_count 2^18 = 262144; unit_magnitude =
     * (int)log2(2e7) = 24; untrackable 2^18 << 24 = 2^42 > 1e8 at once: 1
     * bucket; counts_len = 2 * 131072 = 262144. */
    ASSERT_EQ(hm_hdr_init(&h, 20000000, 100000000, 5), 0);
    ASSERT_EQ(h.sub_bucket_half_count_magnitude, 17);
    ASSERT_EQ(h.sub_bucket_count, 262144);
    ASSERT_EQ(h.unit_magnitude, 24);
    ASSERT_EQ(h.bucket_count, 1);
    ASSERT_EQ(h.counts_len, 262144);
    hm_hdr_destroy(&h);

    /* 1 sig fig: 2 * 10 = 20, ceil(log2(20)) = 5, sub_bucket_count 32;
     * highest 1000: 32, 64, ..., 1024 > 1000 after 5 doublings: 6 buckets,
     * counts_len (6 + 1) * 16 = 112. */
    ASSERT_EQ(hm_hdr_init(&h, 1, 1000, 1), 0);
    ASSERT_EQ(h.sub_bucket_count, 32);
    ASSERT_EQ(h.bucket_count, 6);
    ASSERT_EQ(h.counts_len, 112);
    hm_hdr_destroy(&h);

    /* Rejected exactly where the reference returns EINVAL. */
    ASSERT_EQ(hm_hdr_init(&h, 0, 65536, 2), -EINVAL);
    ASSERT_EQ(hm_hdr_init(&h, 1, 36000000, 0), -EINVAL);
    ASSERT_EQ(hm_hdr_init(&h, 1, 36000000, 6), -EINVAL);
    ASSERT_EQ(hm_hdr_init(&h, 80, 110, 5), -EINVAL); /* 2 * lowest > highest */
    ASSERT_EQ(hm_hdr_init(&h, 55, 110, 5), 0);       /* 2 * lowest == highest is fine */
    hm_hdr_destroy(&h);
    /* unit_magnitude 50 + half magnitude 17 > 61 */
    ASSERT_EQ(hm_hdr_init(&h, INT64_C(1) << 50, INT64_C(1) << 52, 5), -EINVAL);
    ASSERT(h.counts == NULL);
    hm_hdr_destroy(&h);
}

/* Slot boundaries for the (1, 3.6e9, 3) layout. With unit_magnitude 0,
 * bucket = bitlen(v | 2047) - 11, sub = v >> bucket, width = 2^bucket,
 * index = (bucket + 1) * 1024 + sub - 1024:
 *   v            bucket sub   lowest      highest     index
 *   0            0      0     0           0           0
 *   1            0      1     1           1           1
 *   2047         0      2047  2047        2047        2047
 *   2048         1      1024  2048        2049        2048
 *   2049         1      1024  2048        2049        2048
 *   4095         1      2047  4094        4095        3071
 *   4096         2      1024  4096        4099        3072
 *   1000000      9      1953  999936      1000447     11169
 *   3600000000   21     1716  3598712832  3600809983  23220
 * (1e6 has bit length 20; 1953 * 512 = 999936. 3.6e9 has bit length 32;
 *  3.6e9 >> 21 = 1716, 1716 * 2^21 = 3598712832, + 2^21 - 1 = 3600809983.) */
static void test_boundaries(void)
{
    static const struct {
        int64_t v, lowest, highest;
        int32_t index;
    } cases[] = {
        {0, 0, 0, 0},
        {1, 1, 1, 1},
        {2047, 2047, 2047, 2047},
        {2048, 2048, 2049, 2048},
        {2049, 2048, 2049, 2048},
        {4095, 4094, 4095, 3071},
        {4096, 4096, 4099, 3072},
        {1000000, 999936, 1000447, 11169},
        {3600000000, 3598712832, 3600809983, 23220},
    };
    hm_hdr h;
    init_us(&h);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ASSERT_EQ(hm_hdr_lowest_equivalent(&h, cases[i].v), cases[i].lowest);
        ASSERT_EQ(hm_hdr_highest_equivalent(&h, cases[i].v), cases[i].highest);
        ASSERT_EQ(hm_hdr_index_of(&h, cases[i].v), cases[i].index);
        ASSERT_EQ(hm_hdr_value_at_index(&h, cases[i].index), cases[i].lowest);
    }
    /* 1e6 sits in a 512-wide slot, so its median is 999936 + 256. */
    ASSERT_EQ(hm_hdr_median_equivalent(&h, 1000000), 1000192);
    /* The last slot, 23551 = bucket 21, sub 2047, is the top of counts. */
    ASSERT_EQ(hm_hdr_value_at_index(&h, 23551), INT64_C(2047) << 21);
    hm_hdr_destroy(&h);
}

/* 1..10000 once each.
 * p50: target (int)(0.5 * 10000 + 0.5) = 5000. 5000 lies in bucket 2 (width
 *   4), slot 5000..5003; the slots before hold 1..4999, so the cumulative
 *   count first reaches 5000 at that slot (5003 >= 5000): p50 = 5003.
 * p99: target 9900; bucket 3 (8192..16383, width 8), 9900 >> 3 = 1237, slot
 *   9896..9903 (cumulative 9895 before it): p99 = 9903.
 * p99.9: target 9990; 9990 >> 3 = 1248, slot 9984..9991: 9991.
 * p100 and max: slot of 10000 is 10000..10007: 10007.
 * p0: target 0 raised to 1: slot of 1, lowest equivalent 1.
 * mean: each slot counts at its median. 1..2047 are exact (sum 2096128);
 *   each of the 1024 pairs in 2048..4095 adds +1, each of the 1024 quads in
 *   4096..8191 adds +2 (median lowest+2 vs true average lowest+1.5), each of
 *   the 226 full octets in 8192..9999 adds +4, and the lone 10000 counts as
 *   10004 (+4): 50005000 + 1024 + 2048 + 904 + 4 = 50008980, mean 5000.898.
 * stddev: sqrt(sum c * (median - mean)^2 / 10000) over those slots, evaluated
 *   in exact rational arithmetic: 2886.89266665666. */
static void test_one_to_ten_thousand(void)
{
    hm_hdr h;
    init_us(&h);
    for (int64_t v = 1; v <= 10000; v++)
        ASSERT_EQ(hm_hdr_record(&h, v), 0);
    ASSERT_EQ(hm_hdr_count(&h), 10000);
    ASSERT_EQ(hm_hdr_clamped(&h), 0);
    ASSERT_EQ(hm_hdr_min(&h), 1);
    ASSERT_EQ(hm_hdr_max(&h), 10007);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 50.0), 5003);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 99.0), 9903);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 99.9), 9991);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 100.0), 10007);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 0.0), 1);
    /* the integer sum is exact in double, so the quotient is exactly rounded */
    ASSERT(hm_hdr_mean(&h) == 50008980.0 / 10000.0);
    ASSERT_DBL_NEAR(hm_hdr_stddev(&h), 2886.89266665666, 1e-6);
    hm_hdr_destroy(&h);
}

/* The reference's raw test data: 10000 x 1000 and 1 x 100000000.
 * 1000 is in bucket 0 (exact). 100000000 has bit length 27: bucket 16, width
 * 65536, sub 100000000 >> 16 = 1525, slot 99942400..100007935, median
 * 99942400 + 32768 = 99975168.
 * Targets: p50 (int)(5000.5 + 0.5) = 5001, p99 (int)(9900.99 + 0.5) = 9901,
 * p99.99 (int)(9999.9999 + 0.5) = 10000 -> all within the 1000 slot;
 * p99.999 (int)(10000.89999 + 0.5) = 10001 -> the top slot: 100007935.
 * mean = (10000 * 1000 + 99975168) / 10001 = 109975168 / 10001.
 * stddev of a two-point distribution = sqrt(n1 * n2) / N * |b - a|
 *        = 100 / 10001 * 99974168 = 999641.71582841716... */
static void load_raw(hm_hdr *h)
{
    init_us(h);
    ASSERT_EQ(hm_hdr_record_n(h, 1000, 10000), 0);
    ASSERT_EQ(hm_hdr_record(h, 100000000), 0);
}

static void test_raw(void)
{
    hm_hdr h;
    load_raw(&h);
    ASSERT_EQ(hm_hdr_count(&h), 10001);
    ASSERT_EQ(hm_hdr_min(&h), 1000);
    ASSERT_EQ(hm_hdr_max(&h), 100007935);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 30.0), 1000);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 50.0), 1000);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 99.0), 1000);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 99.99), 1000);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 99.999), 100007935);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 100.0), 100007935);
    ASSERT_EQ(hm_hdr_count_at_value(&h, 1000), 10000);
    ASSERT_EQ(hm_hdr_count_at_value(&h, 99942400), 1);
    ASSERT_EQ(hm_hdr_count_at_value(&h, 100007936), 0);
    ASSERT(hm_hdr_mean(&h) == 109975168.0 / 10001.0);
    ASSERT_DBL_NEAR(hm_hdr_stddev(&h), 9997416800.0 / 10001.0, 1e-6);
    hm_hdr_destroy(&h);
}

/* p = 0 and p = 100 edges: the reference returns the lowest equivalent value
 * only for exactly 0, clamps p above 100 to 100, and raises a target below 1
 * (negative p) to 1 but still returns the highest equivalent value. */
static void test_percentile_edges(void)
{
    hm_hdr h;
    init_us(&h);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 50.0), 0); /* empty */
    ASSERT_EQ(hm_hdr_record(&h, 2049), 0);              /* slot 2048..2049 */
    ASSERT_EQ(hm_hdr_record(&h, 5000), 0);              /* slot 5000..5003 */
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 0.0), 2048);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, -5.0), 2049);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, -INFINITY), 2049);
    /* ceil(p/100 x 2) with p lowered by one ulp: an exact count stays put */
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 50.0), 2049);  /* target exactly 1 */
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 50.01), 5003); /* ceil(1.0002) = 2 */
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 25.0), 2049);  /* ceil(0.5) = 1 */
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 100.0), 5003);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 150.0), 5003);
    ASSERT_EQ(hm_hdr_min(&h), 2048); /* lowest equivalent of 2049 */
    ASSERT_EQ(hm_hdr_max(&h), 5003);

    /* A recorded 0 has its own slot and makes the minimum 0. */
    ASSERT_EQ(hm_hdr_record(&h, 0), 0);
    ASSERT_EQ(hm_hdr_min(&h), 0);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 0.0), 0);
    hm_hdr_destroy(&h);
}

static void test_clamp_and_reject(void)
{
    hm_hdr h;
    init_us(&h);
    ASSERT_EQ(hm_hdr_record(&h, -1), -EINVAL);
    ASSERT_EQ(hm_hdr_record_n(&h, 5, -1), -EINVAL);
    ASSERT_EQ(hm_hdr_record_corrected(&h, -1, 10), -EINVAL);
    ASSERT_EQ(hm_hdr_count(&h), 0);

    ASSERT_EQ(hm_hdr_record(&h, US_1H), 0); /* exactly highest: not clamped */
    ASSERT_EQ(hm_hdr_clamped(&h), 0);
    ASSERT_EQ(hm_hdr_record(&h, US_1H + 1), 0);
    ASSERT_EQ(hm_hdr_record_n(&h, INT64_MAX, 3), 0);
    ASSERT_EQ(hm_hdr_count(&h), 5);
    ASSERT_EQ(hm_hdr_clamped(&h), 4);
    ASSERT_EQ(hm_hdr_count_at_value(&h, US_1H), 5);
    ASSERT_EQ(hm_hdr_count_at_value(&h, US_1H + 1), 0); /* outside the range */
    ASSERT_EQ(hm_hdr_max(&h), 3600809983);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 100.0), 3600809983);

    hm_hdr_reset(&h);
    ASSERT_EQ(hm_hdr_count(&h), 0);
    ASSERT_EQ(hm_hdr_clamped(&h), 0);
    ASSERT_EQ(hm_hdr_min(&h), 0);
    ASSERT_EQ(hm_hdr_max(&h), 0);
    ASSERT(hm_hdr_mean(&h) == 0.0);
    ASSERT(hm_hdr_stddev(&h) == 0.0);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 99.0), 0);
    ASSERT_EQ(hm_hdr_count_at_value(&h, US_1H), 0);
    hm_hdr_destroy(&h);
}

/* The reference's correction, one value at a time, as a yardstick. */
static void record_corrected_naive(hm_hdr *h, int64_t v, int64_t interval)
{
    ASSERT_EQ(hm_hdr_record(h, v), 0);
    if (interval <= 0 || v <= interval) return;
    for (int64_t m = v - interval; m >= interval; m -= interval)
        ASSERT_EQ(hm_hdr_record(h, m), 0);
}

static void assert_same(const hm_hdr *a, const hm_hdr *b)
{
    ASSERT_EQ(a->counts_len, b->counts_len);
    for (int32_t i = 0; i < a->counts_len; i++)
        if (a->counts[i] != b->counts[i]) {
            fprintf(stderr, "slot %d (value %" PRId64 ")\n", (int)i, hm_hdr_value_at_index(a, i));
            ASSERT_EQ(a->counts[i], b->counts[i]);
        }
    ASSERT_EQ(a->total_count, b->total_count);
    ASSERT_EQ(a->clamped, b->clamped);
    ASSERT_EQ(a->min_value, b->min_value);
    ASSERT_EQ(a->max_value, b->max_value);
}

/* The reference's corrected test data: 10000 x 1000 and 1 x 100000000, all
 * with expected interval 10000. 1000 <= 10000 adds nothing; 100000000 adds
 * 99990000, 99980000, ..., 10000: 100000000 / 10000 - 1 = 9999 samples, so
 * the total is 10000 + 1 + 9999 = 20000 (the reference's figure).
 * Sorted, the samples are 10000 x 1000, then k * 10000 for k = 1..10000.
 * p50: target 10000 -> the 1000 slot.
 * p75: target 15000 -> the 5000th synthetic, 50000000: bit length 26,
 *   bucket 15 (width 32768), 50000000 >> 15 = 1525, slot 49971200..50003967.
 * p90: target 18000 -> 80000000: bucket 16, >> 16 = 1220, slot
 *   79953920..80019455.
 * p99: target 19800 -> 98000000: >> 16 = 1495, slot 97976320..98041855.
 * Slot 49971200..50003967 holds 49980000, 49990000 and 50000000: count 3. */
static void test_corrected(void)
{
    hm_hdr h, naive;
    init_us(&h);
    init_us(&naive);
    for (int i = 0; i < 10000; i++) {
        ASSERT_EQ(hm_hdr_record_corrected(&h, 1000, 10000), 0);
        record_corrected_naive(&naive, 1000, 10000);
    }
    ASSERT_EQ(hm_hdr_record_corrected(&h, 100000000, 10000), 0);
    record_corrected_naive(&naive, 100000000, 10000);
    assert_same(&h, &naive);

    ASSERT_EQ(hm_hdr_count(&h), 20000);
    ASSERT_EQ(hm_hdr_min(&h), 1000);
    ASSERT_EQ(hm_hdr_max(&h), 100007935);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 30.0), 1000);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 50.0), 1000);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 75.0), 50003967);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 90.0), 80019455);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 99.0), 98041855);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 99.999), 100007935);
    ASSERT_EQ(hm_hdr_value_at_percentile(&h, 100.0), 100007935);
    ASSERT_EQ(hm_hdr_count_at_value(&h, 10000), 1);
    ASSERT_EQ(hm_hdr_count_at_value(&h, 50000000), 3);
    hm_hdr_destroy(&h);
    hm_hdr_destroy(&naive);

    /* No correction when the interval is <= 0 or not exceeded. */
    init_us(&h);
    ASSERT_EQ(hm_hdr_record_corrected(&h, 500, 0), 0);
    ASSERT_EQ(hm_hdr_record_corrected(&h, 500, -3), 0);
    ASSERT_EQ(hm_hdr_record_corrected(&h, 500, 500), 0);
    ASSERT_EQ(hm_hdr_record_corrected(&h, 999, 500), 0); /* 499 < 500: none */
    ASSERT_EQ(hm_hdr_count(&h), 4);
    ASSERT_EQ(hm_hdr_record_corrected(&h, 1000, 500), 0); /* adds 500 */
    ASSERT_EQ(hm_hdr_count(&h), 6);
    ASSERT_EQ(hm_hdr_count_at_value(&h, 500), 4);
    hm_hdr_destroy(&h);

    /* Above highest, (1, 10000, 3): 25000 with interval 3000 is clamped, and
     * so are the synthetic 22000, 19000, 16000, 13000; then come 10000 (exactly
     * highest, not clamped), 7000 and 4000; 1000 < 3000 stops it. */
    ASSERT_EQ(hm_hdr_init(&h, 1, 10000, 3), 0);
    ASSERT_EQ(hm_hdr_record_corrected(&h, 25000, 3000), 0);
    ASSERT_EQ(hm_hdr_count(&h), 8);
    ASSERT_EQ(hm_hdr_clamped(&h), 5);
    ASSERT_EQ(hm_hdr_count_at_value(&h, 10000), 6);
    ASSERT_EQ(hm_hdr_count_at_value(&h, 7000), 1);
    ASSERT_EQ(hm_hdr_count_at_value(&h, 4000), 1);
    ASSERT_EQ(hm_hdr_min(&h), 4000);
    hm_hdr_destroy(&h);

    /* Slot-at-a-time counting equals one-at-a-time for runs that share
     * slots, cross bucket 0, start exactly on slot edges, or hit 0's slot. */
    static const int64_t cases[][2] = {
        {5000, 1},   {4096, 2},       {2049, 3},          {3600000, 7},
        {65536, 64}, {1000000, 4095}, {123456789, 99991}, {3599999999, 1234567},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        init_us(&h);
        init_us(&naive);
        ASSERT_EQ(hm_hdr_record_corrected(&h, cases[i][0], cases[i][1]), 0);
        record_corrected_naive(&naive, cases[i][0], cases[i][1]);
        assert_same(&h, &naive);
        hm_hdr_destroy(&h);
        hm_hdr_destroy(&naive);
    }
}

/* Merging per-thread histograms equals recording everything in one. */
static void test_add(void)
{
    hm_hdr a, b, all, other;
    init_us(&a);
    init_us(&b);
    init_us(&all);
    for (int64_t v = 1; v <= 10000; v++) {
        hm_hdr *part = v % 3 ? &a : &b;
        ASSERT_EQ(hm_hdr_record(part, v * 37), 0);
        ASSERT_EQ(hm_hdr_record(&all, v * 37), 0);
    }
    ASSERT_EQ(hm_hdr_record(&b, 0), 0);
    ASSERT_EQ(hm_hdr_record(&all, 0), 0);
    ASSERT_EQ(hm_hdr_record_n(&b, US_1H * 2, 4), 0); /* clamped */
    ASSERT_EQ(hm_hdr_record_n(&all, US_1H * 2, 4), 0);
    ASSERT_EQ(hm_hdr_record_corrected(&a, 1000000, 100000), 0);
    ASSERT_EQ(hm_hdr_record_corrected(&all, 1000000, 100000), 0);

    ASSERT_EQ(hm_hdr_add(&a, &b), 0);
    assert_same(&a, &all);
    ASSERT_EQ(hm_hdr_clamped(&a), 4);
    ASSERT_EQ(hm_hdr_value_at_percentile(&a, 99.0), hm_hdr_value_at_percentile(&all, 99.0));
    ASSERT(hm_hdr_mean(&a) == hm_hdr_mean(&all));

    /* An empty source changes nothing; a different configuration is refused. */
    hm_hdr_reset(&b);
    ASSERT_EQ(hm_hdr_add(&a, &b), 0);
    assert_same(&a, &all);
    ASSERT_EQ(hm_hdr_init(&other, 1, US_1H, 2), 0);
    ASSERT_EQ(hm_hdr_add(&a, &other), -EINVAL);
    hm_hdr_destroy(&other);
    ASSERT_EQ(hm_hdr_init(&other, 1, US_1H / 2, 3), 0);
    ASSERT_EQ(hm_hdr_add(&other, &a), -EINVAL);
    hm_hdr_destroy(&other);

    hm_hdr_destroy(&a);
    hm_hdr_destroy(&b);
    hm_hdr_destroy(&all);
}

static char *print_to_string(const hm_hdr *h, int ticks, double scale, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ASSERT(f != NULL);
    *rc = hm_hdr_percentiles_print(h, f, ticks, scale);
    ASSERT_EQ(fclose(f), 0);
    return buf;
}

/* Header: "%12s %12s %12s %12s\n\n"; rows: "%12.<sigfigs>f %12f %12d %12.2f\n"
 * of (slot highest / scale, percentile / 100, cumulative count,
 * 1 / (1 - percentile / 100)); footer "#[Mean    = %12.3f, StdDeviation   =
 * %12.3f]" etc. Rows come from the percentile iterator: starting at level 0,
 * walk slots; whenever the slot has samples and its cumulative percentile is
 * >= level, emit a row at that level and advance the level by
 * 100 / (ticks * 2^((int)log2(100 / (100 - level)) + 1)); once every sample has
 * been passed, emit one last row at 100%.
 *
 * Values 1, 2, 3, 4 (exact slots), 1 tick per half distance:
 *   slot 1 (cum 1, 25%): level 0 -> row; step 100 / (1 * 2^1) = 50 -> 50
 *   25% < 50, slot 2 (cum 2, 50%): row at 50; log2(2) = 1: step 100/4 -> 75
 *   slot 3 (cum 3, 75%): row at 75; log2(4) = 2: step 100/8 -> 87.5
 *   slot 4 (cum 4, 100%): row at 87.5 (1 / 0.125 = 8.00); level -> 93.75
 *   all 4 passed: last row at 100% (1 / 0 = inf)
 * mean 2.5, stddev sqrt(5 / 4) = 1.118. */
static void test_print_small(void)
{
    static const char expected[] = "       Value   Percentile   TotalCount 1/(1-Percentile)\n"
                                   "\n"
                                   "       1.000     0.000000            1         1.00\n"
                                   "       2.000     0.500000            2         2.00\n"
                                   "       3.000     0.750000            3         4.00\n"
                                   "       4.000     0.875000            4         8.00\n"
                                   "       4.000     1.000000            4          inf\n"
                                   "#[Mean    =        2.500, StdDeviation   =        1.118]\n"
                                   "#[Max     =        4.000, Total count    =            4]\n"
                                   "#[Buckets =           22, SubBuckets     =         2048]\n";
    hm_hdr h;
    init_us(&h);
    for (int64_t v = 1; v <= 4; v++)
        ASSERT_EQ(hm_hdr_record(&h, v), 0);
    int rc;
    char *out = print_to_string(&h, 1, 1.0, &rc);
    ASSERT_EQ(rc, 0);
    ASSERT_STREQ(out, expected);
    free(out);

    ASSERT_EQ(hm_hdr_percentiles_print(&h, stdout, 0, 1.0), -EINVAL);
    ASSERT_EQ(hm_hdr_percentiles_print(&h, stdout, 5, 0.0), -EINVAL);
    hm_hdr_destroy(&h);
}

/* 5000 (slot 5000..5003, median 5002) and 1000000 (slot 999936..1000447,
 * median 1000192), 2 ticks per half distance, printed in milliseconds:
 *   slot 5000 (cum 1, 50%): level 0 -> row; step 100 / (2 * 2) = 25 -> 25
 *   still 50% >= 25: row at 25 (1 / 0.75 = 1.33); log2(4/3) -> 0: step 25 -> 50
 *   still 50% >= 50: row at 50; log2(2) = 1: step 100 / (2 * 4) -> 62.5
 *   slot 1000000 (cum 2, 100%): row at 62.5 (1 / 0.375 = 2.67); level 75
 *   all passed: last row at 100%.
 * mean (5002 + 1000192) / 2 = 502597 -> 502.597 ms; stddev
 * (1000192 - 5002) / 2 = 497595 -> 497.595 ms; max 1000447 -> 1000.447 ms. */
static void test_print_scaled(void)
{
    static const char expected[] = "       Value   Percentile   TotalCount 1/(1-Percentile)\n"
                                   "\n"
                                   "       5.003     0.000000            1         1.00\n"
                                   "       5.003     0.250000            1         1.33\n"
                                   "       5.003     0.500000            1         2.00\n"
                                   "    1000.447     0.625000            2         2.67\n"
                                   "    1000.447     1.000000            2          inf\n"
                                   "#[Mean    =      502.597, StdDeviation   =      497.595]\n"
                                   "#[Max     =     1000.447, Total count    =            2]\n"
                                   "#[Buckets =           22, SubBuckets     =         2048]\n";
    hm_hdr h;
    init_us(&h);
    ASSERT_EQ(hm_hdr_record(&h, 5000), 0);
    ASSERT_EQ(hm_hdr_record(&h, 1000000), 0);
    int rc;
    char *out = print_to_string(&h, 2, 1000.0, &rc);
    ASSERT_EQ(rc, 0);
    ASSERT_STREQ(out, expected);
    free(out);
    hm_hdr_destroy(&h);
}

/* An empty histogram prints the header, the 100% row and a zero footer (the
 * reference would print nan for mean and stddev). */
static void test_print_empty(void)
{
    static const char expected[] = "       Value   Percentile   TotalCount 1/(1-Percentile)\n"
                                   "\n"
                                   "       0.000     1.000000            0          inf\n"
                                   "#[Mean    =        0.000, StdDeviation   =        0.000]\n"
                                   "#[Max     =        0.000, Total count    =            0]\n"
                                   "#[Buckets =           22, SubBuckets     =         2048]\n";
    hm_hdr h;
    init_us(&h);
    int rc;
    char *out = print_to_string(&h, 5, 1.0, &rc);
    ASSERT_EQ(rc, 0);
    ASSERT_STREQ(out, expected);
    free(out);
    hm_hdr_destroy(&h);
}

/* The raw data set with 5 ticks. The levels advance 5 per halving of the
 * distance to 100%: region k = [100 - 100 / 2^k, 100 - 100 / 2^(k+1)) holds
 * the levels 100 - 100 / 2^k + j * 100 / (5 * 2^(k+1)), j = 0..4. The 1000
 * slot (cumulative 10000 of 10001 = 99.990001%) yields every level up to
 * that: regions 0..12 in full (65 rows) and, in region 13 (start 99.987793,
 * step 0.0012207), 99.987793 and 99.989014 (2 rows): 67 rows. The next level,
 * 99.990234375, is reached only in the top slot (100%): one row there with
 * 1 / (1 - 0.99990234375) = 10240.00, then the final 100% row. The last 1000
 * row is at 99.98901367, 1 / 0.00010986328 = 9102.22. */
static void test_print_raw_tail(void)
{
    hm_hdr h;
    load_raw(&h);
    int rc;
    char *out = print_to_string(&h, 5, 1.0, &rc);
    ASSERT_EQ(rc, 0);
    ASSERT(strstr(out, "       Value   Percentile   TotalCount 1/(1-Percentile)\n\n"
                       "    1000.000     0.000000        10000         1.00\n"
                       "    1000.000     0.100000        10000         1.11\n") == out);
    ASSERT(strstr(out, "    1000.000     0.999890        10000      9102.22\n"
                       "100007935.000     0.999902        10001     10240.00\n"
                       "100007935.000     1.000000        10001          inf\n"
                       "#[Mean    =    10996.417, StdDeviation   =   999641.716]\n"
                       "#[Max     = 100007935.000, Total count    =        10001]\n"
                       "#[Buckets =           22, SubBuckets     =         2048]\n") != NULL);
    int rows_1000 = 0, rows_top = 0;
    for (char *line = strchr(out, '\n') + 2; *line != '#'; line = strchr(line, '\n') + 1) {
        if (strncmp(line, "    1000.000 ", 13) == 0)
            rows_1000++;
        else if (strncmp(line, "100007935.000 ", 14) == 0)
            rows_top++;
        else
            ASSERT(!"unexpected row");
    }
    ASSERT_EQ(rows_1000, 67);
    ASSERT_EQ(rows_top, 2);
    free(out);
    hm_hdr_destroy(&h);
}

int main(void)
{
    test_config();
    test_boundaries();
    test_one_to_ten_thousand();
    test_raw();
    test_percentile_edges();
    test_clamp_and_reject();
    test_corrected();
    test_add();
    test_print_small();
    test_print_scaled();
    test_print_empty();
    test_print_raw_tail();
    puts("hdr: all tests passed");
    return 0;
}
