/* sse.h — incremental parser for text/event-stream bodies.
 *
 * Implements the WHATWG HTML "event stream interpretation" (Server-sent
 * events, §9.2.6) as a push parser: the caller feeds body bytes in whatever
 * chunks the transport delivers, and the parser calls on_event once per
 * dispatched event. The events produced never depend on where the chunk
 * boundaries fall (a CR ending one chunk and an LF starting the next are one
 * line end; a BOM split across chunks is still a BOM).
 *
 * Bytes are passed through as they arrive: the parser does not decode UTF-8 or
 * substitute U+FFFD, so a view may hold invalid UTF-8 or NUL bytes. Lengths
 * are authoritative; every string in a view is also NUL-terminated.
 *
 * Memory: the parser owns its buffers (hm_realloc, grown geometrically and
 * reused, so a stream of similar events allocates nothing after the first
 * few). The caller owns the hm_sse_parser struct itself and must call
 * hm_sse_parser_free() to release the buffers. A hm_sse_event handed to
 * on_event points into those buffers and is valid only during that call;
 * copy what must outlive it. Not thread-safe: one parser per stream. */
#ifndef HM_PROTO_SSE_H
#define HM_PROTO_SSE_H

#include "base/hm_buf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Default bound on one line and on one event's accumulated data. */
#define HM_SSE_DEFAULT_MAX_EVENT ((size_t)1 << 20)

/* One dispatched event; a view into the parser, valid only during on_event. */
typedef struct hm_sse_event {
    const char *type; /* event type; "message" when no (or an empty) event: field */
    size_t type_len;
    const char *data; /* data lines joined with "\n"; may be "" */
    size_t data_len;
    const char *last_event_id; /* last id: value seen on this stream, "" if none */
    size_t last_event_id_len;
    int64_t retry_ms; /* stream's reconnection time from retry:, -1 if never set */
} hm_sse_event;

/* Called once per dispatched event. Return 0 to go on; a negative value
 * stops hm_sse_feed, which returns it, and leaves the parser failed. Must not
 * feed the same parser. */
typedef int (*hm_sse_event_fn)(const hm_sse_event *ev, void *user);

/* Parser state. Public fields may be read at any time; max_event and lean
 * may be set after init and before the first feed. Fields ending in _ are
 * private. */
typedef struct hm_sse_parser {
    hm_sse_event_fn on_event;
    void *user;
    size_t max_event;  /* limit on one line and on one event's data (each data
                          line counted with its "\n"); over it: -HM_ETOOBIG */
    uint64_t comments; /* comment lines seen (":..."), i.e. heartbeats */
    uint64_t events;   /* events dispatched */
    int64_t retry_ms;  /* reconnection time from the last valid retry:, or -1 */

    hm_buf line_;    /* a line split across feeds, waiting for its end */
    hm_buf data_;    /* data buffer: every data value followed by "\n" */
    hm_buf type_;    /* event type buffer */
    hm_buf id_;      /* last event ID buffer (set by id:, before dispatch) */
    hm_buf last_id_; /* last event ID string (committed at dispatch) */
    /* Lean: between events the parser holds no buffer but the event ID's,
     * each event's data, type and split line being allocated again: for
     * many streams that idle (a browser VU's), not for a hot one. */
    bool lean : 1;
    bool id_dirty_ : 1; /* id_ differs from last_id_ */
    bool skip_lf_ : 1;  /* the previous line ended in CR: an LF next is part of it */
    bool bom_done_ : 1; /* the stream start has been checked for a BOM */
    uint8_t bom_seen_;  /* BOM bytes matched so far at the stream start */
    int err_;           /* sticky error, 0 while healthy */
} hm_sse_parser;

/* Prepares p for a new stream; allocates nothing and cannot fail. on_event
 * may be NULL (events are then only counted). */
void hm_sse_parser_init(hm_sse_parser *p, hm_sse_event_fn on_event, void *user);

/* Parses len bytes of the stream, calling on_event for each completed event.
 * Returns 0, -HM_ETOOBIG past max_event, -ENOMEM, or the callback's negative
 * value; after any error every later feed returns the same error until
 * hm_sse_parser_reset(). An unterminated event at end of stream is never
 * dispatched (WHATWG), so there is no "finish" call. */
int hm_sse_feed(hm_sse_parser *p, const char *data, size_t len);

/* Starts a new stream on p (e.g. after a reconnect): drops any partial line
 * and event, clears the error, expects a BOM again. Keeps the last event ID,
 * retry_ms, the counters and the buffers' capacity. */
void hm_sse_parser_reset(hm_sse_parser *p);

/* Bytes the parser holds of what has not ended yet: an unfinished line
 * plus the data lines of an event not yet dispatched (0 between events).
 * What a stream cut now would lose. */
size_t hm_sse_pending(const hm_sse_parser *p);

/* The last event ID string (what a reconnect sends as Last-Event-ID); "" when
 * none. NUL-terminated; valid until the next feed, reset or free. */
const char *hm_sse_last_event_id(const hm_sse_parser *p, size_t *len);

/* Releases p's buffers; p may be initialised again afterwards. */
void hm_sse_parser_free(hm_sse_parser *p);

#endif
