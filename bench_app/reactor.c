/* reactor.c — bench_app --workers N (N > 1): OpenSwoole's reactor, which
 * owns the client connections and hands each request to a worker.
 *
 * The reactor is a ba_app like a worker's, served by server.c's connection
 * loop (read, parse, limits, 100 Continue, pipelining, keep-alive, idle
 * timeout), with keep_raw set: the bytes of each request are kept as they
 * came (c->raw), and this file's handler forwards them unchanged to the
 * chosen worker over a loopback "link" and copies the worker's response
 * bytes, unchanged too (X-Via-Worker included), to the client. A link
 * carries one request at a time; after a complete keep-alive response it
 * goes back to that worker's idle pool, so any client connection may use
 * it next (the worker never sees who the client is, as OpenSwoole's
 * workers see requests, not connections). The reactor parses each response
 * with hm_http_resp_parser only to find where it ends; it buffers nothing
 * of the body. A chunked response (SSE) that does not end with the bytes
 * at hand is a stream: its bytes go to the client as they arrive, a
 * coroutine watches the client for EOF (which closes the link, so the
 * worker's stream ends and its cleanup is scheduled), and the link stays
 * dedicated to it until either side ends it.
 *
 * Dispatch (which worker takes a request):
 *   stream   the worker with the fewest requests forwarded and not yet
 *            answered (an open stream stops counting once it streams),
 *            ties broken round-robin: whichever worker is free, regardless
 *            of cookie or connection, as OpenSwoole's dispatch_mode 7;
 *   fd       the connection's id (1, 2, ... in accept order, OpenSwoole's
 *            session_id) % N: OpenSwoole's mode 2;
 *   session  php-via's SessionManager::workerForRequest(): the first
 *            case-insensitive "__Host-via_session_id=" followed by hex
 *            digits in the request's first 8 KiB, else the first
 *            "via_session_id=" so followed, gives crc32(hex digits) % N
 *            (zlib's crc32 = PHP's); without one, as fd.
 *
 * The reactor's own answers (malformed requests: 400/413/431; a worker that
 * cannot be reached: 503) name the worker fd dispatch would pick.
 *
 * Memory: struct ba_reactor and the idle pools are hm_alloc'd by init and
 * freed (links closed) by free; each connection record that proxied a
 * request keeps a ba_proxy (parser and a 16 KiB buffer) until the record
 * is freed. Everything runs on the reactor's loop thread. */
#include "bench_app/internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <strings.h>
#include <zlib.h>

#define BA_LINK_POOL 256          /* idle links kept per worker */
#define BA_SCAN_BYTES 8192        /* session dispatch reads this much of a request */
#define BA_PROXY_FLUSH (64 << 10) /* a big response goes out in pieces this size */

struct ba_reactor {
    int n;
    ba_dispatch mode;
    int rr;         /* stream: where the next tie-break starts */
    int *ports;     /* each worker's loopback port */
    int *inflight;  /* requests forwarded to each worker and not answered yet */
    hm_sock **idle; /* worker w's idle links: idle[w * BA_LINK_POOL + i], i < n_idle[w] */
    int *n_idle;
};

struct ba_proxy {
    hm_http_resp_parser rp;
    bool streaming; /* the current response is chunked */
    char buf[BA_RBUF];
};

int ba_dispatch_parse(const char *s, ba_dispatch *out)
{
    if (!s || strcmp(s, "stream") == 0)
        *out = BA_DISPATCH_STREAM;
    else if (strcmp(s, "fd") == 0)
        *out = BA_DISPATCH_FD;
    else if (strcmp(s, "session") == 0)
        *out = BA_DISPATCH_SESSION;
    else
        return -EINVAL;
    return 0;
}

int ba_reactor_init(ba_app *app, const int *ports, ba_dispatch mode)
{
    int n = app->run->n_workers;
    ba_reactor *rx = hm_calloc(1, sizeof(*rx));
    if (!rx) return -ENOMEM;
    app->rx = rx;
    rx->n = n;
    rx->mode = mode;
    rx->ports = hm_calloc((size_t)n, sizeof(*rx->ports));
    rx->inflight = hm_calloc((size_t)n, sizeof(*rx->inflight));
    rx->n_idle = hm_calloc((size_t)n, sizeof(*rx->n_idle));
    rx->idle = hm_calloc((size_t)n * BA_LINK_POOL, sizeof(*rx->idle));
    if (!rx->ports || !rx->inflight || !rx->n_idle || !rx->idle) return -ENOMEM;
    memcpy(rx->ports, ports, (size_t)n * sizeof(*ports));
    return 0;
}

