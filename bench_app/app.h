/* app.h — bench_app, hammer's stand-in for php-via's benchmark app
 * (php-via tests/Load/bench_app.php), served by our own engine.
 *
 * It speaks php-via's wire protocol as php-via v0.12.0 on OpenSwoole does
 * (docs/php-via.md): page GETs create contexts bound to the via_session_id
 * cookie, POST /_action/<id> runs an action and answers an empty 200, GET
 * /_sse streams Datastar patch events over chunked SSE with no heartbeat,
 * each patch handed to the waiting stream the moment it is queued (a
 * context's queue of 50, dropping the oldest, fills only while a stream's
 * writer is blocked), a client that went away is noticed at its stream's
 * next write, an unknown context gets revival or the reload script,
 * /_session/close and the end of the last SSE stream schedule a context's
 * cleanup, /_health reports counts; --brotli compresses pages and streams
 * as withBrotli() does. Headers go out in OpenSwoole's order, with Date.
 *
 * Pages (TAB signals named as php-via names them, count_<route>_<hex>):
 * bench_app.php's /bench/counter, /bench/cpu (Mandelbrot sum, 65451),
 * /bench/io (2 ms non-blocking sleep), /bench/spreadsheet (SQLite viewport
 * query + table build), each with action `increment`; and the website's
 * live spreadsheet /examples/spreadsheet (action `navigate`), whose patches
 * carry the 20x10 viewport table. The spreadsheets read a SQLite database
 * (db_path below) that a first start seeds with 1000 x 26 cells.
 *
 * Workers (php-via's worker_num, protocol doc section 4): with workers = 1
 * (the default) one loop on the calling thread listens and serves. With
 * workers = N > 1 the run is N workers with fully isolated state (contexts,
 * sessions, patch queues, SQLite handles; the database file is shared, as
 * php-via's is), each an engine loop on its own thread, as OpenSwoole's
 * worker processes are, behind a reactor on the calling thread that owns
 * the client connections and hands each REQUEST to the worker `dispatch`
 * picks, over a loopback link (an SSE response keeps its link for the
 * stream's life):
 *   "stream"  (default) what php-via's dispatch_mode 7 really does: the
 *             least busy worker (fewest requests forwarded and not yet
 *             answered, open SSE streams not counted), ties round-robin;
 *   "fd"      OpenSwoole's mode 2: the connection's id (1, 2, ... in
 *             accept order) % N;
 *   "session" php-via's dispatch_func: crc32 of the first
 *             __Host-via_session_id= or else via_session_id= hex value in
 *             the request's first 8 KiB, % N; no such value: as "fd".
 * Every response carries `X-Via-Worker: <id>` (a bench_app extension, for
 * diagnosis): worker_id + the worker's index. /_health's "connections" are
 * the answering worker's own (as php-via's), "worker" is its id, and
 * "workers" lists every worker of the run: [{"id","contexts","sse",
 * "requests"}, ...] (requests: requests that worker has handled). The
 * reactor answers malformed requests itself (400/413/431), naming the
 * worker "fd" dispatch would have picked.
 *
 * TLS (tls_cert + tls_key set; php-via deployments are served over HTTPS):
 * every client connection first runs the server side of a TLS handshake
 * (TLS 1.2 or 1.3, ALPN http/1.1, resumption through a session cache and
 * tickets), within the idle timeout, and then all its requests, responses
 * and SSE chunks go through TLS (proto/tls.h: OpenSSL over our own BIO, the
 * engine does the socket I/O). A connection whose handshake fails (a plain
 * HTTP client, garbage, an unacceptable hello) is just closed. With
 * workers > 1, TLS ends at the reactor: the loopback links to the workers
 * stay plain. A certificate or key that cannot be loaded makes the run
 * print one line naming the file to stderr and return -EINVAL before it
 * listens.
 *
 * HTTP/2 (http2 set; php-via serves it with TLS, and on cleartext with
 * withH2c()): over TLS, ALPN selects h2 when the client offers it (else
 * http/1.1 as before); on a cleartext port, a connection that opens with
 * the client preface is h2c (prior knowledge), any other HTTP/1.1. Same
 * routes, same answers: each request is a stream answered by the same
 * handlers, with HEADERS (lower-case names, no Connection) and DATA; an SSE
 * stream stays open with one DATA frame per event, within the client's
 * flow-control windows (a stream whose window is closed is a blocked
 * writer, as a full socket is over HTTP/1.1); a stream the client resets is
 * noticed at its next write. SETTINGS as OpenSwoole's defaults: 128
 * concurrent streams, windows of 2^31-1 for what clients send. With
 * workers > 1 the run refuses http2 (-EINVAL, saying why on stderr):
 * php-via's multi-worker mode is OpenSwoole's dispatch_mode 7, which
 * refuses HTTP/2 at start.
 *
 * Use: the bench_app executable (main.c; its --processes runs N of these
 * in child processes), or embedded: hammer forks a child that calls
 * hm_bench_app_run(), which takes workers and dispatch as the command line
 * does. Only one run at a time per process (the stop flag is static, so a
 * signal handler can reach it).
 *
 * Signals: hm_bench_app_run() installs no signal handlers. A program that
 * wants SIGTERM/SIGINT to stop the server calls
 * hm_bench_app_install_signal_handlers() first (main.c does).
 *
 * Memory: the run allocates everything it uses and frees it before it
 * returns; options strings are only read during the call. */
