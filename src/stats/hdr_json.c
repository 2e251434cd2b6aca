/* hdr_json.c — a histogram as a JSON object with its V2 encoding; see
 * hdr_json.h. */
#include "stats/hdr_json.h"

#include <math.h>
#include <string.h>

#include "base/hm_base.h"
#include "stats/hdr_log.h"

/* The percentile ladder of every distribution in the JSON: ten points per
 * "nine" (0-90%, 90-99%, ...), spaced evenly on the 1/(1-p) axis
 * HdrHistogram's plots use, down to 99.99988%, then the maximum. Fixed, so
 * runs can be compared point by point (hammer matrix takes medians). */
#define LADDER_DECADES 6
static const double ladder_fraction[] = {1, .8, .6, .5, .4, .3, .25, .2, .15, .12};

static json_t *percentiles_json(const hm_hdr *h)
{
    json_t *dist = json_array();
    if (!hm_hdr_count(h)) return dist;
    double scale = 100;
    for (int d = 0; d < LADDER_DECADES; d++, scale /= 10)
        for (size_t i = 0; i < HM_ARRAY_LEN(ladder_fraction); i++) {
            /* Rounded to the ladder's own precision, so 99.9992 reads so. */
            double p = round((100 - ladder_fraction[i] * scale) * 1e6) / 1e6;
            json_array_append_new(
                dist, json_pack("[f,I]", p, (json_int_t)hm_hdr_value_at_percentile(h, p)));
        }
    json_array_append_new(dist, json_pack("[f,I]", 100.0, (json_int_t)hm_hdr_max(h)));
    return dist;
}

json_t *hm_hdr_json(const hm_hdr *h)
{
    json_t *o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "p50", json_integer(hm_hdr_value_at_percentile(h, 50)));
    json_object_set_new(o, "p90", json_integer(hm_hdr_value_at_percentile(h, 90)));
    json_object_set_new(o, "p99", json_integer(hm_hdr_value_at_percentile(h, 99)));
    json_object_set_new(o, "p999", json_integer(hm_hdr_value_at_percentile(h, 99.9)));
    json_object_set_new(o, "min", json_integer(hm_hdr_min(h)));
    json_object_set_new(o, "max", json_integer(hm_hdr_max(h)));
    json_object_set_new(o, "mean", json_real(hm_hdr_mean(h)));
    json_object_set_new(o, "stddev", json_real(hm_hdr_stddev(h)));
    json_object_set_new(o, "count", json_integer(hm_hdr_count(h)));
    /* The distribution for plots (--html, hammer matrix): [percentile, µs]. */
    json_object_set_new(o, "percentiles", percentiles_json(h));
    char *b64 = NULL;
    if (hm_hdr_encode_base64(h, &b64) < 0) {
        json_decref(o);
        return NULL;
    }
    json_object_set_new(o, "hdr", json_string(b64));
    hm_free(b64);
    return o;
}

bool hm_hdr_json_is(const json_t *obj)
{
    return json_is_object(obj) && json_is_string(json_object_get(obj, "hdr"));
}

bool hm_hdr_json_looks_like(const json_t *obj)
{
    if (!json_is_object(obj)) return false;
    return json_object_get(obj, "hdr") || json_is_array(json_object_get(obj, "percentiles")) ||
           (json_object_get(obj, "p50") && json_object_get(obj, "count"));
}

int hm_hdr_json_decode(const json_t *obj, hm_hdr *h)
{
    memset(h, 0, sizeof(*h));
    json_t *s = json_object_get(obj, "hdr");
    if (!json_is_string(s)) return -EINVAL;
    return hm_hdr_decode_base64(json_string_value(s), json_string_length(s), h);
}
