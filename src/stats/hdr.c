/* hdr.c — HdrHistogram-compatible histogram; see hdr.h.
 *
 * Layout, as in HdrHistogram_c: values are split into buckets that each
 * double the range of the one before; every bucket has sub_bucket_count
 * slots, of which all but bucket 0 use only the upper half (the lower half
 * would repeat the previous bucket at a coarser width). A slot's index in
 * counts is therefore (bucket + 1) * half_count + (sub_bucket - half_count). */
#include "stats/hdr.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "base/hm_base.h"

/* ---- layout ------------------------------------------------------------ */

static int32_t bucket_of(const hm_hdr *h, int64_t v)
{
    /* OR-ing the mask in makes every value of bucket 0 look as wide as the
     * bucket itself, so they all land in bucket 0. */
    int32_t bits = 64 - __builtin_clzll((uint64_t)v | (uint64_t)h->sub_bucket_mask);
    return bits - h->unit_magnitude - (h->sub_bucket_half_count_magnitude + 1);
}

static int32_t sub_bucket_of(const hm_hdr *h, int64_t v, int32_t bucket)
{
    return (int32_t)(v >> (bucket + h->unit_magnitude));
}

static int32_t slot_index(const hm_hdr *h, int32_t bucket, int32_t sub_bucket)
{
    return ((bucket + 1) << h->sub_bucket_half_count_magnitude) +
           (sub_bucket - h->sub_bucket_half_count);
}

static int64_t slot_width(const hm_hdr *h, int32_t bucket, int32_t sub_bucket)
{
    if (sub_bucket >= h->sub_bucket_count) bucket++;
    return INT64_C(1) << (h->unit_magnitude + bucket);
}

int32_t hm_hdr_index_of(const hm_hdr *h, int64_t v)
{
    int32_t b = bucket_of(h, v);
    return slot_index(h, b, sub_bucket_of(h, v, b));
}

int64_t hm_hdr_value_at_index(const hm_hdr *h, int32_t index)
{
    int32_t bucket = (index >> h->sub_bucket_half_count_magnitude) - 1;
    int32_t sub_bucket = (index & (h->sub_bucket_half_count - 1)) + h->sub_bucket_half_count;
    if (bucket < 0) { /* the lower half of bucket 0 */
        sub_bucket -= h->sub_bucket_half_count;
        bucket = 0;
    }
    return (int64_t)sub_bucket << (bucket + h->unit_magnitude);
}

int64_t hm_hdr_lowest_equivalent(const hm_hdr *h, int64_t v)
{
    int32_t b = bucket_of(h, v);
    return (int64_t)sub_bucket_of(h, v, b) << (b + h->unit_magnitude);
}

int64_t hm_hdr_highest_equivalent(const hm_hdr *h, int64_t v)
{
    int32_t b = bucket_of(h, v);
    int32_t sb = sub_bucket_of(h, v, b);
    /* unsigned: the top slot of a histogram reaching INT64_MAX would overflow */
    uint64_t next = ((uint64_t)sb << (b + h->unit_magnitude)) + (uint64_t)slot_width(h, b, sb);
    return (int64_t)(next - 1);
}

int64_t hm_hdr_median_equivalent(const hm_hdr *h, int64_t v)
{
    int32_t b = bucket_of(h, v);
    int32_t sb = sub_bucket_of(h, v, b);
    return ((int64_t)sb << (b + h->unit_magnitude)) + (slot_width(h, b, sb) >> 1);
}

/* ---- life cycle -------------------------------------------------------- */

static int32_t buckets_to_cover(int64_t value, int32_t sub_bucket_count, int32_t unit_magnitude)
{
    int64_t untrackable = (int64_t)sub_bucket_count << unit_magnitude;
    int32_t n = 1;
    while (untrackable <= value) {
        if (untrackable > INT64_MAX / 2) return n + 1;
        untrackable <<= 1;
        n++;
    }
    return n;
}

