/* h2_test_client.h — a small blocking HTTP/2 client on libnghttp2 for the
 * bench_app tests: h2c with prior knowledge on a plain socket, or h2 over
 * the tests' TLS (bench_app_client.h's send_all/read_until, ALPN h2). It
 * sends requests as streams on one connection and records each stream's
 * status, header fields, body and close; the test drives the reading
 * (h2t_pump) so it can also stop reading, hold the flow-control windows
 * shut (manual_window) or reset a stream.
 *
 * Every helper fails the test when the server does not answer within
 * IO_TIMEOUT_MS. Ownership: h2t_open allocates the client and its streams,
 * h2t_close frees them all. Nothing here is thread-safe. */
#ifndef HM_TEST_H2_CLIENT_H
#define HM_TEST_H2_CLIENT_H

#include "bench_app_client.h"

#include <nghttp2/nghttp2.h>

typedef struct h2t_stream {
    int32_t id;
    int status;
    char head[4096]; /* "name: value\n" per field, as received */
    char *body;      /* DATA received, NUL-terminated */
    size_t len, cap;
    size_t unconsumed; /* DATA not yet given back to the window (manual_window) */
    bool closed;
    uint32_t code; /* the error code it closed with (0: NO_ERROR) */
} h2t_stream;

typedef struct h2t {
    int fd;
    nghttp2_session *ng;
    bool manual_window; /* the client returns window only in h2t_consume */
    h2t_stream *streams[256];
    size_t n_streams;
    bool eof;    /* the server closed the connection */
    bool goaway; /* a GOAWAY arrived */
    char authority[64], scheme[8];
} h2t;

/* Connects to 127.0.0.1:port: h2 over TLS with g_tls (ALPN h2 must be
 * agreed) when tls, else h2c with prior knowledge; sends the preface with
 * SETTINGS iv (NULL: nghttp2's defaults). manual_window: no automatic
 * WINDOW_UPDATE, so what the server may send is the initial windows until
 * h2t_consume gives some back. */
h2t *h2t_open(int port, bool tls, const nghttp2_settings_entry *iv, size_t niv, bool manual_window);
/* Sends a request: fields as {"name", "value", ..., NULL} (lower-case
 * names), and body (NULL: none, the HEADERS end the stream). */
h2t_stream *h2t_req(h2t *c, const char *method, const char *path, const char *const *fields,
                    const char *body);
/* One round: sends what is pending, then reads what arrives until
 * until_ms (at least one read when data is there). false when nothing
 * arrived in time. */
bool h2t_pump(h2t *c, int64_t until_ms);
/* Pumps until the stream is closed (a failure after IO_TIMEOUT_MS). */
void h2t_wait(h2t *c, h2t_stream *s);
/* Pumps until s's body holds n SSE events (blank-line ends) or timeout_ms
 * passes; returns how many it holds. */
size_t h2t_wait_events(h2t *c, h2t_stream *s, size_t n, int timeout_ms);
/* Gives n bytes of s's DATA back to the stream's and the connection's
 * windows (manual_window). */
void h2t_consume(h2t *c, h2t_stream *s, size_t n);
/* Resets the stream (CANCEL) and sends it. */
void h2t_rst(h2t *c, h2t_stream *s);
/* SSE events in a body: how many blank-line ends it holds. */
size_t h2t_events(const h2t_stream *s);
/* The value of header field name (lower case) of s, into out; false when
 * absent. */
bool h2t_field(const h2t_stream *s, const char *name, char *out, size_t cap);
void h2t_close(h2t *c);

#endif