#ifndef HM_BENCH_APP_H
#define HM_BENCH_APP_H

#include "engine/engine.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hm_bench_app_options {
    const char *host;         /* default "127.0.0.1" */
    int port;                 /* default 3099; 0 = pick a free port */
    hm_backend_kind backend;  /* HM_BACKEND_AUTO */
    int64_t cleanup_delay_ms; /* contextCleanupDelayMs, default 5000 */
    /* 0 (default): a patch goes to a waiting SSE stream the moment it is
     * queued, as in php-via on OpenSwoole; N > 0: streams poll their queue
     * every N ms instead (what php-via's code reads as, an experiment). */
    int64_t sse_poll_ms;
    int64_t revival_window_ms; /* contextRevivalWindowMs, default 600000; 0 = none */
    int64_t idle_timeout_ms;   /* keep-alive idle timeout, default 60000 */
    /* A request's header section must be complete this long after its first
     * byte arrived (0 = default, 10000), however slowly it trickles in. */
    int64_t header_timeout_ms;
    size_t max_header_bytes, max_body_bytes; /* 0 = defaults (64 KiB, 1 MiB) */
    /* Largest value a client may give one signal, in bytes of its JSON
     * text (0 = default, 64 KiB): an action or SSE request carrying a
     * bigger one answers 413. */
    size_t max_signal_bytes;
    /* Brotli (php-via's withBrotli()): pages and SSE streams are
     * compressed when the request's Accept-Encoding contains "br". */
    bool brotli;
    bool dev_mode; /* default true, as bench_app.php: missing Origin passes */
    bool quiet;    /* no "listening" line, no log lines */
    /* The spreadsheet's SQLite file, created and seeded when it has no
     * cells, kept afterwards. NULL (default): spreadsheet.db in a fresh
     * mkdtemp() directory under $TMPDIR (else /tmp), removed when the run
     * returns. */
    const char *db_path;
    int workers;          /* worker_num, default 1 (0 counts as 1); at most 64 */
    const char *dispatch; /* "stream" (NULL = default), "fd" or "session" */
    int worker_id;        /* X-Via-Worker of the first worker, default 0 */
    /* HTTPS: PEM certificate chain and private key, both or neither (NULL,
     * the default: plain HTTP). See "TLS" above. */
    const char *tls_cert, *tls_key;
    /* HTTP/2 (see "HTTP/2" above): h2 through ALPN on a TLS run, h2c with
     * prior knowledge on a cleartext one; workers must be 1. */
    bool http2;
    /* A test aid (docs/php-via.md): worker 0 allocates and writes this many
     * bytes per second and never frees them. 0, the default: none. */
    int64_t leak_rate;
} hm_bench_app_options;

#define HM_BENCH_APP_DEFAULT_PORT 3099

/* Fills *o with the defaults listed above. */
void hm_bench_app_defaults(hm_bench_app_options *o);

/* Runs the server on the calling thread (its own engine loop) until
 * hm_bench_app_request_stop() is called. Once listening, writes "<port>\n"
 * to ready_fd when ready_fd >= 0 and, unless quiet, prints
 * "bench_app listening on http://HOST:PORT" (https:// with TLS) to
 * stdout. o NULL = defaults.
 * With workers > 1 the worker threads are started and listening (on
 * loopback ports of their own) before the port is announced.
 * Returns 0 after a requested stop, -EINVAL for bad options (a TLS
 * certificate or key that does not load also prints why), -EBUSY when a
 * run is already under way in this process, or the negative errno that
 * stopped it from starting (e.g. -EADDRINUSE, -EADDRNOTAVAIL; a database
 * that cannot be opened or seeded also prints why to stderr). A stop
 * requested before the run starts makes it return at once (after listening). */
int hm_bench_app_run(const hm_bench_app_options *o, int ready_fd);

/* Asks the running (or next) hm_bench_app_run() to stop: it closes the
 * listener and every connection and returns within about 20 ms.
 * Async-signal-safe; also safe from another thread. */
void hm_bench_app_request_stop(void);

/* Installs SIGTERM and SIGINT handlers that call hm_bench_app_request_stop(),
 * and ignores SIGPIPE. Returns 0 or a negative errno. */
int hm_bench_app_install_signal_handlers(void);

#endif
