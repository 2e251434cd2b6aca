/* h2_test_server.h — an HTTP/2 (h2c) server that misbehaves on request,
 * for hammer's HTTP/2 client tests: a forked child with a poll loop and an
 * nghttp2 server session per connection. What it does with a stream
 * depends on the request's :path:
 *
 *   /ok            200, body "hello", x-via-worker: 7, two set-cookie fields
 *   /echo          200, the request's method, cookie and body: "M|cookie|body"
 *   /big           200 and 7 MiB of body (more than the client's 6 MiB stream
 *                  window: it arrives only through the client's WINDOW_UPDATEs)
 *   /silent        no answer, ever (the connection stays served)
 *   /refuse-once   RST_STREAM REFUSED_STREAM the first time, then as /ok
 *   /goaway-once   GOAWAY naming the previous stream the first time, then
 *                  closes that connection; later as /ok
 *   /goaway-calm   GOAWAY ENHANCE_YOUR_CALM that includes the stream, then
 *                  closes the connection without answering it
 *   /reset         RST_STREAM INTERNAL_ERROR
 *   /close         the response head, then the connection closes
 *   /garbage       a frame HTTP/2 forbids (HEADERS on stream 0)
 *   /fat-head      200 with 80 fields of 1 KiB (over a 64 KiB header limit)
 *   /ping          a PING first; the answer ("acked") once its ACK is back
 *   /sse           200, then "data: n\n\n" every 20 ms, never ending
 *   /early-100     a 103 Early Hints head, then as /ok
 * Hostile ones, written by hand as frames (what nghttp2 refuses to send):
 *   /no-status     a response HEADERS without :status
 *   /endless-100   40 HEADERS of :status 100, never an answer
 *   /huge-head     :status 200 and 1 MiB of fields in 65 CONTINUATION frames
 *   /continuation-flood  HEADERS, then 10,000 empty CONTINUATION frames
 *   /continuation-slow   HEADERS, then an empty CONTINUATION every 20 ms (one
 *                  such block per connection; its other streams wait)
 *   /window-overflow     WINDOW_UPDATE taking the connection window past 2^31-1
 *   /push          a PUSH_PROMISE (the client disabled push)
 *   /goaway-even   GOAWAY whose last-stream-id is even (no stream of the client's)
 *   /goaway-high   GOAWAY with last-stream-id 2^31-1, then as /ok
 *   /settings-flood, /ping-flood  100,000 SETTINGS (or PING) frames, then as /ok
 *   /hpack-size-over  a header block opening with a table size update past the
 *                  client's 64 KiB SETTINGS_HEADER_TABLE_SIZE (/hpack-size-max:
 *                  one to 64 KiB, then :status 200, a good answer)
 *   /hpack-size-late  :status 200, then a table size update (after a field)
 *   /hpack-bad-index  :status 200, then an index past both tables
 *   /hpack-churn   4000-byte fields inserted one after another into the 4 KiB
 *                  table, each referenced four times: 64 KiB of frames, 320 KB
 *                  of header list
 *   /hpack-bomb    one 4000-byte entry referenced 16,000 times in one 16 KiB
 *                  HEADERS (64 MB of header list)
 *   /first-ok-TAG/PATH  as /ok the first time (a reachability check
 *                  passes), then as /PATH
 *   anything else  404
 *
 * h2ts.mode, when set, makes every connection misbehave from its start:
 *   "settings-window"  its first frame a SETTINGS with INITIAL_WINDOW_SIZE 2^31
 *   "no-settings"      reads and never sends a byte (no SETTINGS, ever)
 *
 * Counters the test reads back through /stats (a JSON object): connections
 * accepted, streams reset by the client, PING ACKs received.
 *
 * Ownership: h2ts_start forks the child; h2ts_stop kills and reaps it. */
#ifndef HM_TEST_H2_SERVER_H
#define HM_TEST_H2_SERVER_H

#include <sys/types.h>

typedef struct h2ts {
    pid_t pid;
    int port;
    const char *mode; /* NULL, or a connection mode above (set before h2ts_start) */
} h2ts;

/* Starts the server on a free loopback port. */
void h2ts_start(h2ts *s);
void h2ts_stop(h2ts *s);

#endif
