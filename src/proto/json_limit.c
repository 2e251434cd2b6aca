/* json_limit.c — see json_limit.h. */
#include "proto/json_limit.h"

#include "base/hm_base.h"

#include <stdbool.h>

#define STR_(x) #x
#define STR(x) STR_(x)

size_t hm_json_depth(const char *text, size_t len, size_t limit)
{
    size_t depth = 0, max = 0;
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\')
                i++; /* the escaped byte cannot end the string */
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max) max = depth;
            if (max > limit) return limit + 1;
        } else if ((c == ']' || c == '}') && depth) {
            depth--;
        }
    }
    return max;
}

int hm_json_load_bounded(const char *text, size_t len, size_t flags, json_t **out, const char **why)
{
    const char *unused;
    if (!why) why = &unused;
    *out = NULL;
    if (hm_json_depth(text, len, HM_JSON_MAX_DEPTH) > HM_JSON_MAX_DEPTH) {
        *why = "JSON nests deeper than " STR(HM_JSON_MAX_DEPTH) " levels";
        return -HM_ETOOBIG;
    }
    json_error_t err;
    *out = json_loadb(text, len, flags, &err);
    if (!*out) {
        *why = "malformed JSON";
        return -HM_EPARSE;
    }
    *why = NULL;
    return 0;
}
