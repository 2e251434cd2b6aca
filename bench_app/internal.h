/* internal.h — what bench_app's files share and nothing outside bench_app/
 * may use.
 *
 *   server.c  HTTP plumbing: listener, accept coroutine, one coroutine per
 *             connection (read, parse, pipelining, keep-alive, limits,
 *             error statuses), response writing, the ticker that stops the
 *             loop, hm_bench_app_run().
 *   handlers.c php-via's request handling: routing, page rendering,
 *             actions, SSE streams, /_health, /_session/close, and the
 *             route tables they serve from.
 *   contexts.c php-via's per-worker state: contexts and their hash map,
 *             sessions, TAB signals, patch queues and their events,
 *             cleanup (contexts.h: what handlers.c uses of it).
 *   php_compat.c what PHP and OpenSwoole do with bytes: urlencode, form
 *             fields, cookies, json_encode/json_decode, (int)/(string)
 *             casts, trim (php_compat.h).
 *   routes.c  the benchmark pages themselves (route, signals, view, actions),
 *             as bench_app.php declares them, plus the live spreadsheet.
 *   sheet.c   the spreadsheet's SQLite database (open, seed, the prepared
 *             viewport query) and its 20x10 viewport table.
 *   reactor.c --workers N > 1: the reactor's request handler, which picks a
 *             worker for each request (--dispatch) and proxies the request
 *             and its response over a loopback link to that worker.
 *   brotli.c  --brotli: pages and SSE chunks compressed as php-via's
 *             withBrotli() does (libbrotlienc).
 *   h2.c      --http2: HTTP/2 connections (ALPN h2, h2c prior knowledge) on
 *             libnghttp2, each request a stream with a record and a
 *             coroutine of its own, answered by the same handlers.
 *
 * Naming: ba_* for the functions and types shared between these files
 * (hm__ is the engine's; bench_app's public interface is app.h's
 * hm_bench_app_*), static for everything else.
 *
 * Ownership: a run has one ba_app per worker (with --workers 1 the only
 * one, which also listens; with more, each on its own thread behind a
 * reactor ba_app on the calling thread). A worker's ba_app owns every
 * context, queue, connection record and route table, and its own handle on
 * the spreadsheet database (routes.c); contexts own their session string,
 * their string signal buffers and their current patch queue; an SSE stream
 * (a ba_stream on its coroutine's stack) only waits in a queue. Connection
 * records (parser, buffers, a TLS run's hm_tls) are pooled and reused
 * across connections; a TLS run's ba_run owns the hm_tls_config, freed
 * once every thread of the run has ended.
 * Nothing in a ba_app is thread-safe: it is used only by its own loop
 * thread. The ba_run (server.c) is what threads share: the per-worker
 * counters /_health lists (atomics), the stop flag, start-up hand-shake. */
#ifndef HM_BENCH_APP_INTERNAL_H
#define HM_BENCH_APP_INTERNAL_H

#include "bench_app/app.h"
#include "base/hm_buf.h"
#include "engine/engine.h"
#include "proto/http1.h"
#include "proto/tls.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define BA_MAX_SIGNALS 8  /* TAB signals per page; the live spreadsheet uses 6 */
#define BA_QUEUE_CAP 50   /* php-via's Channel(50) per page context */
#define BA_CTX_HEX 16     /* bin2hex(random_bytes(8)) */
#define BA_SESSION_HEX 32 /* bin2hex(random_bytes(16)) */
#define BA_ROUTE_MAX 64   /* longest route path we accept in the table */
#define BA_CTX_ID_MAX (BA_ROUTE_MAX + 2 + BA_CTX_HEX + 1)
#define BA_RBUF 16384     /* per-connection read buffer */
#define BA_MAX_WORKERS 64 /* --workers and --processes: at most this many */

/* ---- growable byte buffer --------------------------------------------- */

/* base/hm_buf.h's buffer: owned by whoever embeds it; data is hm_alloc'd,
 * always NUL-terminated once allocated, reused (len = 0) rather than freed. */
typedef hm_buf ba_buf;

