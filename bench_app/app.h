/* app.h — bench_app, hammer's stand-in for php-via's benchmark app
 * (php-via tests/Load/bench_app.php): one worker, served by our own engine.
 *
 * It speaks php-via's wire protocol (docs: /work/shared/docs/php-via-protocol.md):
 * page GETs create contexts bound to the via_session_id cookie, POST
 * /_action/<id> runs an action and answers an empty 200, GET /_sse streams
 * Datastar patch events over chunked SSE with no heartbeat, a context's patch
 * queue holds 50 events and drops the oldest, /_session/close and the end of
 * the last SSE stream schedule a context's cleanup, /_health reports counts.
 *
 * Pages (TAB signals named as php-via names them, count_<route>_<hex>):
 * bench_app.php's /bench/counter, /bench/cpu (Mandelbrot sum, 65451),
 * /bench/io (2 ms non-blocking sleep), /bench/spreadsheet (SQLite viewport
 * query + table build), each with action `increment`; and the website's
 * live spreadsheet /examples/spreadsheet (action `navigate`), whose patches
 * carry the 20x10 viewport table. The spreadsheets read a SQLite database
 * (db_path below) that a first start seeds with 1000 x 26 cells.
 *
 * Use: the bench_app executable (main.c), or embedded: hammer forks a child
 * that calls hm_bench_app_run(). Only one run at a time per process (the run
 * keeps its state in one static instance, so a signal handler can reach it).
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
    const char *host;                        /* default "127.0.0.1" */
    int port;                                /* default 3099; 0 = pick a free port */
    hm_backend_kind backend;                 /* HM_BACKEND_AUTO */
    int64_t cleanup_delay_ms;                /* contextCleanupDelayMs, default 5000 */
    int64_t sse_poll_ms;                     /* ssePollIntervalMs, default 100; 0 = wake on push */
    int64_t idle_timeout_ms;                 /* keep-alive idle timeout, default 60000 */
    size_t max_header_bytes, max_body_bytes; /* 0 = defaults (64 KiB, 1 MiB) */
    bool dev_mode; /* default true, as bench_app.php: missing Origin passes */
    bool quiet;    /* no "listening" line, no log lines */
    /* The spreadsheet's SQLite file, created and seeded when it has no
     * cells, kept afterwards. NULL (default): spreadsheet.db in a fresh
     * mkdtemp() directory under $TMPDIR (else /tmp), removed when the run
     * returns. */
    const char *db_path;
} hm_bench_app_options;

#define HM_BENCH_APP_DEFAULT_PORT 3099

/* Fills *o with the defaults listed above. */
void hm_bench_app_defaults(hm_bench_app_options *o);

/* Runs the server on the calling thread (its own engine loop) until
 * hm_bench_app_request_stop() is called. Once listening, writes "<port>\n"
 * to ready_fd when ready_fd >= 0 and, unless quiet, prints
 * "bench_app listening on http://HOST:PORT" to stdout. o NULL = defaults.
 * Returns 0 after a requested stop, -EINVAL for bad options, -EBUSY when a
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
