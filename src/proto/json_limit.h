/* json_limit.h — loading JSON that a server sent, bounded in depth.
 *
 * jansson's parser recurses once per nesting level, and so do json_decref
 * and json_dumps on the result. Its own limit (JSON_PARSER_MAX_DEPTH, fixed
 * at 2048 when Debian built jansson 2.14, not settable at run time) is far
 * deeper than a 64 KiB coroutine stack can afford: about 1000 levels of
 * '{' overflow one. So the text's nesting is counted first, with a scan
 * that only tracks brackets and strings, and jansson gets only what fits.
 * The parse itself is jansson's. Size limits differ by document, so each
 * caller checks its own before this.
 *
 * Memory: *out is a new jansson reference the caller owns (json_decref). */
#ifndef HM_PROTO_JSON_LIMIT_H
#define HM_PROTO_JSON_LIMIT_H

#include <jansson.h>
#include <stddef.h>

/* Nesting hammer accepts in server JSON: room for any real document, and a
 * few KiB of jansson recursion at most. */
#define HM_JSON_MAX_DEPTH 64

/* Nesting depth of JSON text: the most '[' / '{' open at once outside
 * strings. Stops counting (and returns limit + 1) once past limit. Knows
 * nothing else of JSON: malformed text has a depth too. */
size_t hm_json_depth(const char *text, size_t len, size_t limit);

/* Parses len bytes of text with jansson (flags as for json_loadb) when they
 * nest at most HM_JSON_MAX_DEPTH deep. Returns 0 and *out, or -HM_ETOOBIG
 * (too deep) or -HM_EPARSE (jansson refused it), with *out NULL and *why
 * (may be NULL) a static sentence saying which. */
int hm_json_load_bounded(const char *text, size_t len, size_t flags, json_t **out,
                         const char **why);

#endif