void ba_reactor_free(ba_app *app)
{
    ba_reactor *rx = app->rx;
    if (!rx) return;
    for (int w = 0; rx->n_idle && w < rx->n; w++)
        for (int i = 0; i < rx->n_idle[w]; i++)
            hm_sock_close(rx->idle[w * BA_LINK_POOL + i]);
    hm_free(rx->ports);
    hm_free(rx->inflight);
    hm_free(rx->n_idle);
    hm_free(rx->idle);
    hm_free(rx);
    app->rx = NULL;
}

static int fd_worker(const ba_conn *c)
{
    return (int)(c->id % (uint64_t)c->app->rx->n);
}

static void set_via_id(ba_conn *c, int w)
{
    snprintf(c->via_id, sizeof(c->via_id), "%d", c->app->run->first_id + w);
}

void ba_reactor_conn_start(ba_conn *c)
{
    set_via_id(c, fd_worker(c));
}

void ba_reactor_conn_free(ba_conn *c)
{
    if (!c->px) return;
    hm_http_resp_free(&c->px->rp);
    hm_free(c->px);
    c->px = NULL;
}

/* ---- dispatch ------------------------------------------------------------ */

/* The hex digits after the first case-insensitive `name` (followed by at
 * least one) in p[0, n): preg_match('/name=([a-f0-9]+)/i'). */
static bool find_hex_after(const char *p, size_t n, const char *name, const char **v, size_t *vl)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i + nl < n; i++) {
        if (strncasecmp(p + i, name, nl) != 0) continue;
        size_t j = i + nl, e = j;
        while (e < n && isxdigit((unsigned char)p[e]))
            e++;
        if (e == j) continue;
        *v = p + j;
        *vl = e - j;
        return true;
    }
    return false;
}

static int session_worker(const ba_conn *c)
{
    size_t n = c->raw.len < BA_SCAN_BYTES ? c->raw.len : BA_SCAN_BYTES;
    const char *v;
    size_t vl;
    if (find_hex_after(c->raw.data, n, "__Host-via_session_id=", &v, &vl) ||
        find_hex_after(c->raw.data, n, "via_session_id=", &v, &vl)) {
        uLong crc = crc32(0L, (const Bytef *)v, (uInt)vl);
        return (int)(crc % (uLong)c->app->rx->n);
    }
    return fd_worker(c);
}

static int stream_worker(ba_reactor *rx)
{
    int best = rx->rr;
    for (int k = 1; k < rx->n; k++) {
        int w = (rx->rr + k) % rx->n;
        if (rx->inflight[w] < rx->inflight[best]) best = w;
    }
    rx->rr = (best + 1) % rx->n;
    return best;
}

static int pick_worker(ba_conn *c)
{
    ba_reactor *rx = c->app->rx;
    switch (rx->mode) {
    case BA_DISPATCH_FD:
        return fd_worker(c);
    case BA_DISPATCH_SESSION:
        return session_worker(c);
    case BA_DISPATCH_STREAM:
    default:
        return stream_worker(rx);
    }
}

/* ---- links to the workers ------------------------------------------------ */

/* An idle link to worker w (*reused), or a new one; NULL if none. */
static hm_sock *link_get(ba_app *app, int w, bool *reused)
{
    ba_reactor *rx = app->rx;
    if (rx->n_idle[w] > 0) {
        *reused = true;
        return rx->idle[w * BA_LINK_POOL + --rx->n_idle[w]];
    }
    *reused = false;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)rx->ports[w])};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    hm_sock *s;
    if (hm_sock_connect(&s, (struct sockaddr *)&a, sizeof(a), ba_deadline(app)) < 0) return NULL;
    return s;
}

static void link_put(ba_app *app, int w, hm_sock *s)
{
    ba_reactor *rx = app->rx;
    if (app->stopping || rx->n_idle[w] >= BA_LINK_POOL) {
        hm_sock_close(s);
        return;
    }
    rx->idle[w * BA_LINK_POOL + rx->n_idle[w]++] = s;
}

/* ---- proxying --------------------------------------------------------------- */

static int on_resp_headers(void *user, hm_http_resp_parser *p)
{
    ((ba_proxy *)user)->streaming = p->chunked;
    return 0;
}

static int on_resp_body(void *user, const char *at, size_t len)
{
    (void)user, (void)at, (void)len;
    return 0; /* the bytes are copied whole in pump() */
}

enum {
    PUMP_DONE,  /* a complete response is in c->out (or already sent) */
    PUMP_EMPTY, /* the link ended before a single byte: nothing was sent */
    PUMP_CUT,   /* the link, the client or the server stopped mid-response */
};

