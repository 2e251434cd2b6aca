/* server.c — bench_app's HTTP/1.1 plumbing on the engine: the listener, an
 * accept coroutine, one coroutine per connection, response writing, and the
 * ticker that runs context cleanup and stops the loop.
 *
 * A connection coroutine reads into its record's 16 KiB buffer and feeds
 * hm_http_req_parser; each complete request goes to via.c, whose responses
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
 * Stopping: hm_bench_app_request_stop() only sets an atomic flag. The ticker
 * (every 20 ms) notices it, marks the app stopping and cancels the acceptor
 * and every connection coroutine (again each tick, for any that were not
 * suspended in a cancellable operation at that moment); each checks the
 * stopping flag before blocking again, so all of them finish and
 * hm_loop_run() returns.
 *
 * Memory: the run's state is the static g_app (a signal handler must reach
 * the stop flag; one run per process). Connection records are hm_alloc'd,
 * recycled through a pool of up to 256, and all freed when the run ends. */
#include "bench_app/internal.h"

#include <netdb.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define BA_TICK_NS (20 * 1000000LL)
#define BA_POOL_MAX 256
#define BA_FAT_BYTES ((size_t)256 << 10) /* records with bigger buffers are not pooled */
#define BA_FLUSH_AT ((size_t)64 << 10)   /* pipelining: write once this much is pending */
#define BA_LINGER_NS (500 * 1000000LL)
#define BA_LINGER_BYTES ((size_t)1 << 20)

static ba_app g_app;
static atomic_int g_stop;
static bool g_running;

/* ---- buffers ------------------------------------------------------------ */

int hm__ba_buf_reserve(ba_buf *b, size_t extra)
{
    if (extra > SIZE_MAX / 4 - b->len) return -ENOMEM;
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    char *p = hm_realloc(b->data, cap);
    if (!p) return -ENOMEM;
    b->data = p;
    b->cap = cap;
    return 0;
}

