/* json_text.h — text from outside hammer as a JSON string.
 *
 * The command line, a server's words and system files may hold bytes that
 * are not UTF-8. jansson refuses such a string (json_string returns NULL),
 * and a NULL handed to json_object_set_new or json_array_append_new drops
 * the field or entry without a word: a --json file would then record a
 * command line with an argument missing. Every text hammer did not write
 * itself goes into its JSON through hm_json_text, which never refuses.
 *
 * Memory: hm_json_text returns a new reference the caller owns. */
#ifndef HM_STATS_JSON_TEXT_H
#define HM_STATS_JSON_TEXT_H

#include <jansson.h>
#include <stdbool.h>

/* True when s (NUL-terminated) is UTF-8 as jansson accepts it: no overlong
 * forms, no surrogates, nothing above U+10FFFF. */
bool hm_utf8_valid(const char *s);

/* s as a JSON string: valid UTF-8 as it is; each byte that starts no valid
 * sequence written as the four characters \xNN, so nothing is lost and the
 * text stays readable. NULL s is JSON null. NULL only when out of memory. */
json_t *hm_json_text(const char *s);

#endif