/* Reads worker w's response to the request just written to l, appending
 * it to c->out and, for a stream, writing it to the client as it comes.
 * *reusable: the link may carry another request. */
static int pump(ba_conn *c, hm_sock *l, int w, bool *reusable)
{
    ba_app *app = c->app;
    ba_reactor *rx = app->rx;
    ba_proxy *px = c->px;
    hm_http_resp_begin(&px->rp, c->req.method == HTTP_HEAD);
    px->streaming = false;
    *reusable = false;
    bool busy = true, watching = false;
    size_t got = 0;
    int res;
    for (;;) {
        if (c->peer_gone || app->stopping) {
            res = PUMP_CUT;
            break;
        }
        ssize_t n = hm_sock_read(l, px->buf, sizeof(px->buf), 0);
        if (n <= 0) {
            if (n == 0 && got && hm_http_resp_finish(&px->rp) == HM_HTTP_DONE)
                res = PUMP_DONE; /* a close-delimited body */
            else
                res = got || n == -ECANCELED ? PUMP_CUT : PUMP_EMPTY;
            break;
        }
        got += (size_t)n;
        size_t used = 0;
        int rc = hm_http_resp_feed(&px->rp, px->buf, (size_t)n, &used);
        if (rc < 0 || ba_buf_append(&c->out, px->buf, used) < 0) {
            res = PUMP_CUT;
            break;
        }
        if (rc == HM_HTTP_DONE) {
            /* A worker answers one request at a time: more bytes would be
             * a protocol error, and the link is not used again. */
            *reusable = used == (size_t)n && px->rp.keep_alive && !px->rp.upgrade;
            res = PUMP_DONE;
            break;
        }
        if (px->streaming) {
            if (busy) { /* an open stream leaves its worker free for requests */
                rx->inflight[w]--;
                busy = false;
            }
            if (!watching) {
                ba_peer_watch_start(c, true);
                watching = true;
            }
            if (ba_flush(c) < 0) {
                res = PUMP_CUT;
                break;
            }
        } else if (c->out.len >= BA_PROXY_FLUSH && ba_flush(c) < 0) {
            res = PUMP_CUT;
            break;
        }
    }
    if (busy) rx->inflight[w]--;
    if (watching) ba_peer_watch_stop(c);
    return res;
}

/* An answer of the reactor's own about the current request. */
static int answer(ba_conn *c, int w, int status)
{
    char saved[sizeof(c->via_id)];
    memcpy(saved, c->via_id, sizeof(saved));
    set_via_id(c, w);
    c->keep_alive = false;
    const char *text = hm_http_reason(status);
    const hm_http_header h[] = {{"Content-Type", "text/plain; charset=utf-8"}};
    int rc = ba_respond(c, status, h, 1, text, strlen(text), false);
    memcpy(c->via_id, saved, sizeof(saved));
    return rc < 0 ? BA_DROP : BA_CLOSE;
}

int ba_reactor_handle(ba_conn *c)
{
    ba_app *app = c->app;
    if (!c->px) {
        c->px = hm_calloc(1, sizeof(*c->px));
        if (!c->px) return answer(c, fd_worker(c), 500);
        hm_http_resp_init(&c->px->rp, NULL);
        hm_http_resp_set_callbacks(&c->px->rp, on_resp_headers, on_resp_body, c->px);
    }
    int w = pick_worker(c);
    for (int attempt = 0;; attempt++) {
        bool reused = false, reusable = false;
        hm_sock *l = link_get(app, w, &reused);
        if (!l) return app->stopping ? BA_DROP : answer(c, w, 503);
        app->rx->inflight[w]++;
        int res;
        if (hm_sock_write(l, c->raw.data, c->raw.len, 0, NULL) < 0) {
            app->rx->inflight[w]--;
            res = PUMP_EMPTY;
        } else {
            res = pump(c, l, w, &reusable);
        }
        if (res == PUMP_DONE) {
            if (reusable)
                link_put(app, w, l);
            else
                hm_sock_close(l);
            return c->px->rp.keep_alive ? BA_NEXT : BA_CLOSE;
        }
        hm_sock_close(l);
        if (app->stopping || c->peer_gone) return BA_DROP;
        /* An idle link the worker had closed: once more on a new one. A
         * worker answers every request it reads, so nothing ran twice. */
        if (res == PUMP_EMPTY && reused && attempt == 0) continue;
        if (res == PUMP_EMPTY) return answer(c, w, 503);
        return BA_CLOSE; /* what came of the response goes out, then the close */
    }
}