int hm__ba_buf_append(ba_buf *b, const void *p, size_t n)
{
    int rc = hm__ba_buf_reserve(b, n);
    if (rc) return rc;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

void hm__ba_buf_free(ba_buf *b)
{
    hm_free(b->data);
    *b = (ba_buf){0};
}

/* ---- options, signals, stop --------------------------------------------- */

void hm_bench_app_defaults(hm_bench_app_options *o)
{
    *o = (hm_bench_app_options){
        .host = "127.0.0.1",
        .port = HM_BENCH_APP_DEFAULT_PORT,
        .backend = HM_BACKEND_AUTO,
        .cleanup_delay_ms = 5000,
        .sse_poll_ms = 100,
        .idle_timeout_ms = 60000,
        .dev_mode = true,
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

int64_t hm__ba_deadline(const ba_app *app)
{
    return hm_now_ns() + app->idle_ns;
}

/* ---- responses ------------------------------------------------------------ */

/* Appends a response head; content_length as hm_http_write_response_head.
 * Keep-alive responses say so explicitly, as OpenSwoole does (this also
 * keeps HTTP/1.0 keep-alive clients working). */
static int write_head(ba_conn *c, int status, const hm_http_header *h, size_t n,
                      long long content_length)
{
    hm_http_header all[16];
    if (n + 1 > HM_ARRAY_LEN(all)) return -EINVAL;
    memcpy(all, h, n * sizeof(*h));
    if (c->keep_alive) all[n++] = (hm_http_header){"Connection", "keep-alive"};
    size_t want = 512;
    for (;;) {
        int rc = hm__ba_buf_reserve(&c->out, want);
        if (rc) return rc;
        ssize_t k =
            hm_http_write_response_head(c->out.data + c->out.len, c->out.cap - c->out.len - 1,
                                        status, NULL, all, n, content_length, c->keep_alive);
        if (k >= 0) {
            c->out.len += (size_t)k;
            c->out.data[c->out.len] = '\0';
            return 0;
        }
        if (k != -ENOSPC || want > ((size_t)1 << 20)) return (int)k;
        want = (c->out.cap - c->out.len) * 2;
    }
}

int hm__ba_respond(ba_conn *c, int status, const hm_http_header *h, size_t n, const char *body,
                   size_t blen, bool head_only)
{
    int rc = write_head(c, status, h, n, (long long)blen);
    if (rc == 0 && !head_only) rc = hm__ba_buf_append(&c->out, body, blen);
    return rc;
}

int hm__ba_respond_chunked_head(ba_conn *c, int status, const hm_http_header *h, size_t n)
{
    return write_head(c, status, h, n, HM_HTTP_LEN_CHUNKED);
}

int hm__ba_flush(ba_conn *c)
{
    if (!c->out.len) return 0;
    ssize_t r = hm_sock_write(c->sock, c->out.data, c->out.len, hm__ba_deadline(c->app), NULL);
    c->out.len = 0;
    return r < 0 ? (int)r : 0;
}

/* ---- connection records ------------------------------------------------- */

static ba_conn *conn_get(ba_app *app)
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
    c->app = app;
    c->prev = c->next = NULL;
    c->sock = NULL;
    c->co = c->reader = NULL;
    c->reader_stop = c->peer_gone = c->keep_alive = c->fat = false;
    c->out.len = c->scratch.len = c->ev.len = 0;
    return c;
}

static void conn_free(ba_conn *c)
{
    hm_http_req_free(&c->req);
    hm__ba_buf_free(&c->out);
    hm__ba_buf_free(&c->scratch);
    hm__ba_buf_free(&c->ev);
    hm_free(c);
}

static void conn_put(ba_app *app, ba_conn *c)
{
    if (c->fat || app->pool_len >= BA_POOL_MAX || c->out.cap > BA_FAT_BYTES ||
        c->scratch.cap > BA_FAT_BYTES || c->ev.cap > BA_FAT_BYTES) {
        conn_free(c);
        return;
    }
    c->next = app->pool;
    app->pool = c;
    app->pool_len++;
}

static void conn_link(ba_app *app, ba_conn *c)
{
    c->prev = NULL;
    c->next = app->conns;
    if (app->conns) app->conns->prev = c;
    app->conns = c;
    app->n_conns++;
}

static void conn_unlink(ba_app *app, ba_conn *c)
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

/* After an error answer: stop sending, then read and discard what the peer
 * still sends for a moment, so closing does not turn its unread request
 * bytes into a reset that could destroy our answer in flight. */
static void linger_close(ba_conn *c)
{
    shutdown(hm_sock_fd(c->sock), SHUT_WR);
    int64_t until = hm_now_ns() + BA_LINGER_NS;
    size_t total = 0;
    while (total < BA_LINGER_BYTES && !c->app->stopping) {
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
    if (hm__ba_respond(c, status, h, 1, text, strlen(text), false) == 0 && hm__ba_flush(c) == 0)
        linger_close(c);
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
    int end = BA_DROP;
    for (;;) {
        if (off == len) {
            off = len = 0;
            if (hm__ba_flush(c) < 0 || app->stopping) break;
            if (partial && !continue_sent && wants_continue(c)) {
                static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
                if (hm_sock_write(c->sock, cont, sizeof(cont) - 1, hm__ba_deadline(app), NULL) < 0)
                    break;
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
            ssize_t n = hm_sock_read(c->sock, c->rbuf, sizeof(c->rbuf), hm__ba_deadline(app));
            if (n <= 0) break; /* EOF, idle timeout, reset, or cancelled by the stop */
            len = (size_t)n;
        }
        size_t consumed = 0;
        int rc = hm_http_req_feed(&c->req, c->rbuf + off, len - off, &consumed);
        if (rc == HM_HTTP_NEED_MORE) {
            off = len;
            partial = true;
            continue;
        }
        if (rc < 0) {
            respond_parse_error(c, rc);
            break;
        }
        off += consumed;
        partial = continue_sent = false;
        /* After an upgrade request the bytes that follow are not HTTP. */
        c->keep_alive = c->req.keep_alive && !c->req.upgrade && !app->stopping;
        if (c->req.body_len > BA_FAT_BYTES) c->fat = true;
        end = hm__ba_via_handle(c);
        if (end != BA_NEXT) break;
        if (!c->keep_alive) {
            end = BA_CLOSE;
            break;
        }
        end = BA_DROP;
        if (c->out.len >= BA_FLUSH_AT && hm__ba_flush(c) < 0) break;
    }
    if (end == BA_CLOSE) hm__ba_flush(c);
    hm_sock_close(c->sock);
    c->sock = NULL;
    conn_unlink(app, c);
    conn_put(app, c);
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
        ba_conn *c = conn_get(app);
        if (!c) {
            hm_sock_close(s);
            continue;
        }
        c->sock = s;
        conn_link(app, c);
        if (hm_coro_spawn(app->loop, conn_main, c, &c->co) < 0) {
            conn_unlink(app, c);
            hm_sock_close(s);
            conn_put(app, c);
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
        if (!app->stopping && atomic_load_explicit(&g_stop, memory_order_relaxed))
            app->stopping = true;
        if (!app->stopping) {
            hm__ba_via_tick(app, hm_now_ns());
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
        printf("bench_app listening on http://%s%s%s:%d\n", v6 ? "[" : "", app->opt.host,
               v6 ? "]" : "", app->port);
        fflush(stdout);
    }
    return 0;
}

static int check_options(const hm_bench_app_options *o)
{
    if (o->port < 0 || o->port > 65535) return -EINVAL;
    if (o->cleanup_delay_ms < 0 || o->sse_poll_ms < 0 || o->idle_timeout_ms <= 0) return -EINVAL;
    /* Keep the nanosecond arithmetic far from overflow (~ 100 days). */
    const int64_t max_ms = 10LL * 1000 * 1000 * 1000;
    if (o->cleanup_delay_ms > max_ms || o->sse_poll_ms > max_ms || o->idle_timeout_ms > max_ms)
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

int hm_bench_app_run(const hm_bench_app_options *o, int ready_fd)
{
    if (g_running) return -EBUSY;
    hm_bench_app_options opt;
    if (o)
        opt = *o;
    else
        hm_bench_app_defaults(&opt);
    if (!opt.host || !opt.host[0]) opt.host = "127.0.0.1";
    int rc = check_options(&opt);
    if (rc < 0) return rc;

    struct sockaddr_storage ss;
    socklen_t sslen = 0;
    rc = resolve(opt.host, opt.port, &ss, &sslen);
    if (rc < 0) return rc;

    ba_app *app = &g_app;
    memset(app, 0, sizeof(*app));
    app->opt = opt;
    app->rnd_pos = sizeof(app->rnd); /* empty: the first id refills it */
    app->idle_ns = opt.idle_timeout_ms * 1000000;
    app->poll_ns = opt.sse_poll_ms * 1000000;
    app->cleanup_ns = opt.cleanup_delay_ms * 1000000;
    app->limits.max_header_bytes = opt.max_header_bytes ? opt.max_header_bytes : (64 << 10);
    app->limits.max_body_bytes = opt.max_body_bytes ? opt.max_body_bytes : (1 << 20);

    hm_loop_options lo = {.backend = opt.backend};
    rc = hm_loop_create(&app->loop, &lo);
    if (rc < 0) return rc;
    app->yield_reads = hm_loop_backend(app->loop) == HM_BACKEND_EPOLL;
    g_running = true;

    rc = hm__ba_via_init(app);
    if (rc == 0) rc = hm_sock_listen(&app->listener, (struct sockaddr *)&ss, sslen, 4096);
    if (rc == 0) {
        app->port = hm_sock_local_port(app->listener);
        rc = app->port < 0 ? app->port : announce(app, ready_fd);
    }
    if (rc == 0) rc = hm_coro_spawn(app->loop, accept_main, app, &app->acceptor);
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
    } else if (app->listener) {
        hm_sock_close(app->listener);
    }

    /* Only after a failed hm_loop_run() can records still be live. */
    while (app->conns) {
        ba_conn *c = app->conns;
        conn_unlink(app, c);
        hm_sock_close(c->sock);
        conn_free(c);
    }
    hm__ba_via_free(app);
    free_pool(app);
    hm_loop_destroy(app->loop);
    app->loop = NULL;
    atomic_store_explicit(&g_stop, 0, memory_order_relaxed);
    g_running = false;
    return rc;
}
