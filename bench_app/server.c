/* server.c — bench_app's HTTP/1.1 plumbing on the engine: the listener, an
 * accept coroutine, one coroutine per connection, response writing, the
 * ticker that runs context cleanup and stops the loop, and the run: one
 * loop, or worker threads behind a reactor (--workers N).
 *
 * A connection coroutine reads into its record's 16 KiB buffer and feeds
 * hm_http_req_parser; each complete request goes to handlers.c, whose responses
 * accumulate in c->out. c->out is written in one call whenever the loop
 * needs more input, so pipelined requests answered from one read share a
 * write and a lone request's response is always one write. On epoll the
 * coroutine yields before each read, so a client that always has its next
 * request ready cannot starve the SSE streams its actions wake. The idle timeout
 * is the deadline of every read (and of writes, so a client that stops
 * reading cannot pin a coroutine). Malformed input answers 400, an oversized
 * header section 431, an oversized body 413, then the connection closes
 * after a short lingering drain (so the peer reads the answer rather than a
 * reset).
 *
 * Every response head written here carries X-Via-Worker: the worker's id
 * (on the reactor's own answers, the connection's fallback worker).
 *
 * TLS (options tls_cert/tls_key): the run loads one hm_tls_config; the app
 * that owns the client connections (the only worker, or the reactor) gives
 * each connection record a hm_tls, kept while the record is pooled. The
 * connection coroutine runs the handshake (hm_tls_accept, within the idle
 * timeout) before its first read, and a failure just closes the
 * connection. Every client read and write then goes through ba_read /
 * ba_write (ba_flush included); a coroutine watching a stream's
 * peer reads with ba_watch_read, which never writes, so the connection
 * coroutine stays the socket's only writer. A connection closed by us
 * after a complete answer (BA_CLOSE, error answers) says close_notify.
 *
 * Workers: with workers = 1 the one ba_app listens on the public port and
 * serves on the calling thread. With N > 1 each worker is a ba_app with its
 * own loop on its own thread, listening on 127.0.0.1:0 (an "internal" app:
 * no idle timeout, no 100 Continue, no announcement); once all of them
 * listen, a reactor ba_app on the calling thread listens on the public port
 * and hands each parsed request, as raw bytes, to a worker (reactor.c). The
 * spreadsheet database is opened (and seeded) once by the run before the
 * workers start; each worker then opens its own handle on that file.
 *
 * Stopping: hm_bench_app_request_stop() only sets an atomic flag. Each
 * loop's ticker (every 20 ms) notices it (or the run's abort flag), marks
 * its app stopping and cancels the acceptor and every connection coroutine
 * (again each tick, for any that were not suspended in a cancellable
 * operation at that moment); each checks the stopping flag before blocking
 * again, so all of them finish and hm_loop_run() returns. The reactor's
 * end sets the abort flag, so the workers end too, and the run joins them.
 *
 * Memory: the ba_apps are hm_alloc'd per run (the stop flag is static: a
 * signal handler must reach it; one run per process). Connection records
 * are hm_alloc'd, recycled through a pool of up to 256 per app, and all
 * freed when the run ends; each app is created and freed on its own
 * thread. */
#include "bench_app/internal.h"
#include "proto/h2.h"

#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BA_TICK_NS (20 * 1000000LL)
#define BA_POOL_MAX 256
#define BA_FAT_BYTES ((size_t)256 << 10) /* records with bigger buffers are not pooled */
#define BA_FLUSH_AT ((size_t)64 << 10)   /* pipelining: write once this much is pending */
#define BA_LINGER_NS (500 * 1000000LL)
#define BA_LINGER_BYTES ((size_t)1 << 20)

static atomic_int g_stop;
static bool g_running;

/* Start-up hand-shake of a multi-worker run: each worker reports its
 * loopback port (> 0) or why it could not start (< 0) into g_ports. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int *g_ports;
static int g_reported;

/* ---- buffers ------------------------------------------------------------ */

int ba_buf_reserve(ba_buf *b, size_t extra)
{
    return hm_buf_reserve(b, extra);
}

int ba_buf_append(ba_buf *b, const void *p, size_t n)
{
    return hm_buf_append(b, p, n);
}

void ba_buf_free(ba_buf *b)
{
    hm_buf_free(b);
}

/* ---- options, signals, stop --------------------------------------------- */