/* Makes room for `extra` more bytes (plus a NUL). 0 or -ENOMEM. */
int ba_buf_reserve(ba_buf *b, size_t extra);
/* Appends n bytes. 0 or -ENOMEM. */
int ba_buf_append(ba_buf *b, const void *p, size_t n);
void ba_buf_free(ba_buf *b);

static inline int ba_buf_lit(ba_buf *b, const char *s)
{
    return ba_buf_append(b, s, strlen(s));
}

/* True when p[0..n) is the C string lit. */
static inline bool ba_str_eq(const char *p, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    return n == l && (n == 0 || memcmp(p, lit, n) == 0);
}

/* ---- route table (routes.c) ------------------------------------------- */

typedef struct ba_ctx ba_ctx;
typedef struct ba_app ba_app;

/* An action body; runs in the connection's coroutine (it may block, e.g.
 * sleep). Returns 0, or a negative errno, which answers 500 Action failed. */
typedef int (*ba_action_fn)(ba_ctx *ctx);

/* A TAB signal's type: client values are cast to it (php-via's injectSignals). */
typedef enum ba_sig_type {
    BA_SIG_INT = 0,
    BA_SIG_STR,
} ba_sig_type;

typedef struct ba_signal_def {
    const char *name; /* TAB signal name; wire id is name + "_" + sanitized ctx id */
    int64_t initial;  /* BA_SIG_INT */
    ba_sig_type type;
    const char *initial_str; /* BA_SIG_STR; NULL = "" */
} ba_signal_def;

typedef struct ba_action_def {
    const char *id; /* URL id: POST /_action/<id> */
    ba_action_fn fn;
} ba_action_def;

/* A view that depends on the context: appends its HTML to out. Runs for
 * the page GET and for every SSE sync (php-via re-renders the view then).
 * 0 or a negative errno. */
typedef int (*ba_view_fn)(ba_ctx *ctx, ba_buf *out);

typedef struct ba_route_def {
    const char *path;  /* exact path, e.g. "/bench/counter" (no {params} yet) */
    const char *view;  /* the view's HTML, as the page and the SSE sync send it */
    ba_view_fn render; /* instead of view when set */
    const ba_signal_def *signals;
    size_t n_signals;
    const ba_action_def *actions;
    size_t n_actions;
} ba_route_def;

extern const ba_route_def ba_routes[];
extern const size_t ba_n_routes;

/* Signal access for actions; idx is the index in the route's signal list. */
int64_t ba_signal_get(const ba_ctx *ctx, size_t idx);
/* Sets a TAB signal and marks it changed (php-via's setValue()). */
void ba_signal_set(ba_ctx *ctx, size_t idx, int64_t v);
/* A BA_SIG_STR signal's value (NUL-terminated) and its length. */
const char *ba_signal_str(const ba_ctx *ctx, size_t idx, size_t *len);
/* Sets a BA_SIG_STR signal and marks it changed. 0 or -ENOMEM. */
int ba_signal_set_str(ba_ctx *ctx, size_t idx, const char *s, size_t n);
/* The signal's wire id (name + "_" + sanitized ctx id) into buf; returns
 * its length. cap >= 160 always suffices. */
size_t ba_signal_wire_id(const ba_ctx *ctx, size_t idx, char *buf, size_t cap);
/* Queues one datastar-patch-signals event with every changed TAB signal and
 * marks them synced (php-via's syncSignals()). 0 or -ENOMEM. */
int ba_sync_signals(ba_ctx *ctx);
/* Queues one datastar-patch-elements event: "data: selector <selector>"
 * when selector is non-NULL, then the HTML trimmed and split on \n, one
 * "data: elements" line per line (datastar-php's patchElements()). */
int ba_patch_elements(ba_ctx *ctx, const char *selector, const char *html, size_t n);
/* The app a context belongs to. */
ba_app *ba_ctx_app(const ba_ctx *ctx);

/* Route state that lives for the run (routes.c): the spreadsheet database.
 * init runs before the server listens; 0 or a negative errno (it prints
 * why to stderr). free releases everything init made, also after a
 * partial init. */
