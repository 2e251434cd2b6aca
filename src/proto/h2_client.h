/* h2_client.h — HTTP/2 client connections on the engine, on libnghttp2:
 * h2 through ALPN over TLS (the memory-BIO TLS of tls.h), h2c with prior
 * knowledge on cleartext targets.
 *
 * A hm_h2_conn is one HTTP/2 connection to a target, made on first use and
 * made again when it ends (an error, the server's GOAWAY, stream ids run
 * out). Any number of hm_http_conns on one loop share it
 * (hm_http_conn_init_shared), each with one stream in flight, so their
 * requests are multiplexed: a browser tab's page load, SSE stream and
 * actions, or get's --streams. A reader coroutine feeds what the socket
 * brings to nghttp2 (which answers SETTINGS and PINGs, honours and updates
 * the flow-control windows, decodes the header blocks); a writer coroutine
 * writes what nghttp2 has to send, batched per loop turn. Streams wait on
 * their own: a request's deadline covers its stream alone, which is reset
 * (RST_STREAM CANCEL) when it passes or the waiting coroutine is
 * cancelled. A connection that ends fails its streams as an HTTP/1.1
 * connection fails its request (closed, reset, protocol, TLS, timeout:
 * the same hm_fail kinds); a stream the server refused (REFUSED_STREAM, or
 * beyond a GOAWAY's last stream) never reached the application and is
 * re-sent once on a fresh connection, as is an idempotent one whose
 * connection died before any response.
 *
 * The client announces what Chromium does: a 6 MiB window per stream, a
 * 15 MiB window for the connection, no server push, a 64 KiB header
 * table. A request goes in as the HTTP/1.1 bytes the scenario serialized;
 * its method, target, Host (as :authority) and fields (lower-cased, minus
 * the connection-specific ones) become the HEADERS, its body DATA, as
 * curl turns its HTTP/1.1 requests into HTTP/2. The response fills the
 * conn's hm_http_resp_parser through http1.h's push functions.
 *
 * Ownership: hm_h2_conn_create allocates the handle; hm_h2_conn_free ends
 * its connection and frees it once no conn uses it any more (their owners
 * free those conns first). A connection's coroutines, socket and nghttp2
 * session leave with their last user, on the loop (the loop's run ends
 * after them). The target must outlive the handle. Everything belongs to
 * the loop that created it. */
#ifndef HM_PROTO_H2_CLIENT_H
#define HM_PROTO_H2_CLIENT_H

#include "proto/http_client.h"

/* A handle on an HTTP/2 connection to t (t->http2), connected on first
 * use. 0 or -ENOMEM. */
int hm_h2_conn_create(hm_h2_conn **out, const hm_http_target *t);
/* Ends the connection and frees the handle: no conn may use it afterwards
 * (free or re-init them first). NULL: nothing. A handle whose dispatcher
 * (hm_h2_conn_start) is still running is freed by it as it leaves. */
void hm_h2_conn_free(hm_h2_conn *h);
/* Connections this handle has made so far. */
uint64_t hm_h2_conn_connects(const hm_h2_conn *h);

/* ---- what http_client.c calls for a conn whose target is HTTP/2 ---- */

/* hm_http_conn_exchange over HTTP/2: c's request as a stream. */
int hm_h2_exchange(hm_http_conn *c, const char *req, size_t len, const hm_http_xopts *o);
/* hm_http_conn_stream over HTTP/2. */
int hm_h2_exchange_stream(hm_http_conn *c, const char *req, size_t len, int64_t header_deadline,
                          hm_http_resp_headers_fn on_headers, hm_http_body_fn on_body, void *user);
/* ---- streams that report through a done callback ----
 *
 * hm_http_conn_exchange waits for its stream on the coroutine that sent
 * it, so N streams in flight would cost N coroutines. hm_http_conn_start
 * over HTTP/2: c's request is queued as a stream of
 * its handle (its own, made now, or the shared one) and done(c, rc, user)
 * runs when it has ended, with rc as hm_http_conn_exchange's (0, c->resp
 * holds the answer; or a negative error with c->fail and c->fail_why); a
 * stream sent again under the retry rule (refused, or its connection died
 * before any answer) reports once, at its end. One coroutine per
 * handle (its dispatcher, made on the first such start) connects when
 * needed, submits the queued streams and calls the callbacks: no
 * coroutine or stack per stream. The deadline is o->deadline, or with
 * o->timeq now + its duration (the FIFO itself is HTTP/1.1's).
 * 0, or a negative error (nothing started, done not called). */
int hm_h2_conn_start(hm_http_conn *c, hm_loop *loop, const char *req, size_t len,
                     const hm_http_xopts *o, hm_http_done_fn done, void *user);
/* hm_http_conn_stream_start over HTTP/2: as hm_h2_conn_start, the
 * response's head to on_headers and its body to on_body as it comes (on
 * the connection's reader), header_deadline covering the head only. The
 * request is copied: the caller may free it at once. */
int hm_h2_conn_stream_start(hm_http_conn *c, hm_loop *loop, const char *req, size_t len,
                            int64_t header_deadline, hm_http_resp_headers_fn on_headers,
                            hm_http_body_fn on_body, void *user, hm_http_done_fn done,
                            void *done_user);
/* Whether c's stream so started has not reported yet. */
bool hm_h2_busy(const hm_http_conn *c);
/* Ends c's stream so started without reporting it (reset when it is on
 * the wire). */
void hm_h2_stop(hm_http_conn *c);

/* The TLS state of the connection c's last request made, or NULL. */
const hm_tls *hm_h2_conn_tls(const hm_http_conn *c);
/* hm_http_conn_close / hm_http_conn_free over HTTP/2: c's own connection
 * ends (a shared one is left alone); free also releases c's stream state. */
void hm_h2_conn_close(hm_http_conn *c);
void hm_h2_conn_release(hm_http_conn *c);

#endif
