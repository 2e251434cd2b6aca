/* bench_app_client.h — what the bench_app tests (tests/test_bench_app_*.c)
 * share: forked servers, blocking clients over plain TCP or TLS, HTTP
 * requests read with hm_http_resp_parser, php-via's page/action/SSE steps,
 * and parsers for what the pages send. Each test executable checks one
 * behaviour against servers of its own.
 *
 * bench_app_client.c: children, sockets, the TLS client, requests, SSE.
 * bench_app_steps.c:  php-via steps, workload parsers, workers, the test
 *                     PKI, the database, the HTTP framing checks.
 *
 * Every helper fails the test (exit 1, saying where) when the server does
 * not answer as expected within IO_TIMEOUT_MS, so a caller needs no error
 * paths. Ownership: conn_open/sse_open allocate, conn_close/sse_close
 * free; json_t results are the caller's to json_decref(). Children are
 * SIGKILLed and reaped when the test exits, and the test's directory
 * (g_tmp) is removed. Nothing here is thread-safe. */
#ifndef HM_BENCH_APP_CLIENT_H
#define HM_BENCH_APP_CLIENT_H

#include "bench_app/app.h"
#include "hm_test.h"
#include "proto/http1.h"

#include <jansson.h>
#include <openssl/ssl.h>
#include <stdbool.h>
#include <sys/types.h>
#include <unistd.h>

#define IO_TIMEOUT_MS 5000

int64_t now_ms(void);

/* ---- the test process and its children --------------------------------- */

extern char g_tmp[256]; /* the test's own directory, removed at exit */

/* Sets up a test: SIGPIPE ignored, line-buffered stdout, g_tmp made,
 * children killed at exit. A test that runs once per engine backend
 * passes want_backend: it reads argv[1] ("io_uring" or "epoll"), skips
 * (77, saying why) when io_uring is unavailable, and returns the backend;
 * otherwise returns HM_BACKEND_AUTO. */
hm_backend_kind ba_test_begin(int argc, char **argv, bool want_backend);

/* Options for a test server: port 0, quiet, the given backend, cleanup
 * 200 ms, SSE woken on every push, the default database. */
hm_bench_app_options ba_test_options(hm_backend_kind backend);

/* Forks a server running hm_bench_app_run(o); returns its pid and sets
 * *port (-1 when it exited before listening). Child exit codes: 0 clean
 * stop, 10 EADDRINUSE, 3 anything else. */
pid_t start_child(const hm_bench_app_options *o, int *port);
/* start_child() that must listen. */
pid_t start_server(const hm_bench_app_options *o, int *port);
/* Waits for a child; its exit code (128 + signal when killed). Fails the
 * test after timeout_ms. */
int wait_child(pid_t pid, int timeout_ms);
/* SIGTERM, then a clean exit within 5 s. */
void stop_server(pid_t pid);
/* Forks and execs argv (a tracked child, killed with the test). */
pid_t spawn(char *const argv[]);

/* ---- sockets, plain or TLS --------------------------------------------- */

/* While g_tls is set, tcp_connect() makes TLS connections with it (the
 * certificate verified for 127.0.0.1 against the test CA, ALPN http/1.1),
 * offering g_resume's session when set; send_all, read_until and fd_close
 * then go through the connection's SSL. */
extern SSL_CTX *g_tls;
extern SSL_SESSION *g_resume;
extern bool g_reused;   /* the last handshake resumed g_resume's session */
extern char g_alpn[32]; /* the protocol the last handshake selected, "" if none */

/* A plain TCP connection to 127.0.0.1:port. */
int tcp_connect_raw(int port);
/* A connection to port: TLS (ALPN http/1.1 agreed) while g_tls is set. */
int tcp_connect(int port);
/* Connections this process has opened to port so far (the server's
 * connection ids, 1, 2, ..., when the test is its only client). */
int conns_made(int port);
/* The TLS handshake on a connected socket: 1, or 0 when it failed
 * (printing OpenSSL's reason when loud). */
