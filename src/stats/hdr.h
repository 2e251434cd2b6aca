/* hdr.h — an HdrHistogram-compatible latency histogram.
 *
 * Bucket layout, equivalent-value ranges, mean and stddev rules and the
 * classic .hgrm percentile printout follow HdrHistogram_c, so numbers and
 * files hammer produces read exactly like the reference's for the same
 * configuration. Percentiles follow HdrHistogram's Java implementation (the
 * sample at ceil(p/100 x N)), which HdrHistogram_c's rounding differs from
 * by at most one sample; ceil keeps merged copies of a run exact. Hammer
 * records microseconds with hm_hdr_init(h, 1, HM_HDR_HIGHEST_US, 3).
 *
 * Differences from the reference, on purpose:
 *   - a value above `highest` is recorded as `highest` and counted in
 *     `clamped` (the reference drops it), so a load test never silently loses
 *     a sample;
 *   - an empty histogram reports 0 for min, mean and stddev (the reference
 *     gives INT64_MAX and NaN).
 *
 * Memory: the caller owns the hm_hdr struct (embed it or put it on the
 * stack); hm_hdr_init allocates the fixed-size counts array, which
 * hm_hdr_destroy frees. Recording never allocates.
 *
 * Not thread-safe, by design: give each thread its own histogram and merge
 * them with hm_hdr_add once recording is over. */
#ifndef HM_STATS_HDR_H
#define HM_STATS_HDR_H

#include <stdint.h>
#include <stdio.h>

/* One hour in microseconds: hammer's highest trackable latency. */
#define HM_HDR_HIGHEST_US INT64_C(3600000000)

typedef struct hm_hdr {
    /* Configuration, fixed by hm_hdr_init; names as in HdrHistogram_c. */
    int64_t lowest;  /* lowest discernible value, >= 1 */
    int64_t highest; /* highest trackable value; larger ones are clamped */
    int32_t sigfigs; /* significant decimal digits, 1..5 */
    int32_t unit_magnitude;
    int32_t sub_bucket_half_count_magnitude;
    int32_t sub_bucket_half_count;
    int32_t sub_bucket_count;
    int32_t bucket_count;
    int32_t counts_len;
    int64_t sub_bucket_mask;

    /* State. */
    int64_t total_count; /* every recorded sample, clamped ones included */
    int64_t clamped;     /* samples recorded as `highest` because they were larger */
    int64_t min_value;   /* smallest non-zero value recorded, INT64_MAX if none */
    int64_t max_value;   /* largest value recorded (after clamping), 0 if none */
    int64_t *counts;     /* counts_len entries, owned */
} hm_hdr;

/* Sets up an empty histogram; 0, -EINVAL for a bad configuration (lowest < 1,
 * sigfigs outside 1..5, highest < 2 * lowest), or -ENOMEM. On failure *h is
 * zeroed, so hm_hdr_destroy is still safe. */
int hm_hdr_init(hm_hdr *h, int64_t lowest, int64_t highest, int sigfigs);

/* Frees the counts array; safe on a zeroed or already destroyed histogram. */
void hm_hdr_destroy(hm_hdr *h);

/* Forgets every sample (and the clamped count), keeping the configuration. */
void hm_hdr_reset(hm_hdr *h);

/* Records one sample; 0, or -EINVAL if v < 0. v > highest is clamped. */
int hm_hdr_record(hm_hdr *h, int64_t v);

/* Records `count` samples of value v; 0, or -EINVAL if v < 0 or count < 0. */
int hm_hdr_record_n(hm_hdr *h, int64_t v, int64_t count);

/* Records v and, as the reference does against coordinated omission, the
 * samples a stalled sender missed: v - k * expected_interval for every k >= 1
 * that leaves a value >= expected_interval. expected_interval <= 0 records v
 * alone. 0, or -EINVAL if v < 0. Missing samples above highest are clamped. */
int hm_hdr_record_corrected(hm_hdr *h, int64_t v, int64_t expected_interval);

/* Adds every sample of src to dst; 0, or -EINVAL unless both were
 * initialised with the same lowest, highest and sigfigs. */
int hm_hdr_add(hm_hdr *dst, const hm_hdr *src);

/* Number of samples recorded, clamped ones included. */
int64_t hm_hdr_count(const hm_hdr *h);

/* Number of samples that were above highest and recorded as highest. */
int64_t hm_hdr_clamped(const hm_hdr *h);

/* Smallest recorded value as the reference reports it (lowest equivalent of
 * the minimum, 0 if the first slot holds anything); 0 when empty. */
int64_t hm_hdr_min(const hm_hdr *h);

/* Highest equivalent value of the largest recorded value; 0 when empty. */
int64_t hm_hdr_max(const hm_hdr *h);

/* Mean over each slot's median equivalent value, as the reference; 0 when empty. */
double hm_hdr_mean(const hm_hdr *h);

/* Population standard deviation over median equivalent values; 0 when empty. */
double hm_hdr_stddev(const hm_hdr *h);

/* HdrHistogram's (Java) getValueAtPercentile: p (0..100, larger means 100)
 * selects the first slot whose cumulative count reaches
 * ceil(p' / 100 * count), at least 1, where p' is p lowered by one ulp;
 * returns that slot's highest equivalent value, or its lowest when p == 0.
 * 0 when empty. */
int64_t hm_hdr_value_at_percentile(const hm_hdr *h, double p);

/* Number of samples in the slot that holds v (0 if v is outside 0..highest). */
int64_t hm_hdr_count_at_value(const hm_hdr *h, int64_t v);

/* Index into counts of the slot that holds v; v must be in 0..highest. */
int32_t hm_hdr_index_of(const hm_hdr *h, int64_t v);

/* Lowest value of slot `index` (the reference's hdr_value_at_index). */
int64_t hm_hdr_value_at_index(const hm_hdr *h, int32_t index);

/* Smallest value that shares v's slot. */
int64_t hm_hdr_lowest_equivalent(const hm_hdr *h, int64_t v);

/* Largest value that shares v's slot. */
int64_t hm_hdr_highest_equivalent(const hm_hdr *h, int64_t v);

/* Middle value of v's slot, the one mean and stddev use. */
int64_t hm_hdr_median_equivalent(const hm_hdr *h, int64_t v);

/* Writes the percentile distribution in HdrHistogram_c's CLASSIC .hgrm text
 * format (hdr_percentiles_print): values divided by value_scale,
 * ticks_per_half_distance rows per halving of the distance to 100%.
 * 0, -EINVAL if ticks_per_half_distance < 1 or value_scale <= 0, -EIO if a
 * write fails. */
int hm_hdr_percentiles_print(const hm_hdr *h, FILE *f, int ticks_per_half_distance,
                             double value_scale);

#endif