int hm_hdr_init(hm_hdr *h, int64_t lowest, int64_t highest, int sigfigs)
{
    memset(h, 0, sizeof(*h));
    /* lowest > highest / 2 is the reference's lowest * 2 > highest without
     * the overflow. */
    if (lowest < 1 || sigfigs < 1 || sigfigs > 5 || lowest > highest / 2) return -EINVAL;

    int64_t single_unit_limit = 2;
    for (int i = 0; i < sigfigs; i++)
        single_unit_limit *= 10;
    /* Both magnitudes use floating-point log2 exactly like the reference, so
     * a lowest value where log() rounds below an integer still gets the same
     * layout as there. */
    int32_t count_magnitude = (int32_t)ceil(log((double)single_unit_limit) / log(2));
    int32_t half_magnitude = (count_magnitude > 1 ? count_magnitude : 1) - 1;
    int32_t unit_magnitude = (int32_t)(log((double)lowest) / log(2));
    if (unit_magnitude + half_magnitude > 61) return -EINVAL;

    int32_t sub_bucket_count = INT32_C(1) << (half_magnitude + 1);
    int32_t bucket_count = buckets_to_cover(highest, sub_bucket_count, unit_magnitude);
    int32_t counts_len = (bucket_count + 1) * (sub_bucket_count / 2);

    int64_t *counts = hm_calloc((size_t)counts_len, sizeof(int64_t));
    if (!counts) return -ENOMEM;

    h->lowest = lowest;
    h->highest = highest;
    h->sigfigs = sigfigs;
    h->unit_magnitude = unit_magnitude;
    h->sub_bucket_half_count_magnitude = half_magnitude;
    h->sub_bucket_count = sub_bucket_count;
    h->sub_bucket_half_count = sub_bucket_count / 2;
    h->sub_bucket_mask = (int64_t)(sub_bucket_count - 1) << unit_magnitude;
    h->bucket_count = bucket_count;
    h->counts_len = counts_len;
    h->counts = counts;
    h->min_value = INT64_MAX;
    return 0;
}

void hm_hdr_destroy(hm_hdr *h)
{
    hm_free(h->counts);
    memset(h, 0, sizeof(*h));
}

void hm_hdr_reset(hm_hdr *h)
{
    if (h->counts) memset(h->counts, 0, (size_t)h->counts_len * sizeof(int64_t));
    h->total_count = 0;
    h->clamped = 0;
    h->min_value = INT64_MAX;
    h->max_value = 0;
}

/* ---- recording --------------------------------------------------------- */

/* v must be in 0..highest: bucket_count was chosen so that its slot exists. */
static void add_to_slot(hm_hdr *h, int64_t v, int64_t n)
{
    h->counts[hm_hdr_index_of(h, v)] += n;
    h->total_count += n;
}

static void note_min(hm_hdr *h, int64_t v)
{
    if (v != 0 && v < h->min_value) h->min_value = v; /* 0 has its own slot; see hm_hdr_min */
}

int hm_hdr_record_n(hm_hdr *h, int64_t v, int64_t count)
{
    if (v < 0 || count < 0) return -EINVAL;
    if (count == 0) return 0;
    if (v > h->highest) {
        v = h->highest;
        h->clamped += count;
    }
    add_to_slot(h, v, count);
    if (v > h->max_value) h->max_value = v;
    note_min(h, v);
    return 0;
}

int hm_hdr_record(hm_hdr *h, int64_t v)
{
    return hm_hdr_record_n(h, v, 1);
}

