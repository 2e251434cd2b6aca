/* http_client.h — client connections on the engine: keep-alive HTTP/1.1,
 * or HTTP/2 streams (h2_client.h) when the target says so.
 *
 * A hm_http_conn is one logical connection to one target, used by one
 * exchange at a time. It (re)connects on demand, sends a complete request
 * that the caller serialized (as HTTP/1.1 bytes, whatever the protocol),
 * and parses the response with http1.h.
 *
 * HTTP/1.1 has one implementation: a state machine the loop's callbacks
 * drive (the connect's callback, the socket's callback reader, the
 * deadline's timer), so a connection needs no coroutine and no stack.
 * Over https, TLS is a filter on that reader (tls.h "without a
 * coroutine"): ciphertext goes to OpenSSL in place (our BIO), the plaintext to
 * the same parser, and the handshake is a state of the same machine
 * under the same deadline. hm_http_conn_start and
 * hm_http_conn_stream_start run it and call done; hm_http_conn_exchange
 * and hm_http_conn_stream, for a coroutine, start it and wait for done.
 *
 * Over HTTP/2 (target->http2) each
 * request is a stream instead: on the conn's own HTTP/2 connection, or on
 * one it shares with other conns (hm_http_conn_init_shared), each conn
 * with one stream in flight; the response lands in c->resp as it would
 * over HTTP/1.1.
 *
 * Retry rule: a request is re-sent once on a fresh connection only when
 * none of its bytes reached the server (the write failed before anything
 * was sent, or a reused connection was found closed before sending). A
 * non-idempotent request (POST) is never re-sent after its bytes were
 * written; an idempotent one is re-sent once if a reused connection closes
 * before the first response byte.
 *
 * Ownership: the caller owns the hm_http_conn struct and the target (which
 * must outlive the conn). The conn owns its socket, parser and TLS state;
 * it owns no read buffer (plain HTTP parses the engine's received bytes in
 * place, TLS decrypts into a buffer of the thread's); the response (c->resp: status, headers, body)
 * stays valid until the next request on the conn, hm_http_conn_free(), or
 * the owner's hm_http_resp_release(&c->resp) once it has read it. */
#ifndef HM_PROTO_HTTP_CLIENT_H
#define HM_PROTO_HTTP_CLIENT_H

#include "base/hm_fail.h"
#include "base/hm_reason.h"
#include "engine/engine.h"
#include "proto/http1.h"
#include "proto/tls.h"

#include <netinet/in.h>

/* Where requests go: resolved once at start. */
typedef struct hm_http_target {
    struct sockaddr_storage addr;
    socklen_t addrlen;
    char host[256];         /* host name or address, for cookie matching */
    char host_header[300];  /* Host header value */
    char origin[320];       /* Origin a browser would send for this target */
    bool tls;               /* https: every connection runs a TLS handshake */
    hm_tls_config *tls_cfg; /* set by the caller for https targets */
    /* Accept-Encoding every request to it carries (HM_ACCEPT_ENCODING), or
     * NULL for none. Connections decode what comes back coded either way
     * (a server may code a body for a request that offers nothing). Static
     * or outliving the target. */
    const char *accept_encoding;
    /* HTTP/2: h2 through ALPN over TLS (tls_cfg must offer it,
     * hm_tls_config_offer_h2), h2c with prior knowledge otherwise. */
    bool http2;
} hm_http_target;

typedef struct hm_h2_conn hm_h2_conn;     /* an HTTP/2 connection (h2_client.h) */
typedef struct hm_h2_stream hm_h2_stream; /* a conn's stream state (h2_client.c) */

/* hm_fail_kind (why a request failed) and its names: base/hm_fail.h. */

struct hm_http_conn;
/* How an hm_http_conn_start or hm_http_conn_stream_start ended: rc 0 (the
 * response is in c->resp; a stream: the server ended the body) or a
 * negative error with c->fail and c->fail_why as for an exchange. It runs from
 * the loop, never inside the start, and may start the next exchange on c. */
typedef void (*hm_http_done_fn)(struct hm_http_conn *c, int rc, void *user);

/* The room of a conn's fail_why (hm_reason_set's cap). */
#define HM_HTTP_WHY_BYTES 160

/* Private: the state of an exchange or stream started without a coroutine. */
typedef struct hm_http_async_ {
    hm_http_done_fn done;
    void *user;
    const char *req; /* the request (a stream: a copy of it until it is sent) */
    size_t len;
    int64_t budget;  /* the deadline's span, for the words of a timeout */
    int64_t t_phase; /* when the connect began, then the TLS handshake */
    int rc;          /* a failure found inside a start, for the loop to report */
    uint8_t state;
    bool idempotent, head, retried, reused, got_bytes, stream;
    bool detach;    /* req outlives the loop: sent detached, else copied when it must wait */
    bool req_owned; /* req is the exchange's own copy, freed once sent or stopped */
} hm_http_async_;

