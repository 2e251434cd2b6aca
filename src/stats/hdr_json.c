/* hdr_json.c — a histogram as a JSON object with its V2 encoding; see
 * hdr_json.h. */
#include "stats/hdr_json.h"

#include <string.h>

#include "base/hm_base.h"
#include "stats/hdr_log.h"

json_t *hm_hdr_json(const hm_hdr *h)
{
    json_t *o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "p50", json_integer(hm_hdr_value_at_percentile(h, 50)));
    json_object_set_new(o, "p90", json_integer(hm_hdr_value_at_percentile(h, 90)));
    json_object_set_new(o, "p99", json_integer(hm_hdr_value_at_percentile(h, 99)));
    json_object_set_new(o, "p999", json_integer(hm_hdr_value_at_percentile(h, 99.9)));
    json_object_set_new(o, "max", json_integer(hm_hdr_max(h)));
    json_object_set_new(o, "mean", json_real(hm_hdr_mean(h)));
    json_object_set_new(o, "count", json_integer(hm_hdr_count(h)));
    /* The distribution for plots (hammer matrix --html): [percentile, µs]. */
    static const double ladder[] = {0,    25,   50,    75,    90,     95, 99,
                                    99.5, 99.9, 99.95, 99.99, 99.999, 100};
    json_t *dist = json_array();
    for (size_t i = 0; hm_hdr_count(h) && i < HM_ARRAY_LEN(ladder); i++)
        json_array_append_new(
            dist,
            json_pack("[f,I]", ladder[i], (json_int_t)hm_hdr_value_at_percentile(h, ladder[i])));
    json_object_set_new(o, "percentiles", dist);
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