int ba_routes_init(ba_app *app);
void ba_routes_free(ba_app *app);

/* ---- the spreadsheet (sheet.c) ---------------------------------------- */

#define BA_SHEET_ROWS 1000
#define BA_SHEET_COLS 26
#define BA_VIEW_ROWS 20
#define BA_VIEW_COLS 10

typedef struct ba_sheet ba_sheet;

/* Opens (creating and seeding when empty) the database at path, or, when
 * path is NULL, in a fresh temporary directory that close removes. WAL,
 * synchronous=NORMAL, the viewport query prepared once. 0 or a negative
 * errno; on failure *out is NULL and a line on stderr says why. */
int ba_sheet_open(const char *path, ba_sheet **out);
void ba_sheet_close(ba_sheet *sh);
/* The database file's path (valid until close). */
const char *ba_sheet_path(const ba_sheet *sh);

/* Runs the viewport query for rows [vr, vr+20) and columns [vc, vc+10) and
 * appends the table to out: values HTML-escaped, an outline style on the
 * cell (fr, fc). live=false: bench_app.php's table on one line, cells only;
 * live=true: a header row and row numbers in <th> cells, each <tr> on its
 * own line. Does not yield. 0 or a negative errno. */
int ba_sheet_table(ba_sheet *sh, int64_t vr, int64_t vc, int64_t fr, int64_t fc, bool live,
                   ba_buf *out);

/* ---- connections and the app (server.c) ------------------------------- */

typedef struct ba_proxy ba_proxy;
typedef struct ba_h2 ba_h2;
typedef struct ba_h2s ba_h2s;

/* A connection record, or over HTTP/2 also a stream's: a stream record has
 * no socket (sock and tls NULL) and h2s set; its request is in req, its
 * answer goes through the same response functions (h2.c frames it). */
typedef struct ba_conn {
    ba_app *app;
    struct ba_conn *prev, *next; /* in app->conns, or next in the pool */
    hm_sock *sock;
    hm_tls *tls;     /* TLS state when the app serves TLS (kept across reuse), else NULL */
    uint64_t id;     /* the app's connection counter (OpenSwoole's session_id), from 1 */
    char via_id[12]; /* X-Via-Worker of the responses written on this connection */
    hm_coro *co;     /* the connection's coroutine */
    hm_coro *reader; /* SSE: coroutine watching for the peer's EOF, or NULL */
    hm_waitgroup reader_wg;
    bool reader_stop;   /* SSE: tells the reader to end */
    bool peer_gone;     /* SSE: the reader saw EOF or an error */
    bool watch_cancels; /* the reader cancels co when the peer goes (the reactor) */
    bool stream_waits;  /* SSE: co waits for a patch, in no socket operation */
    hm_chan *bell;      /* SSE: wakes the stream's coroutine (kept while pooled) */
    bool keep_alive;    /* the current request allows another one */
    bool fat;           /* buffers grew large: free instead of pooling */
    hm_http_req_parser req;
    ba_buf out;     /* responses not yet written */
    ba_buf scratch; /* per-request temporary text (decoded params, page body) */
    ba_buf ev;      /* SSE: the bytes being written while deliveries fill out */
    ba_buf raw;     /* reactor: the current request's bytes as received */
    ba_proxy *px;   /* reactor: response parser and buffer (reactor.c), or NULL */
    ba_h2 *h2;      /* the connection speaks HTTP/2 (h2.c), else NULL */
    ba_h2s *h2s;    /* an HTTP/2 stream's record: its state (h2.c), else NULL */
    char rbuf[BA_RBUF];
} ba_conn;

/* What a request handler tells the connection loop. */
enum {
    BA_NEXT = 0, /* keep the connection for the next request */
    BA_CLOSE,    /* write what is pending, then close */
    BA_DROP,     /* close without writing more (peer gone, stream over) */
};

typedef struct ba_route_rt ba_route_rt;

/* One worker's counters, written by its thread, read by any (/_health). */
typedef struct ba_wstats {
    _Atomic int64_t contexts, sse, requests;
} ba_wstats;