typedef struct hm_http_conn {
    const hm_http_target *target;
    hm_sock *sock;
    hm_http_resp_parser resp;
    int64_t last_used_ns; /* when the last response completed */
    int64_t connect_ns;   /* duration of the last connect, 0 if reused */
    hm_fail_kind fail;    /* kind of the last failure */
    bool h2_own;          /* HTTP/2: h2 (below) is this conn's own */
    uint8_t head_len;     /* bytes in head (below), at most HM_EVIDENCE_BYTES */
    uint64_t connects;    /* successful connects on this conn */
    uint64_t reconnects;  /* connects after the first */
    uint64_t retries;     /* requests re-sent under the retry rule */
    hm_tls *tls;          /* https only; kept across reconnects for resumption */
    int64_t tls_ns;       /* duration of the last handshake, 0 if none
                           * (its kind: hm_tls_resumed) */
    /* HTTP bytes read and written (after TLS decryption, as wrk counts)
     * since whoever accounts for them last took them (and zeroed these). */
    uint64_t bytes_read, bytes_written;
    uint64_t body_bytes; /* body bytes of the last response (also when discarded) */
    /* The last request's failure, explained: fail_why in words (an
     * hm_reason.h string of HM_HTTP_WHY_BYTES, NULL after success, read
     * it with hm_reason); `head` the first head_len bytes of its response
     * (evidence; over HTTP/2 its status as "HTTP/2 200", since its frames
     * are binary), HM_EVIDENCE_BYTES made at the conn's first response
     * byte and NULL before (read it with hm_http_conn_head): a conn
     * that never hears back keeps no room for it. */
    char *fail_why;
    char *head;
    size_t resp_bytes; /* bytes read for the last request */
    /* HTTP/2: the connection this conn's streams go on (made and freed
     * by the conn when h2_own, else shared: hm_http_conn_init_shared);
     * the stream state. */
    hm_h2_conn *h2;
    hm_h2_stream *h2s;

    /* Private: the exchange or stream in progress. */
    hm_loop *loop_;
    hm_timer timer_; /* its deadline (whole exchange; a stream's headers) */
    hm_http_async_ as_;
} hm_http_conn;

/* Releases what the last exchange left, its status apart: the response's
 * buffers (hm_http_resp_release), the evidence and over TLS the
 * connection's own buffers (hm_tls_drop_buffers). For a conn that idles
 * between exchanges (a browser tab thinking); the next response makes
 * them again. Not while an exchange runs. */
void hm_http_conn_release(hm_http_conn *c);

/* The evidence (c->head_len bytes of it); "" before any. */
static inline const char *hm_http_conn_head(const hm_http_conn *c)
{
    return c->head ? c->head : "";
}

/* Private (the client's files): c->head's room of HM_EVIDENCE_BYTES, made
 * at its first use; NULL when out of memory (the evidence is left out). */
char *hm_http_conn_head_room_(hm_http_conn *c);

/* Options of one exchange. */
typedef struct hm_http_xopts {
    bool idempotent;   /* GET/HEAD: may be re-sent as described above */
    bool head;         /* HEAD: the response has no body */
    bool status_only;  /* HTTP/2 only: of the response's fields keep none (the
                        * status, the body's length and the evidence remain) */
    bool discard_body; /* count the body's bytes (body_bytes), keep none: c->resp.body
                        * stays empty and no body size limit applies */
    bool no_headers;   /* HTTP/1.1: keep no response header (hm_http_resp_set_lean) */
    /* The deadline, covering connect, handshake, write and the whole
     * response: absolute, or (timeq set, callback starts) now +
     * timeq->duration, armed in that FIFO of timers. 0 and no timeq: none. */
    int64_t deadline;
    hm_timeq *timeq;
    int64_t span_ns;   /* HTTP/2 starts: the span the deadline was set with (--timeout),
                        * for the words of a timeout; 0: what is left of it now */
    bool req_outlives; /* the request buffer stays valid until the loop ends (one
                        * serialized for the whole run): it is sent detached, never
                        * copied (hm_sock_send_detached) */
} hm_http_xopts;

/* Prepares c for target t; allocates nothing until the first request.
 * Over HTTP/2 the conn makes a connection of its own, on first use. */
void hm_http_conn_init(hm_http_conn *c, const hm_http_target *t, const hm_http_limits *lim);
/* As hm_http_conn_init, for an HTTP/2 target: c's requests are streams of
 * h2, which other conns may share and which must outlive c (a tab's page,
 * SSE stream and actions on one connection). h2 NULL: as init. */
void hm_http_conn_init_shared(hm_http_conn *c, const hm_http_target *t, const hm_http_limits *lim,
                              hm_h2_conn *h2);
/* ---- from a coroutine --------------------------------------------------------
 *
 * Start the exchange (below), then wait until it is done: the coroutine
 * suspends, and hm_coro_cancel (or an aborted run) stops the exchange
 * with -ECANCELED; an interrupt's STOP lets it finish within its
 * deadline, as a socket operation would. */