int tls_handshake(int fd, bool loud);
/* The SSL of a TLS connection, else NULL. */
SSL *ssl_of(int fd);
/* A TLS connection's session, for g_resume (caller frees it). */
SSL_SESSION *tls_session(int fd);
/* Closes a socket, TLS or not (a TLS one says close_notify first). */
void fd_close(int fd);
void send_all(int fd, const char *s, size_t n);
/* Reads with a deadline: bytes, 0 on EOF, -1 on timeout, -2 on error. */
ssize_t read_until(int fd, char *buf, size_t cap, int64_t until_ms);

/* ---- one request, one response ----------------------------------------- */

typedef struct conn {
    int fd, port;
    hm_http_resp_parser p;
    char buf[1 << 16];
    size_t off, len; /* buf[off, len): received, not parsed yet */
} conn;

typedef struct resp {
    int status;
    char head[8192]; /* raw status line and headers */
    char body[1 << 16];
    size_t body_len;
    char cookie[1024]; /* first Set-Cookie value, "" if none */
    char ctype[256];
    bool keep_alive;
} resp;

conn *conn_open(int port);
void conn_close(conn *c);
/* Reads one response (head_req: it answers a HEAD). */
void read_resp(conn *c, bool head_req, resp *r);
/* Sends METHOD target with Host, the extra header lines (each ending in
 * CRLF) and a body (Content-Length when non-NULL), then reads the response. */
void conn_req(conn *c, const char *method, const char *target, const char *extra, const char *body,
              resp *r);
/* The same on a fresh connection. */
void req1(int port, const char *method, const char *target, const char *extra, const char *body,
          resp *r);
/* The response has the header line "Name: value" exactly. */
bool has_header(const resp *r, const char *line);
/* The X-Via-Worker value in a response head (-1 if none). */
int via_worker(const char *head);

void copy_str(char *dst, size_t cap, const char *s, size_t n);
/* encodeURIComponent(). */
void url_encode(const char *s, char *out, size_t cap);
bool is_hex(const char *s, size_t n);

/* ---- an SSE client ------------------------------------------------------ */

typedef struct sse {
    int fd;
    hm_http_resp_parser p;
    char head[8192];
    size_t head_len;
    bool ended; /* the response body ended, or the connection */
    char *data; /* decoded body */
    size_t len, cap;
} sse;

/* GET /_sse?datastar={"via_ctx":ctx,...} (ctx NULL: no query). */
sse *sse_open(int port, const char *ctx, const char *cookie_line);
/* GET /_sse?datastar=<json, URL-encoded> (json NULL: no query). */
sse *sse_open_query(int port, const char *json, const char *cookie_line);
/* Reads until until_ms or the body ends; false on timeout. */
bool sse_pump(sse *s, int64_t until_ms);
/* Reads until the body ends (or IO_TIMEOUT_MS passes: a failure). */
void sse_read_to_end(sse *s);
/* Events received so far. */
size_t sse_count(const sse *s);
/* Waits until at least n events arrived; returns how many did. */
size_t sse_wait(sse *s, size_t n, int timeout_ms);
/* Copies event i (without its blank line) into out. */
void sse_event(const sse *s, size_t i, char *out, size_t cap);
void sse_close(sse *s);
/* The response's status code. */
int status_of(const sse *s);
bool sse_has_header(const sse *s, const char *line);

/* ---- php-via steps (bench_app_steps.c) ---------------------------------- */

typedef struct page {
    char ctx[128]; /* "/bench/counter_/<hex>" */
    char hex[17];
    char session[128];    /* the Set-Cookie value's via_session_id */
    char cookie_hdr[256]; /* "Cookie: via_session_id=...\r\n" */
} page;

/* The sync event of /bench/counter's view. */
extern const char ELEMENTS_EVENT[];

/* GET /bench/counter with an optional Cookie line; checks the whole page
 * (meta tag, view, shell, the session cookie and its expires). */
void get_page(int port, const char *cookie_line, page *pg);
/* GET any route: the page's context and session; the response in *r. */
void get_route(int port, const char *route, const char *cookie_line, page *pg, resp *r);
/* /bench/counter's count wire id. */
void wire_id(const page *pg, char *out, size_t cap);
/* A TAB signal's wire id: name + "_" + sanitized route + "__" + hex. */
void wire_of(const page *pg, const char *name, char *out, size_t cap);
/* POST /_action/<id> with {"via_ctx":ctx[, count wire id: count >= 0]}. */
void action_on(conn *c, const char *id, const page *pg, const char *extra, long long count,
               resp *r);