typedef enum ba_dispatch {
    BA_DISPATCH_STREAM = 0, /* OpenSwoole's mode 7: the least busy worker */
    BA_DISPATCH_FD,         /* mode 2: connection id % workers */
    BA_DISPATCH_SESSION,    /* php-via's dispatch_func: crc32(session) % workers */
} ba_dispatch;

/* What the threads of one run share (server.c). */
typedef struct ba_run {
    int n_workers;
    int first_id;       /* X-Via-Worker of worker 0 (options.worker_id) */
    ba_wstats *stats;   /* n_workers */
    atomic_int abort;   /* stop every loop of the run (start-up failed, reactor ended) */
    hm_tls_config *tls; /* the server's TLS context (tls_cert), or NULL */
} ba_run;

typedef struct ba_reactor ba_reactor;
typedef struct ba_gone_set ba_gone_set;

struct ba_app {
    hm_bench_app_options opt;
    ba_run *run;
    int worker;      /* index in run->stats; -1 for the reactor */
    ba_wstats *ws;   /* this worker's counters; NULL for the reactor */
    char via_id[12]; /* X-Via-Worker of this worker's responses */
    bool internal;   /* a worker behind the reactor: loopback links, no deadlines */
    bool keep_raw;   /* the reactor: keep each request's bytes in c->raw */
    /* The app that owns the client connections (the only worker, or the
     * reactor) of a TLS run: run->tls; workers behind a reactor: NULL. */
    hm_tls_config *tls;
    /* Handles the request just parsed into c->req: ba_via_handle, or
     * the reactor's ba_reactor_handle. */
    int (*handle)(ba_conn *c);
    ba_reactor *rx;    /* the reactor's state (reactor.c), else NULL */
    uint64_t conn_seq; /* connections accepted so far */
    hm_loop *loop;
    hm_sock *listener;
    hm_coro *acceptor;
    bool acceptor_done;
    bool stopping;
    bool yield_reads; /* epoll: yield before each read (see conn_main) */
    int port;
    int64_t idle_ns, header_ns, poll_ns, cleanup_ns;
    hm_http_limits limits;
    size_t max_signal_bytes; /* a client's signal value: larger answers 413 */
    time_t date_sec;         /* second for which date was formatted */
    char date[40];           /* the Date header's value */
    ba_conn *conns;          /* live connections (doubly linked) */
    size_t n_conns;
    ba_conn *pool; /* free connection records (singly linked via next) */
    size_t pool_len;

    /* routes.c state */
    ba_sheet *sheet;
    ba_buf html; /* an action's scratch HTML (actions that do not yield) */

    /* handlers.c and contexts.c state */
    ba_route_rt *routes;
    size_t n_routes;
    ba_ctx **buckets; /* context map: chained hash on the id */
    size_t n_buckets, n_ctx;
    ba_ctx *pending;        /* contexts with a cleanup scheduled (doubly linked) */
    ba_gone_set *reloaded;  /* ids sent the reload script (contexts.c) */
    ba_gone_set *revivable; /* revival records of destroyed contexts, or NULL */
    int64_t sse_total;
    uint8_t rnd[512]; /* getrandom() pool for ids */
    size_t rnd_pos;
    time_t cookie_sec; /* second for which cookie_expires was formatted */
    char cookie_expires[40];
};

/* Absolute deadline for the next socket operation (idle timeout); 0 (none)
 * on a worker's loopback links, whose lifetime the reactor governs. */
int64_t ba_deadline(const ba_app *app);
/* The earlier of two deadlines, 0 being none. */
static inline int64_t ba_earlier(int64_t a, int64_t b)
{
    return !a ? b : !b ? a : a < b ? a : b;
}

/* Appends a complete response to c->out: status line (reason NULL = the
 * standard one), headers, Content-Length: blen, Connection: close when
 * !c->keep_alive, then body unless head_only. 0 or a negative errno. */
int ba_respond(ba_conn *c, int status, const hm_http_header *h, size_t n, const char *body,
               size_t blen, bool head_only);