void hm_bench_app_defaults(hm_bench_app_options *o)
{
    *o = (hm_bench_app_options){
        .host = "127.0.0.1",
        .port = HM_BENCH_APP_DEFAULT_PORT,
        .backend = HM_BACKEND_AUTO,
        .cleanup_delay_ms = 5000,
        .revival_window_ms = 600000,
        .idle_timeout_ms = 60000,
        .header_timeout_ms = 10000,
        .dev_mode = true,
        .workers = 1,
    };
}

void hm_bench_app_request_stop(void)
{
    atomic_store_explicit(&g_stop, 1, memory_order_relaxed);
}

static void on_stop_signal(int sig)
{
    (void)sig;
    hm_bench_app_request_stop();
}

int hm_bench_app_install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop_signal;
    if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0) return -errno;
    sa.sa_handler = SIG_IGN; /* sends use MSG_NOSIGNAL already; this covers anything else */
    if (sigaction(SIGPIPE, &sa, NULL) < 0) return -errno;
    return 0;
}

int64_t ba_deadline(const ba_app *app)
{
    return app->internal ? 0 : hm_now_ns() + app->idle_ns;
}

static bool stop_requested(const ba_app *app)
{
    return atomic_load_explicit(&g_stop, memory_order_relaxed) ||
           atomic_load_explicit(&app->run->abort, memory_order_relaxed);
}

/* ---- responses ------------------------------------------------------------ */

