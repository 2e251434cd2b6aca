/* results_internal.h — what results.c (counters, text summary) and
 * results_json.c (the JSON report) share; no other file includes it. */
#ifndef HM_RESULTS_INTERNAL_H
#define HM_RESULTS_INTERNAL_H

#include "stats/results.h"

/* a as a percentage of b (0 when b is 0). */
static inline double pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* Seconds from the pass's start to a hm_now_ns() value. */
static inline double since_start_s(const hm_results *r, int64_t ns)
{
    return r->t0_ns && ns > r->t0_ns ? (double)(ns - r->t0_ns) / 1e9 : 0.0;
}

#endif