/* Appends just a head with Transfer-Encoding: chunked. */
int ba_respond_chunked_head(ba_conn *c, int status, const hm_http_header *h, size_t n);
/* Writes c->out to the socket in one call and empties it. */
int ba_flush(ba_conn *c);
/* A client connection's I/O, through c->tls when it has one: as
 * hm_sock_read and hm_sock_write. Only the connection's own coroutine
 * writes. */
ssize_t ba_read(ba_conn *c, void *buf, size_t len, int64_t deadline);
ssize_t ba_write(ba_conn *c, const void *buf, size_t len, int64_t deadline);
/* Sends what the plain (not TLS) socket of c takes of b now, without
 * blocking, and keeps the rest in b: for a write that must not wait for
 * the coroutine that owns the connection's writes, which sends the rest.
 * False when the socket failed (the client is gone); full is not a
 * failure. */
bool ba_send_now(ba_conn *c, ba_buf *b);
/* For a second coroutine watching the peer (for EOF) while the connection's
 * coroutine writes: reads and discards, never writes to the socket. */
ssize_t ba_watch_read(ba_conn *c, void *buf, size_t len);
/* A read that never writes to the socket (TLS: hm_tls_read_quiet), for a
 * reader beside a writer coroutine (HTTP/2). */
ssize_t ba_read_quiet(ba_conn *c, void *buf, size_t len, int64_t deadline);
/* After a last answer (an error status, an HTTP/2 GOAWAY): stop sending
 * (TLS: close_notify first), then read and discard what the peer still
 * sends, up to max_bytes within half a second, so that closing does not
 * turn its unread bytes into a reset that could destroy our answer in
 * flight. The caller closes the socket. */
void ba_linger_close(ba_conn *c, size_t max_bytes);
/* One piece of a streamed body appended to out: an HTTP/1.1 chunk, or over
 * HTTP/2 the bytes as they are (DATA frames frame them). Nothing when n is
 * 0. 0 or -ENOMEM. */
int ba_body_chunk(const ba_conn *c, ba_buf *out, const char *p, size_t n);
/* The end of a streamed body on c->out: HTTP/1.1's last chunk; over HTTP/2
 * nothing (the stream's end follows the handler). 0 or -ENOMEM. */
int ba_body_end(ba_conn *c);

/* Connection records for h2.c's streams: a pooled record (counted as a new
 * connection, with a new id, when new_conn), linked into app->conns so the
 * stop ticker reaches its coroutine; unlink and put back when done. */
ba_conn *ba_conn_get(ba_app *app, bool new_conn);
void ba_conn_put(ba_app *app, ba_conn *c);
void ba_conn_link(ba_app *app, ba_conn *c);
void ba_conn_unlink(ba_app *app, ba_conn *c);
/* Starts / stops the coroutine that watches a streaming connection for the
 * client going away: it sets c->peer_gone, and with cancel also cancels
 * c->co at once (the reactor's proxying, as OpenSwoole's reactor sees a
 * close at once); an SSE stream notices only at its next write, as
 * php-via does. Stop returns only once the watcher has left its read, so
 * the socket may then close. (handlers.c, which streams SSE; the reactor
 * uses them too.) */
void ba_peer_watch_start(ba_conn *c, bool cancel);
void ba_peer_watch_stop(ba_conn *c);

/* ---- Brotli (brotli.c) -------------------------------------------------- */

/* One SSE stream's encoder (php-via's brotli_compress_init(4)). */
typedef struct ba_br ba_br;

/* 0 or -ENOMEM. */
int ba_br_new(ba_br **out);
void ba_br_free(ba_br *br); /* NULL: nothing */
/* Appends p[0, n) to out as one piece of c's streamed body (ba_body_chunk:
 * an HTTP chunk, or HTTP/2 DATA bytes): compressed and flushed
 * (BROTLI_OPERATION_FLUSH) when br is non-NULL, so the piece decodes to
 * exactly these bytes on arrival; as it is when br is NULL. 0 or a
 * negative errno (out may then hold part of the piece). */