int hm_hdr_record_corrected(hm_hdr *h, int64_t v, int64_t expected_interval)
{
    int rc = hm_hdr_record_n(h, v, 1);
    if (rc < 0) return rc;
    if (expected_interval <= 0 || v <= expected_interval) return 0;

    /* The reference records v - i, v - 2i, ... >= i one at a time. Counting
     * each run of them that shares a slot at once gives the same counts and
     * bounds the work by the number of slots, not by v / i. */
    int64_t i = expected_interval;
    int64_t m = v - i;
    int64_t smallest = 0;
    while (m >= i) {
        int64_t n;
        if (m > h->highest) {
            n = (m - h->highest - 1) / i + 1; /* how many are still above highest */
            if (n > m / i) n = m / i;         /* ... and not below i */
            add_to_slot(h, h->highest, n);
            h->clamped += n;
            smallest = h->highest;
        } else {
            int64_t floor_v = hm_hdr_lowest_equivalent(h, m);
            if (floor_v < i) floor_v = i;
            n = (m - floor_v) / i + 1;
            add_to_slot(h, m, n);
            smallest = m - (n - 1) * i;
        }
        m -= n * i;
    }
    /* every synthetic value is below v (or clamped like it), so only min moves */
    if (smallest) note_min(h, smallest);
    return 0;
}

int hm_hdr_add(hm_hdr *dst, const hm_hdr *src)
{
    if (dst->lowest != src->lowest || dst->highest != src->highest ||
        dst->sigfigs != src->sigfigs || !dst->counts || !src->counts)
        return -EINVAL;
    for (int32_t i = 0; i < dst->counts_len; i++)
        dst->counts[i] += src->counts[i];
    dst->total_count += src->total_count;
    dst->clamped += src->clamped;
    if (src->max_value > dst->max_value) dst->max_value = src->max_value;
    if (src->min_value < dst->min_value) dst->min_value = src->min_value;
    return 0;
}

/* ---- queries ----------------------------------------------------------- */

int64_t hm_hdr_count(const hm_hdr *h)
{
    return h->total_count;
}

int64_t hm_hdr_clamped(const hm_hdr *h)
{
    return h->clamped;
}

int64_t hm_hdr_min(const hm_hdr *h)
{
    if (h->total_count == 0) return 0;
    if (h->counts[0] > 0 || h->min_value == INT64_MAX) return 0;
    return hm_hdr_lowest_equivalent(h, h->min_value);
}

int64_t hm_hdr_max(const hm_hdr *h)
{
    if (h->max_value == 0) return 0;
    return hm_hdr_highest_equivalent(h, h->max_value);
}

double hm_hdr_mean(const hm_hdr *h)
{
    if (h->total_count == 0) return 0.0;
    /* Summed in double, in index order, like the reference, so printed
     * means agree to the last digit. */
    double total = 0.0;
    int64_t seen = 0;
    for (int32_t i = 0; i < h->counts_len && seen < h->total_count; i++) {
        int64_t c = h->counts[i];
        if (c == 0) continue;
        seen += c;
        total += (double)c * (double)hm_hdr_median_equivalent(h, hm_hdr_value_at_index(h, i));
    }
    return total / (double)h->total_count;
}

double hm_hdr_stddev(const hm_hdr *h)
{
    if (h->total_count == 0) return 0.0;
    double mean = hm_hdr_mean(h);
    double total = 0.0;
    for (int32_t i = 0; i < h->counts_len; i++) {
        int64_t c = h->counts[i];
        if (c == 0) continue;
        double dev = (double)hm_hdr_median_equivalent(h, hm_hdr_value_at_index(h, i)) - mean;
        total += (dev * dev) * (double)c;
    }
    return sqrt(total / (double)h->total_count);
}

int64_t hm_hdr_value_at_percentile(const hm_hdr *h, double p)
{
    if (h->total_count == 0) return 0;
    /* HdrHistogram's (Java's) rule: the sample at ceil(p/100 x N), with p
     * first lowered by one ulp so that floating-point noise cannot push an
     * exact count to the next sample. Unlike rounding, ceil commutes with
     * scaling every count, so a histogram merged with itself names the same
     * percentiles (hammer merge relies on that). The comparisons are written
     * so that NaN and -inf end up at 0. */
    double requested = nextafter(p, -INFINITY);
    requested = requested > 0.0 ? (requested < 100.0 ? requested : 100.0) : 0.0;
    double target_d = ceil(requested * (double)h->total_count / 100.0);
    int64_t target = target_d >= 1.0 ? (int64_t)target_d : 1;

    int64_t cumulative = 0, v = 0;
    for (int32_t i = 0; i < h->counts_len; i++) {
        cumulative += h->counts[i];
        if (cumulative >= target) {
            v = hm_hdr_value_at_index(h, i);
            break;
        }
    }
    return p == 0.0 ? hm_hdr_lowest_equivalent(h, v) : hm_hdr_highest_equivalent(h, v);
}