void action(int port, const char *id, const page *pg, const char *extra, long long count, resp *r);
/* POST /_action/<id> with {"via_ctx":ctx<fields>} on c; must answer 200. */
void act(conn *c, const char *id, const page *pg, const char *fields, resp *r);
/* GET /_health (checked: 200, JSON, no-store). */
json_t *health(int port);
/* /_health's connections.<what> ("contexts" or "sse"). */
long long health_count(int port, const char *what);
/* Waits until /_health's connections.<what> is want (IO_TIMEOUT_MS). */
void wait_health_count(int port, const char *what, long long want);
/* A stream whose client closed is noticed at its next write, as in
 * php-via: fires action_id on pg (each must answer 200) until /_health
 * counts want SSE streams; returns how many actions that took. */
int notice_closed_streams(int port, const page *pg, const char *action_id, long long want);

/* The value of `wire` in a datastar-patch-signals event. */
long long signal_in(const char *ev, const char *wire);
/* The signals object of a datastar-patch-signals event. */
json_t *signals_of(const char *ev);
/* An integer signal of the page in a signals object. */
long long int_of(json_t *sig, const page *pg, const char *name);
/* A datastar-patch-elements event's "elements" lines joined with \n into
 * out; returns the number of those lines. *selector gets the selector
 * line ("" when none). */
int elements_of(const char *ev, char *out, size_t cap, char *selector, size_t scap);
/* The row label (1-based) of the table line holding the focus outline. */
int focus_row_label(const char *html);
/* The table inside <div id="sheet">…</div> must pass hammer's own check. */
void check_sheet_div(const char *html);
/* The seeded database at path: WAL, 26000 cells, known values (cell A1:
 * cell00). */
void check_db(const char *path, const char *cell00);

/* The HTTP framing every front end must get right (a worker, the
 * reactor, TLS): malformed 400 and close, 431, 413, pipelining,
 * 100-continue; each answer from the worker fd dispatch picks (the
 * connection's id % workers; a server with fd or session dispatch, or one
 * worker, whose only client is this test). */
void check_http_framing(int port, int workers);

/* ---- workers (bench_app_steps.c) ----------------------------------------- */

/* crc32(sid) % n: the worker session dispatch picks. */
int crc_worker(const char *sid, int n);
/* A session id (32 hex digits) that session dispatch sends to worker w of
 * n; seed varies the search. */
void session_for_worker(int w, int n, unsigned seed, char *sid, size_t cap);
/* GET /_health with a Cookie line; the answering worker in *worker. */
json_t *health_with(int port, const char *cookie_line, int *worker);
/* workers[i].what from /_health. */
long long worker_count(json_t *h, int i, const char *what);
/* Two consecutive free ports below the ephemeral range. */
int free_port_pair(void);
bool port_open(int port);
/* Waits until both ports of a --processes 2 run accept connections. */
void wait_ports(int base, int n);

/* ---- the test PKI (bench_app_steps.c) ------------------------------------ */

/* Made by make_pki() in g_tmp/tls: ca.pem, and server.pem + server.key it
 * signed for 127.0.0.1 and localhost; other.key matches nothing. */
extern char g_ca[320], g_cert[320], g_key[320], g_other_key[320];
void make_pki(void);
/* A client context trusting only the test CA: TLS 1.2 to max_version
 * (0: the newest), ALPN `alpn` (wire format; NULL: http/1.1), with tickets
 * unless no_tickets (TLS 1.2 then resumes by session id). */
SSL_CTX *client_ctx(int max_version, const char *alpn, size_t alpn_len, bool no_tickets);
/* Connections that do not speak TLS (or not acceptably) just get closed,
 * perhaps after an alert, never answered in HTTP, and the server serves
 * on: plain HTTP, garbage, cut hellos, an h2-only ALPN offer; no ALPN
 * offer at all is HTTP/1.1. */
void check_tls_bad_clients(int port);
/* A first connection's session resumes on the next two: TLS 1.3 tickets
 * (max_version 0), TLS 1.2 tickets, TLS 1.2 session ids (no_tickets). */
void check_tls_resume(int port, int max_version, bool no_tickets);

#endif