/* The Date header's value (IMF-fixdate), formatted once per second. */
static const char *http_date(ba_app *app)
{
    time_t now = time(NULL);
    if (now != app->date_sec || !app->date[0]) {
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(app->date, sizeof(app->date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
        app->date_sec = now;
    }
    return app->date;
}

/* Appends a response head; content_length as hm_http_write_response_head.
 * Headers go out in OpenSwoole's order: the handler's own (Content-Type
 * among them when it set one, Set-Cookie after them), Connection (every
 * response says keep-alive or close, as OpenSwoole's do; this also keeps
 * HTTP/1.0 keep-alive clients working), the default Content-Type: text/html
 * when the handler set none, Date, then bench_app's X-Via-Worker, then the
 * framing (Content-Length or Transfer-Encoding). */
static int write_head(ba_conn *c, int status, const hm_http_header *h, size_t n,
                      long long content_length)
{
    hm_http_header all[16];
    if (n + 4 > HM_ARRAY_LEN(all)) return -EINVAL;
    if (n) memcpy(all, h, n * sizeof(*h));
    bool has_type = false;
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(h[i].name, "Content-Type") == 0) has_type = true;
    all[n++] = (hm_http_header){"Connection", c->keep_alive ? "keep-alive" : "close"};
    if (!has_type) all[n++] = (hm_http_header){"Content-Type", "text/html"};
    all[n++] = (hm_http_header){"Date", http_date(c->app)};
    all[n++] = (hm_http_header){"X-Via-Worker", c->via_id};
    if (c->h2s) return ba_h2_head(c, status, all, n, content_length);
    size_t want = 512;
    for (;;) {
        int rc = ba_buf_reserve(&c->out, want);
        if (rc) return rc;
        /* keep_alive true: the Connection header is already in `all`. */
        ssize_t k =
            hm_http_write_response_head(c->out.data + c->out.len, c->out.cap - c->out.len - 1,
                                        status, NULL, all, n, content_length, true);
        if (k >= 0) {
            c->out.len += (size_t)k;
            c->out.data[c->out.len] = '\0';
            return 0;
        }
        if (k != -ENOSPC || want > ((size_t)1 << 20)) return (int)k;
        want = (c->out.cap - c->out.len) * 2;
    }
}

int ba_respond(ba_conn *c, int status, const hm_http_header *h, size_t n, const char *body,
               size_t blen, bool head_only)
{
    int rc = write_head(c, status, h, n, (long long)blen);
    if (rc == 0 && !head_only) rc = ba_buf_append(&c->out, body, blen);
    return rc;
}

int ba_respond_chunked_head(ba_conn *c, int status, const hm_http_header *h, size_t n)
{
    return write_head(c, status, h, n, HM_HTTP_LEN_CHUNKED);
}

ssize_t ba_read(ba_conn *c, void *buf, size_t len, int64_t deadline)
{
    return c->tls ? hm_tls_read(c->tls, c->sock, buf, len, deadline)
                  : hm_sock_read(c->sock, buf, len, deadline);
}

ssize_t ba_write(ba_conn *c, const void *buf, size_t len, int64_t deadline)
{
    if (c->h2s) return ba_h2_write(c, buf, len, deadline);
    if (!len) return 0; /* SSL_write refuses empty writes */
    return c->tls ? hm_tls_write(c->tls, c->sock, buf, len, deadline, NULL)
                  : hm_sock_write(c->sock, buf, len, deadline, NULL);
}

bool ba_send_now(ba_conn *c, ba_buf *b)
{
    ssize_t k = send(hm_sock_fd(c->sock), b->data, b->len, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (k < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    b->len -= (size_t)k;
    memmove(b->data, b->data + k, b->len);
    return true;
}

ssize_t ba_watch_read(ba_conn *c, void *buf, size_t len)
{
    return ba_read_quiet(c, buf, len, 0);
}

ssize_t ba_read_quiet(ba_conn *c, void *buf, size_t len, int64_t deadline)
{
    return c->tls ? hm_tls_read_quiet(c->tls, c->sock, buf, len, deadline)
                  : hm_sock_read(c->sock, buf, len, deadline);
}

int ba_body_chunk(const ba_conn *c, ba_buf *out, const char *p, size_t n)
{
    if (n == 0) return 0; /* an empty chunk would end the body */
    if (c->h2s) return ba_buf_append(out, p, n);
    char head[24];
    ssize_t hl = hm_http_write_chunk_head(head, sizeof(head), n);
    if (hl < 0) return (int)hl;
    int rc = ba_buf_reserve(out, (size_t)hl + n + 2);
    if (rc == 0) rc = ba_buf_append(out, head, (size_t)hl);
    if (rc == 0) rc = ba_buf_append(out, p, n);
    if (rc == 0) rc = ba_buf_append(out, "\r\n", 2);
    return rc;
}

int ba_body_end(ba_conn *c)
{
    return c->h2s ? 0 : ba_buf_lit(&c->out, "0\r\n\r\n");
}

int ba_flush(ba_conn *c)
{
    if (!c->out.len) return 0;
    ssize_t r = ba_write(c, c->out.data, c->out.len, ba_deadline(c->app));
    c->out.len = 0;
    return r < 0 ? (int)r : 0;
}

/* ---- connection records ------------------------------------------------- */

static void conn_free(ba_conn *c);

ba_conn *ba_conn_get(ba_app *app, bool new_conn)
{
    ba_conn *c = app->pool;
    if (c) {
        app->pool = c->next;
        app->pool_len--;
        hm_http_req_reset(&c->req);
    } else {
        c = hm_calloc(1, sizeof(*c));
        if (!c) return NULL;
        hm_http_req_init(&c->req, &app->limits);
    }
    if (app->tls && !c->tls && hm_tls_create(&c->tls, app->tls, NULL) < 0) {
        conn_free(c);
        return NULL;
    }
    c->app = app;
    c->prev = c->next = NULL;
    c->sock = NULL;
    if (new_conn) c->id = ++app->conn_seq;
    memcpy(c->via_id, app->via_id, sizeof(c->via_id));
    c->co = c->reader = NULL;
    c->reader_stop = c->peer_gone = c->keep_alive = c->fat = false;
    c->h2 = NULL;
    c->h2s = NULL;
    c->out.len = c->scratch.len = c->ev.len = c->raw.len = 0;
    return c;
}

static void conn_free(ba_conn *c)
{
    hm_chan_destroy(c->bell);
    hm_http_req_free(&c->req);
    ba_buf_free(&c->out);
    ba_buf_free(&c->scratch);
    ba_buf_free(&c->ev);
    ba_buf_free(&c->raw);
    ba_reactor_conn_free(c);
    hm_tls_free(c->tls);
    hm_free(c);
}

void ba_conn_put(ba_app *app, ba_conn *c)
{
    if (c->fat || app->pool_len >= BA_POOL_MAX || c->out.cap > BA_FAT_BYTES ||
        c->scratch.cap > BA_FAT_BYTES || c->ev.cap > BA_FAT_BYTES || c->raw.cap > BA_FAT_BYTES) {
        conn_free(c);
        return;
    }
    c->next = app->pool;
    app->pool = c;
    app->pool_len++;
}

void ba_conn_link(ba_app *app, ba_conn *c)
{
    c->prev = NULL;
    c->next = app->conns;
    if (app->conns) app->conns->prev = c;
    app->conns = c;
    app->n_conns++;
}

void ba_conn_unlink(ba_app *app, ba_conn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        app->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    c->prev = c->next = NULL;
    app->n_conns--;
}

/* ---- the connection coroutine -------------------------------------------- */

void ba_linger_close(ba_conn *c, size_t max_bytes)
{
    /* TLS: close_notify first; what follows is read raw and dropped. */
    if (c->tls) hm_tls_close_notify(c->tls, c->sock, ba_deadline(c->app));
    shutdown(hm_sock_fd(c->sock), SHUT_WR);
    int64_t until = hm_now_ns() + BA_LINGER_NS;
    size_t total = 0;
    while (total < max_bytes && !c->app->stopping) {
        ssize_t n = hm_sock_read(c->sock, c->rbuf, sizeof(c->rbuf), until);
        if (n <= 0) break;
        total += (size_t)n;
    }
}

static void respond_parse_error(ba_conn *c, int err)
{
    int status = 400;
    /* Both limits report -HM_ETOOBIG; the method is known only once the
     * header section is complete, so then it was the body. */
    if (err == -HM_ETOOBIG)
        status = c->req.method_name[0] ? 413 : 431;
    else if (err == -ENOMEM)
        status = 500;
    c->keep_alive = false;
    const char *text = hm_http_reason(status);
    const hm_http_header h[] = {{"Content-Type", "text/plain; charset=utf-8"}};
    if (ba_respond(c, status, h, 1, text, strlen(text), false) == 0 && ba_flush(c) == 0)
        ba_linger_close(c, BA_LINGER_BYTES);
}

/* The request being received asked for "Expect: 100-continue" and its
 * header section is complete (method known). */
static bool wants_continue(const ba_conn *c)
{
    if (!c->req.method_name[0] || c->req.http_minor == 0) return false;
    const char *e = hm_http_req_header(&c->req, "expect");
    return e && strcasecmp(e, "100-continue") == 0;
}

static void conn_main(void *arg)
{
    ba_conn *c = arg;
    ba_app *app = c->app;
    size_t off = 0, len = 0; /* rbuf[off, len) is not fed yet */
    bool partial = false, continue_sent = false;
    /* When the header section of the request begun must be complete (0:
     * none begun, or a worker behind the reactor): a slow client cannot
     * keep a connection by sending a byte before each idle timeout. */
    int64_t headers_by = 0;
    int end = BA_DROP;
    /* TLS: the handshake, within the idle timeout; a client that is not
     * speaking TLS (or gives up) just loses its connection. */
    bool live =
        !c->tls || (!app->stopping && hm_tls_accept(c->tls, c->sock, ba_deadline(app)) == 0);
    /* --http2: h2 when ALPN agreed on it; on cleartext, a connection that
     * opens with the client preface is h2c (prior knowledge). */
    if (live && app->opt.http2 && c->tls && hm_tls_selected_h2(c->tls)) {
        ba_h2_serve(c, NULL, 0, hm_now_ns() + app->header_ns);
        live = false;
    } else if (live && app->opt.http2 && !c->tls) {
        /* The preface is a header section too: due header_ns after its
         * first byte (the same deadline HTTP/1.1 goes on with). */
        for (;;) {
            int64_t deadline = ba_earlier(ba_deadline(app), headers_by);
            ssize_t n = ba_read(c, c->rbuf + len, sizeof(c->rbuf) - len, deadline);
            if (n <= 0) {
                live = false;
                break;
            }
            len += (size_t)n;
            if (!headers_by && !app->internal) headers_by = hm_now_ns() + app->header_ns;
            size_t m = len < HM_H2_PREFACE_LEN ? len : HM_H2_PREFACE_LEN;
            if (memcmp(c->rbuf, HM_H2_PREFACE, m) != 0) break; /* HTTP/1.1, from rbuf */
            if (len >= HM_H2_PREFACE_LEN) {
                ba_h2_serve(c, c->rbuf, len, headers_by);
                live = false;
                break;
            }
        }
    }
    while (live) {
        if (off == len) {
            off = len = 0;
            if (ba_flush(c) < 0 || app->stopping) break;
            /* A worker behind the reactor never sends one: the reactor
             * did, and forwards only whole requests. */
            if (partial && !continue_sent && !app->internal && wants_continue(c)) {
                static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
                if (ba_write(c, cont, sizeof(cont) - 1, ba_deadline(app)) < 0) break;
                continue_sent = true;
            }
            /* epoll reads try the system call first and suspend only on
             * EAGAIN, so a client that always has its next request in
             * flight would keep this coroutine running and starve the rest
             * (an SSE stream woken by our action would fall 50 patches
             * behind and drop them). Let every ready coroutine run between
             * reads, as OpenSwoole's reactor does between requests;
             * io_uring reads always suspend. */
            if (app->yield_reads) hm_coro_yield();
            ssize_t n =
                ba_read(c, c->rbuf, sizeof(c->rbuf), ba_earlier(ba_deadline(app), headers_by));
            /* EOF, idle or header timeout, reset, or cancelled by the stop */
            if (n <= 0) break;
            len = (size_t)n;
        }
        size_t consumed = 0;
        int rc = hm_http_req_feed(&c->req, c->rbuf + off, len - off, &consumed);
        /* The reactor forwards the request's bytes as they came. */
        if (rc >= 0 && app->keep_raw && ba_buf_append(&c->raw, c->rbuf + off, consumed) < 0)
            rc = -ENOMEM;
        if (rc == HM_HTTP_NEED_MORE) {
            off = len;
            partial = true;
            if (!headers_by && !app->internal && !c->req.method_name[0])
                headers_by = hm_now_ns() + app->header_ns;
            continue;
        }
        if (rc < 0) {
            respond_parse_error(c, rc);
            break;
        }
        off += consumed;
        partial = continue_sent = false;
        headers_by = 0;
        /* After an upgrade request the bytes that follow are not HTTP. */
        c->keep_alive = c->req.keep_alive && !c->req.upgrade && !app->stopping;
        if (c->req.body_len > BA_FAT_BYTES) c->fat = true;
        if (app->ws) atomic_fetch_add_explicit(&app->ws->requests, 1, memory_order_relaxed);
        end = app->handle(c);
        c->raw.len = 0;
        if (end != BA_NEXT) break;
        if (!c->keep_alive) {
            end = BA_CLOSE;
            break;
        }
        end = BA_DROP;
        if (c->out.len >= BA_FLUSH_AT && ba_flush(c) < 0) break;
    }
    if (end == BA_CLOSE && ba_flush(c) == 0 && c->tls)
        hm_tls_close_notify(c->tls, c->sock, ba_deadline(app));
    if (c->tls) hm_tls_reset(c->tls);
    hm_sock_close(c->sock);
    c->sock = NULL;
    ba_conn_unlink(app, c);
    ba_conn_put(app, c);
}

/* ---- acceptor and ticker ------------------------------------------------- */

static void accept_main(void *arg)
{
    ba_app *app = arg;
    bool warned = false;
    while (!app->stopping) {
        hm_sock *s;
        int rc = hm_sock_accept(app->listener, &s, 0);
        if (rc < 0) {
            if (app->stopping) break;
            if (rc != -ECANCELED && !warned && !app->opt.quiet) {
                fprintf(stderr, "bench_app: accept: %s (retrying)\n", hm_strerror(rc));
                warned = true;
            }
            /* Out of descriptors or memory: back off instead of spinning. */
            hm_coro_sleep(10 * 1000000LL);
            continue;
        }
        if (app->stopping) {
            hm_sock_close(s);
            break;
        }
        ba_conn *c = ba_conn_get(app, true);
        if (!c) {
            hm_sock_close(s);
            continue;
        }
        c->sock = s;
        if (app->rx) ba_reactor_conn_start(c);
        ba_conn_link(app, c);
        if (hm_coro_spawn(app->loop, conn_main, c, &c->co) < 0) {
            ba_conn_unlink(app, c);
            hm_sock_close(s);
            ba_conn_put(app, c);
        }
    }
    hm_sock_close(app->listener);
    app->listener = NULL;
    app->acceptor_done = true;
}

static void ticker_main(void *arg)
{
    ba_app *app = arg;
    for (;;) {
        hm_coro_sleep(BA_TICK_NS);
        if (!app->stopping && stop_requested(app)) app->stopping = true;
        if (!app->stopping) {
            if (app->worker >= 0) ba_via_tick(app, hm_now_ns());
            ba_leak_tick(app, hm_now_ns());
            continue;
        }
        /* -ESRCH (not suspended in an operation) is fine: that coroutine is
         * ready to run and checks app->stopping before it blocks again. */
        if (!app->acceptor_done) hm_coro_cancel(app->acceptor);
        for (ba_conn *c = app->conns; c; c = c->next) {
            hm_coro_cancel(c->co);
            if (c->reader) hm_coro_cancel(c->reader);
        }
        if (app->acceptor_done && !app->conns) break;
    }
}

/* ---- the run ---------------------------------------------------------------- */

static int resolve(const char *host, int port, struct sockaddr_storage *ss, socklen_t *len)
{
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", port);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int rc = getaddrinfo(host, portstr, &hints, &res);
    if (rc != 0) {
        if (rc == EAI_MEMORY) return -ENOMEM;
        if (rc == EAI_AGAIN) return -EAGAIN;
        if (rc == EAI_SYSTEM) return errno ? -errno : -ENXIO;
        return -ENXIO;
    }
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

/* The port goes to ready_fd first, so a reader of the first line of a
 * shared stdout gets the port. */
static int announce(const ba_app *app, int ready_fd)
{
    if (ready_fd >= 0) {
        char line[16];
        int n = snprintf(line, sizeof(line), "%d\n", app->port);
        for (int done = 0; done < n;) {
            ssize_t w = write(ready_fd, line + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) return -errno;
            done += (int)w;
        }
    }
    if (!app->opt.quiet) {
        bool v6 = strchr(app->opt.host, ':') != NULL;
        printf("bench_app listening on %s://%s%s%s:%d\n", app->tls ? "https" : "http",
               v6 ? "[" : "", app->opt.host, v6 ? "]" : "", app->port);
        fflush(stdout);
    }
    return 0;
}

static int check_options(const hm_bench_app_options *o)
{
    if (o->port < 0 || o->port > 65535) return -EINVAL;
    if (o->workers < 1 || o->workers > BA_MAX_WORKERS) return -EINVAL;
    if (o->worker_id < 0 || o->worker_id > (1 << 20)) return -EINVAL;
    ba_dispatch d;
    if (ba_dispatch_parse(o->dispatch, &d) < 0) return -EINVAL;
    if (o->cleanup_delay_ms < 0 || o->sse_poll_ms < 0 || o->idle_timeout_ms <= 0 ||
        o->header_timeout_ms < 0 || o->revival_window_ms < 0)
        return -EINVAL;
    /* Keep the nanosecond arithmetic far from overflow (~ 100 days). */
    const int64_t max_ms = 10LL * 1000 * 1000 * 1000;
    if (o->cleanup_delay_ms > max_ms || o->sse_poll_ms > max_ms || o->idle_timeout_ms > max_ms ||
        o->header_timeout_ms > max_ms || o->revival_window_ms > max_ms)
        return -EINVAL;
    if (o->backend != HM_BACKEND_AUTO && o->backend != HM_BACKEND_IO_URING &&
        o->backend != HM_BACKEND_EPOLL)
        return -EINVAL;
    return 0;
}

static void free_pool(ba_app *app)
{
    while (app->pool) {
        ba_conn *c = app->pool;
        app->pool = c->next;
        conn_free(c);
    }
    app->pool_len = 0;
}

/* A ba_app for worker index `worker` (-1: the reactor) of the run. */
static void app_prepare(ba_app *app, const hm_bench_app_options *opt, ba_run *run, int worker)
{
    memset(app, 0, sizeof(*app));
    app->opt = *opt;
    app->run = run;
    app->worker = worker;
    app->tls = run->tls; /* run_multi() takes it back from the workers */
    if (worker >= 0) {
        app->ws = &run->stats[worker];
        snprintf(app->via_id, sizeof(app->via_id), "%d", run->first_id + worker);
        app->handle = ba_via_handle;
    } else {
        app->keep_raw = true;
        app->handle = ba_reactor_handle;
    }
    app->rnd_pos = sizeof(app->rnd); /* empty: the first id refills it */
    app->idle_ns = opt->idle_timeout_ms * 1000000;
    app->header_ns = (opt->header_timeout_ms ? opt->header_timeout_ms : 10000) * 1000000;
    app->poll_ns = opt->sse_poll_ms * 1000000;
    app->cleanup_ns = opt->cleanup_delay_ms * 1000000;
    app->limits.max_header_bytes = opt->max_header_bytes ? opt->max_header_bytes : (64 << 10);
    app->limits.max_body_bytes = opt->max_body_bytes ? opt->max_body_bytes : (1 << 20);
    app->max_signal_bytes = opt->max_signal_bytes ? opt->max_signal_bytes : (64 << 10);
}

/* On the app's own thread: its loop, a worker's php-via state, the
 * listener. 0 or a negative errno; app_finish() undoes a partial start. */
static int app_start(ba_app *app, const struct sockaddr *sa, socklen_t len)
{
    hm_loop_options lo = {.backend = app->opt.backend};
    int rc = hm_loop_create(&app->loop, &lo);
    if (rc < 0) {
        app->loop = NULL;
        return rc;
    }
    app->yield_reads = hm_loop_backend(app->loop) == HM_BACKEND_EPOLL;
    if (app->worker >= 0) rc = ba_via_init(app);
    if (rc == 0) rc = hm_sock_listen(&app->listener, sa, len, 4096);
    if (rc == 0) {
        app->port = hm_sock_local_port(app->listener);
        if (app->port < 0) rc = app->port;
    }
    return rc;
}

/* Spawns the acceptor and the ticker and runs the loop until it stops. */
static int app_serve(ba_app *app)
{
    int rc = hm_coro_spawn(app->loop, accept_main, app, &app->acceptor);
    if (rc == 0) {
        rc = hm_coro_spawn(app->loop, ticker_main, app, NULL);
        if (rc < 0) {
            app->stopping = true;
            hm_coro_cancel(app->acceptor); /* not started yet: it sees stopping */
        }
    }
    if (rc == 0 || app->acceptor) {
        int run_rc = hm_loop_run(app->loop);
        if (rc == 0) rc = run_rc;
    }
    return rc;
}

/* Releases what app_start() and app_serve() made, on the app's thread. */
static void app_finish(ba_app *app)
{
    /* Only after a failed hm_loop_run() can records still be live. */
    while (app->conns) {
        ba_conn *c = app->conns;
        ba_conn_unlink(app, c);
        hm_sock_close(c->sock);
        conn_free(c);
    }
    if (app->listener) { /* the acceptor never ran */
        hm_sock_close(app->listener);
        app->listener = NULL;
    }
    if (app->worker >= 0)
        ba_via_free(app);
    else
        ba_reactor_free(app);
    free_pool(app);
    if (app->loop) hm_loop_destroy(app->loop);
    app->loop = NULL;
}

/* Runs one ba_app that listens on the public address (workers = 1). */
static int run_single(ba_app *app, const struct sockaddr *sa, socklen_t len, int ready_fd)
{
    int rc = app_start(app, sa, len);
    if (rc == 0) rc = announce(app, ready_fd);
    if (rc == 0) rc = app_serve(app);
    app_finish(app);
    return rc;
}

typedef struct worker_thread {
    ba_app *app;
    pthread_t tid;
    int rc;
} worker_thread;

static void report_port(int worker, int port_or_err)
{
    pthread_mutex_lock(&g_mu);
    g_ports[worker] = port_or_err;
    g_reported++;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
}

/* A worker's thread: listens on 127.0.0.1:0, reports, serves. */
static void *worker_main(void *arg)
{
    worker_thread *t = arg;
    ba_app *app = t->app;
    struct sockaddr_in lo = {.sin_family = AF_INET};
    lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rc = app_start(app, (struct sockaddr *)&lo, sizeof(lo));
    report_port(app->worker, rc < 0 ? rc : app->port);
    if (rc == 0) rc = app_serve(app);
    app_finish(app);
    t->rc = rc;
    return NULL;
}

/* workers > 1: the worker threads, then the reactor on this thread. */
static int run_multi(ba_app *apps, ba_run *run, const hm_bench_app_options *opt,
                     const struct sockaddr *sa, socklen_t len, int ready_fd)
{
    int n = run->n_workers;
    ba_dispatch mode;
    ba_dispatch_parse(opt->dispatch, &mode); /* checked already */
    worker_thread *ts = hm_calloc((size_t)n, sizeof(*ts));
    int *ports = hm_calloc((size_t)n, sizeof(*ports));
    if (!ts || !ports) {
        hm_free(ts);
        hm_free(ports);
        return -ENOMEM;
    }
    /* The database once, seeded before any worker opens it; the workers
     * share the file, as php-via's workers share the handle. */
    ba_sheet *master = NULL;
    int rc = ba_sheet_open(opt->db_path, &master);
    hm_bench_app_options wopt = *opt;
    if (rc == 0) wopt.db_path = ba_sheet_path(master);

    pthread_mutex_lock(&g_mu);
    g_ports = ports;
    g_reported = 0;
    pthread_mutex_unlock(&g_mu);
    int started = 0;
    for (int w = 0; w < n && rc == 0; w++) {
        app_prepare(&apps[w], &wopt, run, w);
        apps[w].internal = true;
        apps[w].tls = NULL; /* TLS ends at the reactor */
        ts[w].app = &apps[w];
        int e = pthread_create(&ts[w].tid, NULL, worker_main, &ts[w]);
        if (e) {
            rc = -e;
            break;
        }
        started++;
    }
    pthread_mutex_lock(&g_mu);
    while (g_reported < started)
        pthread_cond_wait(&g_cv, &g_mu);
    for (int w = 0; w < started && rc == 0; w++)
        if (ports[w] < 0) rc = ports[w];
    pthread_mutex_unlock(&g_mu);

    if (rc == 0) {
        ba_app *rx = &apps[n];
        app_prepare(rx, opt, run, -1);
        rc = ba_reactor_init(rx, ports, mode);
        if (rc == 0)
            rc = run_single(rx, sa, len, ready_fd);
        else
            app_finish(rx);
    }
    atomic_store(&run->abort, 1); /* the workers end with the reactor */
    for (int w = 0; w < started; w++) {
        pthread_join(ts[w].tid, NULL);
        if (rc == 0 && ts[w].rc < 0) rc = ts[w].rc;
    }
    pthread_mutex_lock(&g_mu);
    g_ports = NULL;
    pthread_mutex_unlock(&g_mu);
    ba_sheet_close(master); /* the last handle: a temporary database goes now */
    hm_free(ports);
    hm_free(ts);
    return rc;
}

int hm_bench_app_run(const hm_bench_app_options *o, int ready_fd)
{
    if (g_running) return -EBUSY;
    hm_bench_app_options opt;
    if (o)
        opt = *o;
    else
        hm_bench_app_defaults(&opt);
    if (!opt.host || !opt.host[0]) opt.host = "127.0.0.1";
    if (opt.workers == 0) opt.workers = 1;
    int rc = check_options(&opt);
    if (rc < 0) return rc;
    if (!opt.tls_cert != !opt.tls_key) {
        fprintf(stderr, "bench_app: TLS needs both a certificate and a key\n");
        return -EINVAL;
    }
    if (opt.http2 && opt.workers > 1) {
        /* php-via runs several workers with OpenSwoole's dispatch_mode 7,
         * and OpenSwoole refuses that mode with HTTP/2 at start. */
        fprintf(stderr, "bench_app: HTTP/2 needs --workers 1: php-via's multi-worker mode "
                        "(OpenSwoole's dispatch_mode 7) refuses HTTP/2 at start; run "
                        "--processes N behind a balancer instead\n");
        return -EINVAL;
    }

    struct sockaddr_storage ss;
    socklen_t sslen = 0;
    rc = resolve(opt.host, opt.port, &ss, &sslen);
    if (rc < 0) return rc;

    int n = opt.workers;
    ba_run run = {.n_workers = n, .first_id = opt.worker_id};
    if (opt.tls_cert) {
        char why[512];
        rc = hm_tls_server_config_create(&run.tls, opt.tls_cert, opt.tls_key, why, sizeof(why));
        if (rc < 0) {
            fprintf(stderr, "bench_app: %s\n", why);
            return rc;
        }
        if (opt.http2) hm_tls_server_config_allow_h2(run.tls);
    }
    run.stats = hm_calloc((size_t)n, sizeof(*run.stats));
    ba_app *apps = hm_calloc((size_t)n + 1, sizeof(*apps));
    if (!run.stats || !apps) {
        hm_free(run.stats);
        hm_free(apps);
        hm_tls_config_free(run.tls);
        return -ENOMEM;
    }
    g_running = true;
    if (n == 1) {
        app_prepare(&apps[0], &opt, &run, 0);
        rc = run_single(&apps[0], (struct sockaddr *)&ss, sslen, ready_fd);
    } else {
        rc = run_multi(apps, &run, &opt, (struct sockaddr *)&ss, sslen, ready_fd);
    }
    hm_free(apps);
    hm_free(run.stats);
    hm_tls_config_free(run.tls); /* every connection (and its SSL) is gone */
    atomic_store_explicit(&g_stop, 0, memory_order_relaxed);
    g_running = false;
    return rc;
}