/* Sends req[0..len) and reads the whole response into c->resp (buffered
 * body, or counted only with discard_body). Returns 0, or a negative error
 * with c->fail saying what kind and c->fail_why in words. Bytes after the
 * response (we never pipeline, so unsolicited) fail it as protocol: the
 * connection can no longer tell which answer is whose. req must stay valid
 * until this returns (what the kernel has not taken by then is copied). */
int hm_http_conn_exchange(hm_http_conn *c, const char *req, size_t len, const hm_http_xopts *o);
/* Sends req and streams the response body to on_body until the server ends
 * it, the connection drops, or the coroutine is cancelled (-ECANCELED).
 * header_deadline bounds the wait for the status line and headers only.
 * on_headers and on_body run on the loop's stack and must not suspend.
 * Returns 0 when the body ended normally; on failure c->fail and c->fail_why as
 * for an exchange. */
int hm_http_conn_stream(hm_http_conn *c, const char *req, size_t len, int64_t header_deadline,
                        hm_http_resp_headers_fn on_headers, hm_http_body_fn on_body, void *user);

/* ---- without a coroutine --------------------------------------------------- */

/* Starts an exchange of req on c from `loop`: connects (and over https
 * runs the TLS handshake) when needed, sends, parses, then calls done from
 * the loop. req must stay valid until done runs, and with req_outlives
 * until the loop ends. Over HTTP/2 the request is a stream that reports
 * the same way (hm_h2_conn_start: its handle's dispatcher calls done).
 * 0, or a negative error (nothing started, done not called). c must not
 * be in an exchange or stream already (-EBUSY). */
int hm_http_conn_start(hm_http_conn *c, hm_loop *loop, const char *req, size_t len,
                       const hm_http_xopts *o, hm_http_done_fn done, void *user);
/* Starts a stream as hm_http_conn_stream does (req is copied: the caller
 * may free it at once); done(c, rc, done_user) runs when it ends.
 * header_deadline bounds the wait for the headers only. */
int hm_http_conn_stream_start(hm_http_conn *c, hm_loop *loop, const char *req, size_t len,
                              int64_t header_deadline, hm_http_resp_headers_fn on_headers,
                              hm_http_body_fn on_body, void *user, hm_http_done_fn done,
                              void *done_user);
/* True while an exchange or stream started so has not ended. */
bool hm_http_conn_busy(const hm_http_conn *c);
/* Ends what c started without calling done (the caller stops it: the run
 * ends, the tab closes), and closes the socket. */
void hm_http_conn_stop(hm_http_conn *c);

/* ---- failures in words --------------------------------------------------- */

/* Where a request was when it failed. */
typedef enum hm_http_where {
    HM_AT_CONNECT, /* opening the connection: the connect, then the TLS handshake */
    HM_AT_SEND,    /* writing the request */
    HM_AT_HEADERS, /* waiting for the response's head (a stream's deadline covers it) */
    HM_AT_RECEIVE, /* reading the response */
} hm_http_where;

/* A failure to put in words. */
typedef struct hm_http_failure {
    int rc; /* the negative error */
    hm_http_where where;
    int64_t budget_ns; /* the deadline's span, for a timeout's words */
    bool h2;           /* an HTTP/2 connection or stream */
    const char *why;   /* words its origin had already (HTTP/2: a stream's), or NULL */
} hm_http_failure;

/* Says in c->fail_why what happened, unless c->fail_why says it already: from the
 * kind (c->fail, which the caller set; an interrupted connect becomes
 * HM_FAIL_OTHER), the reason (the origin's words, TLS's, the parser's),
 * where it was and the bytes received (c->resp_bytes). The one wording of
 * every request failure: connect, TLS, HTTP/1.1 and HTTP/2. Returns f->rc. */
int hm_http_conn_word(hm_http_conn *c, const hm_http_failure *f);

/* Why the last request failed, in words: c->fail_why, else OpenSSL's reason
 * (TLS) or hm_strerror(err). */
const char *hm_http_conn_fail_reason(const hm_http_conn *c, int err);
/* The TLS state of the conn's last handshake (over HTTP/2, its
 * connection's), or NULL: for hm_tls_resumed and the failure's reason. */
const hm_tls *hm_http_conn_tls(const hm_http_conn *c);
/* Closes the socket (the next request reconnects). Over HTTP/2, a conn's
 * own connection closes; a shared one is left to its owner. */
void hm_http_conn_close(hm_http_conn *c);
/* Closes and releases everything c owns. */
void hm_http_conn_free(hm_http_conn *c);

/* Resolves url text into a target: -HM_EPARSE on a bad URL, -ENOENT when
 * the host does not resolve. path_out (optional) gets a copy of the
 * request target (path?query), to free with hm_free. */
int hm_http_target_from_url(const char *url, hm_http_target *t, char **path_out);

#endif