int64_t hm_hdr_count_at_value(const hm_hdr *h, int64_t v)
{
    if (v < 0 || v > h->highest) return 0;
    return h->counts[hm_hdr_index_of(h, v)];
}

/* ---- percentile distribution ------------------------------------------- */

/* The reference's percentile iterator: walks slots in order and yields a row
 * each time the cumulative percentile passes the next reporting level; the
 * levels get denser (ticks per halving of the distance to 100%) toward the
 * tail. A last row at 100% follows once every sample has been passed. */
typedef struct {
    const hm_hdr *h;
    int32_t index;
    int64_t count;      /* in the current slot */
    int64_t cumulative; /* up to and including the current slot */
    int64_t slot_high;  /* highest equivalent value of the current slot */
    int64_t ticks_per_half_distance;
    double level;    /* next percentile to report */
    double reported; /* percentile of the row just yielded */
    bool last_done;
} pct_walk;

static bool walk_step(pct_walk *w)
{
    const hm_hdr *h = w->h;
    if (w->cumulative >= h->total_count || w->index >= h->counts_len) return false;
    if (++w->index < h->counts_len) {
        w->count = h->counts[w->index];
        w->cumulative += w->count;
        w->slot_high = hm_hdr_highest_equivalent(h, hm_hdr_value_at_index(h, w->index));
    }
    return true;
}

static bool walk_next(pct_walk *w)
{
    const hm_hdr *h = w->h;
    if (w->cumulative >= h->total_count) {
        if (w->last_done) return false;
        w->last_done = true;
        w->reported = 100.0;
        return true;
    }
    if (w->index == -1 && !walk_step(w)) return false;
    do {
        double current = (100.0 * (double)w->cumulative) / (double)h->total_count;
        if (w->count != 0 && w->level <= current) {
            w->reported = w->level;
            /* Same floating-point steps as the reference, so the rows (and
             * their number) come out identical. */
            int64_t halvings = (int64_t)(log(100 / (100.0 - w->level)) / log(2)) + 1;
            int64_t half_distance = (int64_t)pow(2, (double)halvings);
            int64_t ticks = w->ticks_per_half_distance * half_distance;
            w->level += 100.0 / (double)ticks;
            return true;
        }
    } while (walk_step(w));
    return true;
}

int hm_hdr_percentiles_print(const hm_hdr *h, FILE *f, int ticks_per_half_distance,
                             double value_scale)
{
    if (ticks_per_half_distance < 1 || !(value_scale > 0.0)) return -EINVAL;

    if (fprintf(f, "%12s %12s %12s %12s\n\n", "Value", "Percentile", "TotalCount",
                "1/(1-Percentile)") < 0)
        return -EIO;

    pct_walk w = {
        .h = h,
        .index = -1,
        .ticks_per_half_distance = ticks_per_half_distance,
    };
    while (walk_next(&w)) {
        double percentile = w.reported / 100.0;
        if (fprintf(f, "%12.*f %12f %12" PRId64 " %12.2f\n", (int)h->sigfigs,
                    (double)w.slot_high / value_scale, percentile, w.cumulative,
                    1.0 / (1.0 - percentile)) < 0)
            return -EIO;
    }

    if (fprintf(f,
                "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n"
                "#[Max     = %12.3f, Total count    = %12" PRIu64 "]\n"
                "#[Buckets = %12d, SubBuckets     = %12d]\n",
                hm_hdr_mean(h) / value_scale, hm_hdr_stddev(h) / value_scale,
                (double)hm_hdr_max(h) / value_scale, (uint64_t)h->total_count, (int)h->bucket_count,
                (int)h->sub_bucket_count) < 0)
        return -EIO;
    return 0;
}