int ba_br_chunk(ba_br *br, const ba_conn *c, ba_buf *out, const char *p, size_t n);
/* Appends a whole page body compressed as php-via sends one: FLUSH of the
 * HTML, then FINISH. 0 or a negative errno. */
int ba_br_page(ba_buf *out, const char *p, size_t n);
/* The request's Accept-Encoding contains "br" (as BrotliMiddleware reads
 * it: q-values ignored). */
bool ba_accepts_br(const ba_conn *c);

/* ---- php-via semantics: what server.c calls (handlers.c, contexts.c) --- */

/* Builds route tables; 0 or a negative errno. */
int ba_via_init(ba_app *app);
/* Frees contexts, queues and route tables. */
void ba_via_free(ba_app *app);
/* Handles the request just parsed into c->req; returns BA_NEXT/CLOSE/DROP. */
int ba_via_handle(ba_conn *c);
/* Runs due context cleanups; called by the ticker (contexts.c). */
void ba_via_tick(ba_app *app, int64_t now);
/* --leak-rate (leak.c): worker 0 leaks what the rate owes since its last call. */
void ba_leak_tick(const ba_app *app, int64_t now);

/* ---- HTTP/2 (h2.c) -------------------------------------------------------- */

/* Serves the connection c as HTTP/2 until it ends (the client leaves, a
 * GOAWAY, an error, a deadline, the stop): pre[0, n) are bytes already
 * read from it (the cleartext preface), fed first; the preface and the
 * client's first SETTINGS must be complete by preface_by (the header
 * deadline of the connection's first byte). Every stream's coroutine has
 * ended when it returns; the caller then closes the socket. */
void ba_h2_serve(ba_conn *c, const char *pre, size_t n, int64_t preface_by);
/* A stream's response head (server.c's write_head for HTTP/2): status,
 * the headers (HTTP/1.1-only ones dropped, names lower-cased) and
 * content-length when content_length >= 0. 0 or -ENOMEM / -EINVAL. */
int ba_h2_head(ba_conn *s, int status, const hm_http_header *h, size_t n, long long content_length);
/* ba_write for a stream: hands buf to nghttp2 as DATA and waits until it
 * has taken every byte (the client's flow-control windows allow it), as a
 * socket write waits for the kernel. len, -EPIPE when the stream or its
 * connection is gone, -ETIMEDOUT (the stream is then reset), -ECANCELED. */
ssize_t ba_h2_write(ba_conn *s, const void *buf, size_t len, int64_t deadline);
/* An SSE delivery's write without waiting (handlers.c): s->out goes to
 * nghttp2 now unless a write of the stream's own is in flight (s->ev) or
 * waits for the window, and on cleartext onto the socket too when the
 * connection's writer has no write in flight. False when the stream is
 * gone. */
bool ba_h2_write_now(ba_conn *s);
/* Bytes handed to nghttp2 that it has not taken yet (a closed window). */
size_t ba_h2_unsent(const ba_conn *s);
/* Waits until those are taken (as ba_h2_write). 0 or a negative errno. */
int ba_h2_drain(ba_conn *s, int64_t deadline);

/* ---- reactor.c ---------------------------------------------------------- */

/* Sets up the reactor's state for a run of run->n_workers workers that
 * listen on 127.0.0.1:ports[i]; 0 or -ENOMEM. */
int ba_reactor_init(ba_app *app, const int *ports, ba_dispatch mode);
/* Closes the idle links and frees the reactor's state. */
void ba_reactor_free(ba_app *app);
/* A new client connection: sets c->id's fallback worker as c->via_id (the
 * id on the reactor's own answers, e.g. 400 for a malformed request). */
void ba_reactor_conn_start(ba_conn *c);
/* Frees c->px (connection record going away). */
void ba_reactor_conn_free(ba_conn *c);
/* Forwards c->raw to the chosen worker and copies its response to c->out
 * (and to the client as it arrives, for streams); BA_NEXT/CLOSE/DROP. */
int ba_reactor_handle(ba_conn *c);
/* Parses "stream", "fd" or "session"; NULL means stream. 0 or -EINVAL. */
int ba_dispatch_parse(const char *s, ba_dispatch *out);

#endif
