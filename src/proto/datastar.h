/* datastar.h — decoding Datastar SSE events and finding php-via signals.
 *
 * Datastar (client 1.0) reads each data line of a datastar-* event as
 * "<key> <value>", split at the first space; values of a repeated key are
 * joined with "\n". hm_datastar_decode() does the same for the two event
 * types servers send:
 *   datastar-patch-signals:  signals <json line> (repeatable), onlyIfMissing <bool>
 *   datastar-patch-elements: selector <css>, mode <mode>, elements <html line>
 *                            (repeatable), useViewTransition <bool>, wrap <tag>
 * Booleans are true only for "true" (surrounding whitespace ignored), as in
 * the client. Lines without a space carry no key/value pair and are skipped.
 *
 * Signal names: php-via renames a signal `count` to an id that depends on its
 * scope (docs/php-via-protocol.md §1 "Signal IDs", php-via v0.12):
 *   TAB      count__<route>__<hex>    e.g. count__bench_counter__3f2a9c, count____ab12 on "/"
 *   ROUTE    route__<route>_count     e.g. route__bench_counter_count
 *   SESSION  session_<sid>_count
 *   GLOBAL   global_count             (and global_<x>_count)
 * hm_signal_name_matches() recognises all of these for the plain name.
 *
 * Bounds: the signals JSON is refused (-HM_ETOOBIG, with a reason in
 * error) past HM_DATASTAR_MAX_SIGNALS_BYTES or HM_JSON_MAX_DEPTH levels of
 * nesting (src/proto/json_limit.h), so a server cannot make the decoder
 * recurse off a coroutine stack or allocate without bound; everything else
 * is bounded by the SSE parser's max_event.
 *
 * Memory: a hm_datastar_event must start zeroed (= {0}). It owns its signals
 * object (a jansson reference) and one scratch buffer (hm_alloc) that holds
 * the element strings; decoding into the same struct again releases the old
 * JSON and reuses the buffer. hm_datastar_event_clear() frees both. Nothing
 * in it points into the hm_sse_event it was decoded from. */
#ifndef HM_PROTO_DATASTAR_H
#define HM_PROTO_DATASTAR_H

#include "proto/sse.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest signals JSON (all signals lines joined) decoded. */
#define HM_DATASTAR_MAX_SIGNALS_BYTES ((size_t)256 << 10)

typedef enum hm_datastar_kind {
    HM_DATASTAR_OTHER = 0,      /* any other event type; nothing decoded */
    HM_DATASTAR_PATCH_SIGNALS,  /* "datastar-patch-signals" */
    HM_DATASTAR_PATCH_ELEMENTS, /* "datastar-patch-elements" */
} hm_datastar_kind;

/* A decoded event. Strings are NUL-terminated and NULL when their line was
 * absent; they live in the struct's scratch buffer. */
typedef struct hm_datastar_event {
    hm_datastar_kind kind;
    /* (the two flags first, beside kind: no padding after each) */
    bool only_if_missing;     /* PATCH_SIGNALS: onlyIfMissing true */
    bool use_view_transition; /* PATCH_ELEMENTS: useViewTransition true */

    /* HM_DATASTAR_PATCH_SIGNALS */
    json_t *signals; /* owned JSON object (a merge patch); {} when no signals line */

    /* HM_DATASTAR_PATCH_ELEMENTS */
    const char *selector; /* NULL: target each element by its id */
    const char *mode;     /* NULL means Datastar's default, "outer" */
    const char *elements; /* elements lines joined with "\n"; NULL if none (mode remove) */
    size_t elements_len;
    const char *wrap; /* namespace tag, e.g. "svg"; NULL if absent */

    const char *error; /* static: why the last decode failed; NULL after success */

    char *buf_; /* private scratch storage, reused across decodes */
    size_t cap_;
} hm_datastar_event;

/* Decodes ev into out (zeroed or previously decoded). Returns 0 (kind OTHER
 * for event types other than the two above), -HM_EPARSE when the signals JSON
 * is malformed or not an object, -HM_ETOOBIG when it is over the size or
 * depth bound (out->signals is then NULL and out->error says which), or
 * -ENOMEM. */
int hm_datastar_decode(const hm_sse_event *ev, hm_datastar_event *out);

/* Frees what out owns and zeroes it; safe on a zeroed struct. */
void hm_datastar_event_clear(hm_datastar_event *out);

/* True when key is the signal a php-via user calls wanted: key == wanted, the
 * TAB form wanted__<route>__<hex digits>, or a scoped form route_<r>_wanted,
 * session_<sid>_wanted, global_wanted / global_<x>_wanted. <route>, <r>,
 * <sid>, <x> are [A-Za-z0-9_]* (php-via's sanitised ids; <route> may be empty,
 * the others may not). An empty wanted matches nothing. */
bool hm_signal_name_matches(const char *wanted, const char *key);

/* Finds in the signals object the first key, in document order, that matches
 * wanted (hm_signal_name_matches) and holds an integer, or a real with an
 * integral value in int64 range; stores it in *out and returns 0. Keys that
 * match but hold other values are skipped. A dotted wanted "a.b" walks nested
 * objects as Datastar does: every segment but the last must equal a key
 * exactly, and the last segment is matched by name in the innermost object.
 * Returns -HM_ENOTFOUND when nothing fits (or signals is not an object). */
int hm_signals_find_int(json_t *signals, const char *wanted, int64_t *out);

/* The watched signal's value without building JSON objects: what
 * hm_datastar_decode() followed by hm_signals_find_int(signals, wanted)
 * would find, for the events a bounded scan of the one signals line can
 * decide. */
typedef enum hm_datastar_scan {
    HM_DATASTAR_UNDECIDED = -1, /* decode the event (jansson) to know */
    HM_DATASTAR_ABSENT = 0,     /* the event decodes; nothing in it fits wanted */
    HM_DATASTAR_FOUND = 1,      /* the event decodes; *out is the value found */
} hm_datastar_scan;

/* Decides a datastar-patch-signals event with exactly one signals line
 * that holds one flat JSON object within the size bound: keys printable
 * ASCII without escapes; values integers of up to 18 digits, printable
 * ASCII strings without escapes, true, false or null; JSON whitespace
 * anywhere between tokens; at most one key that matches wanted (a plain
 * name, no dots). Everything else is HM_DATASTAR_UNDECIDED: other event
 * types, several or no signals lines, nested objects and arrays, reals and
 * exponents, escapes, non-ASCII, duplicate matching keys, malformed text,
 * a dotted or empty wanted. Never reads past ev->data_len; allocates
 * nothing. */
hm_datastar_scan hm_datastar_scan_int(const hm_sse_event *ev, const char *wanted, int64_t *out);

#endif
