/* hdr_json.h — a latency histogram as a JSON object, lossless.
 *
 * Every histogram in hammer's JSON (docs/output.md) is one object: the
 * summary fields a reader wants (p50, p90, p99, p999, min, max, mean, stddev,
 * count, the percentile ladder) and `hdr`, the whole histogram in HdrHistogram's V2
 * compressed encoding (base64, hdr_log.h). The summary fields are derived
 * from `hdr`, so `hammer merge` can add histograms from several runs and
 * rebuild the object exactly as one run that recorded every value would.
 *
 * Memory: hm_hdr_json returns a new reference the caller owns
 * (json_decref); hm_hdr_json_decode initialises the caller's hm_hdr
 * (hm_hdr_destroy it). */
#ifndef HM_STATS_HDR_JSON_H
#define HM_STATS_HDR_JSON_H

#include "stats/hdr.h"

#include <jansson.h>
#include <stdbool.h>

/* The object for h, `hdr` included; NULL only when out of memory. */
json_t *hm_hdr_json(const hm_hdr *h);

/* True when obj is a histogram object: it carries a string `hdr`. */
bool hm_hdr_json_is(const json_t *obj);

/* True when obj looks like a histogram's summary (p50 and count, or a
 * percentile ladder) whether or not it carries `hdr`. */
bool hm_hdr_json_looks_like(const json_t *obj);

/* Decodes obj's `hdr` into *h. 0, -EINVAL (no `hdr`, or not a V2
 * histogram) or -ENOMEM; on failure *h is zeroed. */
int hm_hdr_json_decode(const json_t *obj, hm_hdr *h);

#endif
