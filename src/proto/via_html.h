/* via_html.h — what hammer reads from a php-via page: the context id in the
 * shell's <meta data-signals='…'> tag and the action URLs in data-on:*
 * attributes.
 *
 * The page is scanned tag by tag the way an HTML tokenizer would (quoted,
 * unquoted and reordered attributes; comments, <script> and <style> bodies
 * skipped; attribute values entity-decoded), so text that merely looks like
 * markup is not matched. The input need not be NUL-terminated.
 *
 * Memory: returned strings are allocated with hm_alloc; the caller frees
 * them with hm_free. Nothing is kept between calls. */
#ifndef HM_PROTO_VIA_HTML_H
#define HM_PROTO_VIA_HTML_H

#include <stddef.h>

/* Longest data-signals value decoded (php-via's holds two short keys). */
#define HM_VIA_MAX_SIGNALS_BYTES ((size_t)64 << 10)

/* Finds the first <meta> carrying data-signals, decodes its JSON and stores
 * a copy of the via_ctx string in *ctx_out. Returns 0, -HM_ENOTFOUND (no
 * such tag, or no via_ctx key), -HM_EPARSE (value is not a JSON object, or
 * via_ctx is not a string), -HM_ETOOBIG (the value is over
 * HM_VIA_MAX_SIGNALS_BYTES or nests deeper than HM_JSON_MAX_DEPTH, see
 * src/proto/json_limit.h) or -ENOMEM. On failure *why (may be NULL) gets a
 * static sentence saying what was wrong. */
int hm_via_extract_ctx(const char *html, size_t len, char **ctx_out, const char **why);

/* Finds the URL of action name in any data-on:<event> or data-on-<event>
 * attribute holding @post('<prefix>/_action/<name>') (any quote style),
 * or the pre-0.12 @post('<prefix>/_action/<name>-<hex>'); the hashless
 * form wins when both occur; a URL with a space or a control byte, which
 * no request line can carry, is skipped. Stores the URL as written (base
 * path included) in *url_out. Returns 0, -HM_ENOTFOUND or -ENOMEM. */
int hm_via_find_action(const char *html, size_t len, const char *name, char **url_out);

/* Writes the names of every action the page posts to (the ids after
 * /_action/ in @post('…') of data-on attributes, a pre-0.12 -<hex> suffix
 * dropped), each once, joined by ", ", into buf ("" when none; cut short
 * when buf is too small). For error messages. Returns how many it found. */
int hm_via_list_actions(const char *html, size_t len, char *buf, size_t cap);

#endif
