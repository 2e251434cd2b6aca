/* bench_app end to end: forked servers (hm_bench_app_run on port 0) talked
 * to with plain blocking POSIX sockets; responses are read with
 * hm_http_resp_parser. The whole scenario runs once per engine backend
 * (io_uring when available, then epoll). Child A: cleanup 200 ms, SSE wakes
 * on push, idle timeout 1.5 s, devMode, the default database (a temporary
 * directory under the test's own $TMPDIR). Child B: SSE poll 1000 ms (so a
 * burst of actions lands in the queue between two polls), devMode off, an
 * explicit db_path.
 * Covers the page, the cookie, every action outcome, SSE sync and patches,
 * client overwrite, the 50-event drop-oldest queue, /_health, cleanup after
 * SSE and after /_session/close (deferred while SSE is open), malformed and
 * oversized requests, pipelining, 100-continue, the idle timeout,
 * EADDRINUSE, and a clean SIGTERM exit with streams open. The workloads:
 * /bench/cpu (65451 on every call), /bench/io (50 concurrent actions on 50
 * connections overlap their 2 ms sleeps), /bench/spreadsheet (count,
 * viewRow = focusRow = count % 100; the SQLite file: WAL, 26000 seeded
 * cells, known values; the temporary one removed at exit, an explicit one
 * kept and not seeded again) and /examples/spreadsheet (the view's table,
 * navigate's multi-line #sheet patch and signals, string signals).
 *
 * Multi-worker (once, on the default backend): --workers 4 with dispatch
 * session (the page and every action with a chosen cookie reach worker
 * crc32(id) % 4, X-Via-Worker says so, SSE streams through the reactor and
 * its end reaches the worker; no cookie: connection id % 4; __Host- first;
 * /_health lists 4 workers; the reactor's malformed/431/413/pipelining/
 * 100-continue handling), dispatch stream (sequential actions rotate over
 * all 4 workers, 3 in 4 get 400 Invalid context), dispatch fd (actions on
 * the page's keep-alive connection all succeed), SIGTERM with a stream
 * open; and the executable's --processes 2 (argv[1]: X-Via-Worker 0 and 1
 * on two ports, a clean stop on SIGTERM, --port 0 refused).
 *
 * HTTPS (a CA and a server certificate made with the OpenSSL API; clients
 * are blocking-style OpenSSL connections that verify against that CA):
 * certificates and keys that do not load (-EINVAL, one line naming the
 * file; the executable exits 2); per backend, a TLS server's page, actions,
 * keep-alive, pipelining, a 300 KiB body, test_http's cases, SSE patches
 * and the live spreadsheet's large events, the stream's end seen through
 * TLS, resumption (TLS 1.3 tickets, 1.2 tickets, 1.2 session ids), plain
 * HTTP / garbage / cut hellos / h2-only ALPN closed while the server serves
 * on, SIGTERM with a stream and a silent handshake open; --workers 2
 * --dispatch session over TLS (TLS at the reactor); --processes 2 with
 * TLS. */
#include "bench_app/app.h"
#include "hm_test.h"
#include "proto/http1.h"
#include "scenarios/workload.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <ftw.h>
#include <jansson.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define IO_TIMEOUT_MS 5000

/* ---- children ------------------------------------------------------------ */

static int64_t now_ms(void)
{
    return hm_now_ns() / 1000000;
}

/* Children still running; killed if the test fails (exit() runs this),
 * and reaped, so none outlives the test. */
static pid_t g_parent, g_children[8];
static char g_tmp[256]; /* the test's own directory, removed at exit */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static void kill_children(void)
{
    if (getpid() != g_parent) return; /* a forked child inherits this handler */
    for (size_t i = 0; i < HM_ARRAY_LEN(g_children); i++) {
        if (g_children[i] > 0) {
            kill(g_children[i], SIGKILL);
            waitpid(g_children[i], NULL, 0);
            g_children[i] = 0;
        }
    }
    if (g_tmp[0]) nftw(g_tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void track_child(pid_t pid, bool add)
{
    for (size_t i = 0; i < HM_ARRAY_LEN(g_children); i++) {
        if (add && g_children[i] == 0) {
            g_children[i] = pid;
            return;
        }
        if (!add && g_children[i] == pid) g_children[i] = 0;
    }
}

/* Forks a server; returns its pid and port (-1 if it exited before
 * listening). Child exit codes: 0 clean stop, 10 EADDRINUSE, 3 other. */
static pid_t start_child(const hm_bench_app_options *o, int *port)
{
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        /* Dies with the test, even when the test is killed by a timeout. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != g_parent) _exit(3);
        close(p[0]);
        if (hm_bench_app_install_signal_handlers() < 0) _exit(3);
        int rc = hm_bench_app_run(o, p[1]);
        /* exit(), not _exit(): under ASan the leak check runs here. */
        exit(rc == 0 ? 0 : rc == -EADDRINUSE ? 10 : 3);
    }
    close(p[1]);
    track_child(pid, true);
    char line[32];
    size_t got = 0;
    int64_t until = now_ms() + 10000;
    while (got < sizeof(line) - 1 && (!got || line[got - 1] != '\n')) {
        struct pollfd pf = {.fd = p[0], .events = POLLIN};
        int left = (int)(until - now_ms());
        ASSERT_GT(left, 0);
        if (poll(&pf, 1, left) <= 0) continue;
        ssize_t n = read(p[0], line + got, sizeof(line) - 1 - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    line[got] = '\0';
    close(p[0]);
    *port = got ? atoi(line) : -1;
    return pid;
}

static int wait_child(pid_t pid, int timeout_ms)
{
    int64_t until = now_ms() + timeout_ms;
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        ASSERT(r >= 0);
        if (r == pid) {
            track_child(pid, false);
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        if (now_ms() > until) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            track_child(pid, false);
            HM_FAIL_("child %d did not exit in %d ms", (int)pid, timeout_ms);
        }
        usleep(5000);
    }
}

static void copy_str(char *dst, size_t cap, const char *s, size_t n);

/* ---- a small blocking TLS client -------------------------------------------- */

/* While g_tls is set, tcp_connect() makes TLS connections with it (the
 * certificate verified for 127.0.0.1 against the test CA, ALPN http/1.1),
 * offering g_resume's session when set; send_all, read_until and fd_close
 * then go through the connection's SSL (g_ssl[fd]). The socket is made
 * non-blocking after the handshake, so read_until keeps its deadline. */
static SSL_CTX *g_tls;
static SSL_SESSION *g_resume;
static SSL *g_ssl[1024];
static bool g_reused;   /* the last handshake resumed g_resume's session */
static char g_alpn[32]; /* the protocol the last handshake selected, "" if none */

static SSL *ssl_of(int fd)
{
    return fd >= 0 && fd < (int)HM_ARRAY_LEN(g_ssl) ? g_ssl[fd] : NULL;
}

/* Waits until fd is ready for `events` or until_ms: false on timeout. */
static bool wait_fd(int fd, short events, int64_t until_ms)
{
    struct pollfd pf = {.fd = fd, .events = events};
    int left = (int)(until_ms - now_ms());
    return poll(&pf, 1, left < 0 ? 0 : left) > 0;
}

/* The handshake on a connected socket: 1, or 0 when it failed (printing
 * OpenSSL's reason when loud). */
static int tls_handshake(int fd, bool loud)
{
    ASSERT_LT(fd, (int)HM_ARRAY_LEN(g_ssl));
    SSL *ssl = SSL_new(g_tls);
    ASSERT(ssl);
    SSL_set_fd(ssl, fd);
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), "127.0.0.1");
    if (g_resume) SSL_set_session(ssl, g_resume);
    struct timeval tv = {IO_TIMEOUT_MS / 1000, 0}; /* the handshake blocks, not forever */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (SSL_connect(ssl) != 1) {
        if (loud) ERR_print_errors_fp(stderr);
        ERR_clear_error();
        SSL_free(ssl);
        return 0;
    }
    ASSERT_EQ(SSL_get_verify_result(ssl), X509_V_OK);
    const unsigned char *alpn;
    unsigned alpn_len;
    SSL_get0_alpn_selected(ssl, &alpn, &alpn_len);
    copy_str(g_alpn, sizeof(g_alpn), (const char *)alpn, alpn_len);
    g_reused = SSL_session_reused(ssl);
    ASSERT_EQ(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
    g_ssl[fd] = ssl;
    return 1;
}

/* A TLS connection's session, for g_resume (caller frees it). */
static SSL_SESSION *tls_session(int fd)
{
    SSL *ssl = ssl_of(fd);
    ASSERT(ssl);
    SSL_SESSION *sess = SSL_get1_session(ssl);
    ASSERT(sess && SSL_SESSION_is_resumable(sess));
    return sess;
}

static void tls_send_all(SSL *ssl, int fd, const char *s, size_t n)
{
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    while (n) {
        int w = SSL_write(ssl, s, n > INT32_MAX ? INT32_MAX : (int)n);
        if (w > 0) {
            s += w;
            n -= (size_t)w;
            continue;
        }
        int e = SSL_get_error(ssl, w);
        ASSERT(e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ);
        ASSERT(wait_fd(fd, e == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN, until));
    }
}

/* read_until through TLS: bytes, 0 on EOF (close_notify or not), -1 on
 * timeout, -2 on error. */
static ssize_t tls_read_until(SSL *ssl, int fd, char *buf, size_t cap, int64_t until_ms)
{
    for (;;) {
        int n = SSL_read(ssl, buf, cap > INT32_MAX ? INT32_MAX : (int)cap);
        if (n > 0) return n;
        int e = SSL_get_error(ssl, n);
        if (e == SSL_ERROR_WANT_READ) { /* a partial record, or only a ticket */
            if (!wait_fd(fd, POLLIN, until_ms)) return -1;
            continue;
        }
        /* The client context ignores a missing close_notify: EOF is EOF. */
        ERR_clear_error();
        return e == SSL_ERROR_ZERO_RETURN ? 0 : -2;
    }
}

/* ---- plain sockets ---------------------------------------------------------- */

static int tcp_connect_raw(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* A connection to port: TLS (ALPN http/1.1 agreed) while g_tls is set. */
static int tcp_connect(int port)
{
    int fd = tcp_connect_raw(port);
    if (g_tls && !tls_handshake(fd, true)) HM_FAIL_("TLS handshake with port %d failed", port);
    if (g_tls) ASSERT_STREQ(g_alpn, "http/1.1");
    return fd;
}

/* Closes a socket, TLS or not (a TLS one says close_notify first). */
static void fd_close(int fd)
{
    SSL *ssl = ssl_of(fd);
    if (ssl) {
        SSL_shutdown(ssl);
        ERR_clear_error();
        SSL_free(ssl);
        g_ssl[fd] = NULL;
    }
    close(fd);
}

static void send_all(int fd, const char *s, size_t n)
{
    SSL *ssl = ssl_of(fd);
    if (ssl) {
        tls_send_all(ssl, fd, s, n);
        return;
    }
    while (n) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        ASSERT_GT(w, 0);
        s += w;
        n -= (size_t)w;
    }
}

/* Reads with a deadline: bytes, 0 on EOF, -1 on timeout, -2 on error. */
static ssize_t read_until(int fd, char *buf, size_t cap, int64_t until_ms)
{
    SSL *ssl = ssl_of(fd);
    if (ssl) return tls_read_until(ssl, fd, buf, cap, until_ms);
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    int left = (int)(until_ms - now_ms());
    if (left < 0) left = 0;
    int r = poll(&pf, 1, left);
    if (r == 0) return -1;
    ssize_t n = recv(fd, buf, cap, 0);
    return n < 0 ? -2 : n;
}

/* ---- one request, one response --------------------------------------------- */

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

static conn *conn_open(int port)
{
    conn *c = calloc(1, sizeof(*c));
    ASSERT(c);
    c->fd = tcp_connect(port);
    c->port = port;
    hm_http_resp_init(&c->p, NULL);
    return c;
}

static void conn_close(conn *c)
{
    hm_http_resp_free(&c->p);
    fd_close(c->fd);
    free(c);
}

static void copy_str(char *dst, size_t cap, const char *s, size_t n)
{
    if (!s) n = 0;
    if (n >= cap) n = cap - 1;
    if (n) memcpy(dst, s, n);
    dst[n] = '\0';
}

/* Reads one response (head_req: it answers a HEAD). */
static void read_resp(conn *c, bool head_req, resp *r)
{
    memset(r, 0, sizeof(*r));
    hm_http_resp_begin(&c->p, head_req);
    size_t raw = 0;
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    for (;;) {
        if (c->off == c->len) {
            c->off = c->len = 0;
            ssize_t n = read_until(c->fd, c->buf, sizeof(c->buf), until);
            ASSERT(n != -1 && n != -2);
            if (n == 0) {
                ASSERT_EQ(hm_http_resp_finish(&c->p), HM_HTTP_DONE);
                break;
            }
            c->len = (size_t)n;
        }
        size_t used = 0;
        int rc = hm_http_resp_feed(&c->p, c->buf + c->off, c->len - c->off, &used);
        ASSERT(rc >= 0);
        size_t keep = used < sizeof(r->head) - 1 - raw ? used : sizeof(r->head) - 1 - raw;
        memcpy(r->head + raw, c->buf + c->off, keep);
        raw += keep;
        c->off += used;
        if (rc == HM_HTTP_DONE) break;
    }
    r->head[raw] = '\0';
    char *end = strstr(r->head, "\r\n\r\n");
    if (end) end[2] = '\0'; /* keep the last header's CRLF */
    r->status = c->p.status;
    r->keep_alive = c->p.keep_alive;
    r->body_len = c->p.body_len;
    ASSERT_LT(r->body_len, sizeof(r->body));
    memcpy(r->body, c->p.body, r->body_len);
    r->body[r->body_len] = '\0';
    if (c->p.n_set_cookie)
        copy_str(r->cookie, sizeof(r->cookie), c->p.set_cookie[0].ptr, c->p.set_cookie[0].len);
    copy_str(r->ctype, sizeof(r->ctype), c->p.hdr.content_type.ptr, c->p.hdr.content_type.len);
}

/* Sends METHOD target with Host, the extra header lines (each ending in
 * CRLF) and a body (Content-Length when non-NULL), then reads the response. */
static void conn_req(conn *c, const char *method, const char *target, const char *extra,
                     const char *body, resp *r)
{
    static char req[1 << 20];
    int n = snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s", method, target,
                     c->port, extra ? extra : "");
    if (body)
        n += snprintf(req + n, sizeof(req) - (size_t)n, "Content-Length: %zu\r\n", strlen(body));
    n += snprintf(req + n, sizeof(req) - (size_t)n, "\r\n%s", body ? body : "");
    ASSERT_LT(n, (int)sizeof(req));
    send_all(c->fd, req, (size_t)n);
    read_resp(c, strcmp(method, "HEAD") == 0, r);
}

/* The same on a fresh connection. */
static void req1(int port, const char *method, const char *target, const char *extra,
                 const char *body, resp *r)
{
    conn *c = conn_open(port);
    conn_req(c, method, target, extra, body, r);
    conn_close(c);
}

static bool has_header(const resp *r, const char *line)
{
    char pat[512];
    snprintf(pat, sizeof(pat), "\r\n%s\r\n", line);
    return strstr(r->head, pat) != NULL;
}

static void url_encode(const char *s, char *out, size_t cap)
{
    size_t k = 0;
    for (; *s && k + 4 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            strchr("-_.!~*'()", ch))
            out[k++] = (char)ch;
        else
            k += (size_t)snprintf(out + k, cap - k, "%%%02X", ch);
    }
    out[k] = '\0';
}

static bool is_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789abcdef", s[i]) || !s[i]) return false;
    return true;
}

/* ---- php-via helpers ----------------------------------------------------------- */

typedef struct page {
    char ctx[128]; /* "/bench/counter_/<hex>" */
    char hex[17];
    char session[128];    /* the Set-Cookie value's via_session_id */
    char cookie_hdr[256]; /* "Cookie: via_session_id=...\r\n" */
} page;

/* GET /bench/counter with an optional Cookie line; checks the page's shape. */
static void get_page(int port, const char *cookie_line, page *pg)
{
    resp r;
    req1(port, "GET", "/bench/counter", cookie_line, NULL, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_STREQ(r.ctype, "text/html; charset=utf-8");
    static const char meta[] = "<meta data-signals='{\"via_ctx\":\"\\/bench\\/counter_\\/";
    const char *m = strstr(r.body, meta);
    ASSERT(m);
    const char *hex = m + strlen(meta);
    ASSERT(is_hex(hex, 16));
    static const char meta_end[] = "\",\"_disconnected\":false}'>";
    ASSERT_EQ(strncmp(hex + 16, meta_end, strlen(meta_end)), 0);
    memcpy(pg->hex, hex, 16);
    pg->hex[16] = '\0';
    snprintf(pg->ctx, sizeof(pg->ctx), "/bench/counter_/%s", pg->hex);
    ASSERT(strstr(r.body, "<button data-on:click=\"@post('/_action/increment')\">"));
    ASSERT(strstr(r.body, "<script type=\"module\" src=\"/datastar.js\"></script>"));
    ASSERT(strstr(r.body, "<div class=\"container\" id=\"content\">"));

    /* via_session_id=<v>; expires=Www, DD-Mon-YYYY HH:MM:SS GMT; path=/; httponly; samesite=Lax */
    ASSERT_EQ(strncmp(r.cookie, "via_session_id=", 15), 0);
    const char *v = r.cookie + 15;
    const char *semi = strchr(v, ';');
    ASSERT(semi);
    copy_str(pg->session, sizeof(pg->session), v, (size_t)(semi - v));
    ASSERT_EQ(strncmp(semi, "; expires=", 10), 0);
    const char *date = semi + 10;
    ASSERT_STREQ(date + 29, "; path=/; httponly; samesite=Lax");
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    char dbuf[32];
    copy_str(dbuf, sizeof(dbuf), date, 29);
    const char *e = strptime(dbuf, "%a, %d-%b-%Y %H:%M:%S GMT", &tm);
    ASSERT(e && *e == '\0');
    ASSERT(dbuf[3] == ',' && dbuf[7] == '-' && dbuf[11] == '-');
    int64_t exp = (int64_t)timegm(&tm), want = (int64_t)time(NULL) + 30 * 86400;
    ASSERT_LE(exp > want ? exp - want : want - exp, 120);
    snprintf(pg->cookie_hdr, sizeof(pg->cookie_hdr), "Cookie: via_session_id=%s\r\n", pg->session);
}

static void wire_id(const page *pg, char *out, size_t cap)
{
    snprintf(out, cap, "count__bench_counter__%s", pg->hex);
}

/* POST /_action/<id> with {"via_ctx":ctx[, wire:count]} on a connection. */
static void action_on(conn *c, const char *id, const page *pg, const char *extra, long long count,
                      resp *r)
{
    char body[512], target[128], hdrs[1024];
    if (count >= 0) {
        char w[128];
        wire_id(pg, w, sizeof(w));
        snprintf(body, sizeof(body), "{\"via_ctx\":\"%s\",\"%s\":%lld}", pg->ctx, w, count);
    } else {
        snprintf(body, sizeof(body), "{\"via_ctx\":\"%s\"}", pg->ctx);
    }
    snprintf(target, sizeof(target), "/_action/%s", id);
    snprintf(hdrs, sizeof(hdrs), "Content-Type: application/json\r\n%s%s", pg->cookie_hdr,
             extra ? extra : "");
    conn_req(c, "POST", target, hdrs, body, r);
}

static void action(int port, const char *id, const page *pg, const char *extra, long long count,
                   resp *r)
{
    conn *c = conn_open(port);
    action_on(c, id, pg, extra, count, r);
    conn_close(c);
}

static json_t *health(int port)
{
    resp r;
    req1(port, "GET", "/_health", NULL, NULL, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_STREQ(r.ctype, "application/json");
    ASSERT(has_header(&r, "Cache-Control: no-store"));
    json_error_t err;
    json_t *j = json_loads(r.body, 0, &err);
    ASSERT(j);
    return j;
}

static long long health_count(int port, const char *what)
{
    json_t *j = health(port);
    json_t *v = json_object_get(json_object_get(j, "connections"), what);
    ASSERT(json_is_integer(v));
    long long n = json_integer_value(v);
    json_decref(j);
    return n;
}

/* ---- an SSE client ---------------------------------------------------------------- */

typedef struct sse {
    int fd;
    hm_http_resp_parser p;
    char head[8192];
    size_t head_len;
    bool ended; /* the response body ended (DONE) */
    char *data; /* decoded body */
    size_t len, cap;
} sse;

static int sse_on_body(void *u, const char *at, size_t n)
{
    sse *s = u;
    if (s->len + n + 1 > s->cap) {
        s->cap = (s->len + n + 1) * 2;
        s->data = realloc(s->data, s->cap);
        ASSERT(s->data);
    }
    memcpy(s->data + s->len, at, n);
    s->len += n;
    s->data[s->len] = '\0';
    return 0;
}

static sse *sse_open(int port, const char *ctx, const char *cookie_line)
{
    sse *s = calloc(1, sizeof(*s));
    ASSERT(s);
    s->fd = tcp_connect(port);
    s->data = calloc(1, 1);
    s->cap = 1;
    hm_http_resp_init(&s->p, NULL);
    hm_http_resp_set_callbacks(&s->p, NULL, sse_on_body, s);
    hm_http_resp_begin(&s->p, false);
    char q[512] = "", enc[1024] = "";
    if (ctx) {
        snprintf(q, sizeof(q), "{\"via_ctx\":\"%s\",\"_disconnected\":false}", ctx);
        url_encode(q, enc, sizeof(enc));
    }
    char req[4096];
    int n = snprintf(req, sizeof(req),
                     "GET /_sse%s%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: text/event-stream\r\n"
                     "Datastar-Request: true\r\n%s\r\n",
                     ctx ? "?datastar=" : "", enc, port, cookie_line ? cookie_line : "");
    send_all(s->fd, req, (size_t)n);
    return s;
}

/* Reads until timeout or the body ends; returns false on timeout. */
static bool sse_pump(sse *s, int64_t until)
{
    char buf[16384];
    ssize_t n = read_until(s->fd, buf, sizeof(buf), until);
    if (n == -1) return false;
    ASSERT(n != -2);
    if (n == 0) {
        s->ended = true;
        return true;
    }
    size_t keep = (size_t)n < sizeof(s->head) - 1 - s->head_len ? (size_t)n
                                                                : sizeof(s->head) - 1 - s->head_len;
    memcpy(s->head + s->head_len, buf, keep);
    s->head_len += keep;
    s->head[s->head_len] = '\0';
    size_t used;
    int rc = hm_http_resp_feed(&s->p, buf, (size_t)n, &used);
    ASSERT(rc >= 0);
    if (rc == HM_HTTP_DONE) s->ended = true;
    return true;
}

static size_t sse_count(const sse *s)
{
    size_t n = 0;
    for (const char *p = s->data; (p = strstr(p, "\n\n")); p += 2)
        n++;
    return n;
}

/* Waits until at least n events arrived; returns how many did. */
static size_t sse_wait(sse *s, size_t n, int timeout_ms)
{
    int64_t until = now_ms() + timeout_ms;
    while (sse_count(s) < n && !s->ended && now_ms() < until)
        sse_pump(s, until);
    return sse_count(s);
}

/* Copies event i (without its blank line) into out. */
static void sse_event(const sse *s, size_t i, char *out, size_t cap)
{
    const char *p = s->data;
    for (size_t k = 0; k < i; k++) {
        p = strstr(p, "\n\n");
        ASSERT(p);
        p += 2;
    }
    const char *e = strstr(p, "\n\n");
    ASSERT(e);
    copy_str(out, cap, p, (size_t)(e - p));
}

/* The value of `wire` in a datastar-patch-signals event. */
static long long signal_in(const char *ev, const char *wire)
{
    static const char pfx[] = "event: datastar-patch-signals\ndata: signals ";
    ASSERT_EQ(strncmp(ev, pfx, strlen(pfx)), 0);
    json_error_t err;
    json_t *j = json_loads(ev + strlen(pfx), 0, &err);
    ASSERT(j);
    json_t *v = json_object_get(j, wire);
    ASSERT(json_is_integer(v));
    long long n = json_integer_value(v);
    json_decref(j);
    return n;
}

static void sse_close(sse *s)
{
    hm_http_resp_free(&s->p);
    fd_close(s->fd);
    free(s->data);
    free(s);
}

static int status_of(const sse *s)
{
    ASSERT_EQ(strncmp(s->head, "HTTP/1.1 ", 9), 0);
    return atoi(s->head + 9);
}

static bool sse_has_header(const sse *s, const char *line)
{
    char pat[512];
    snprintf(pat, sizeof(pat), "\r\n%s\r\n", line);
    const char *end = strstr(s->head, "\r\n\r\n");
    const char *at = strstr(s->head, pat);
    return at && end && at <= end;
}

static const char ELEMENTS_EVENT[] =
    "event: datastar-patch-elements\n"
    "data: elements <button data-on:click=\"@post('/_action/increment')\">+1</button>";

/* ---- the tests ---------------------------------------------------------------------- */

static void test_pages(int port, page *p1, page *p2)
{
    get_page(port, NULL, p1);
    ASSERT_EQ(strlen(p1->session), 32);
    ASSERT(is_hex(p1->session, 32));
    get_page(port, p1->cookie_hdr, p2);
    ASSERT(strcmp(p1->ctx, p2->ctx) != 0);  /* every GET: a new context */
    ASSERT_STREQ(p2->session, p1->session); /* the cookie's session is adopted */
    page own;
    get_page(port, "Cookie: a=b; via_session_id=chosen-by-client; c=d\r\n", &own);
    ASSERT_STREQ(own.session, "chosen-by-client"); /* unvalidated */
    /* OpenSwoole url-decodes cookie values (the last one wins) and
     * url-encodes the value it sets. */
    page enc;
    get_page(port, "Cookie: via_session_id=x; via_session_id=\"a%20b%2Fc\"\r\n", &enc);
    ASSERT_STREQ(enc.session, "a+b%2Fc");
    resp er;
    action(port, "increment", &enc, NULL, -1, &er);
    ASSERT_EQ(er.status, 200);
    ASSERT_EQ(health_count(port, "contexts"), 4);

    resp r;
    req1(port, "HEAD", "/bench/counter", NULL, NULL, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(r.body_len, 0);
    ASSERT_STREQ(r.cookie, "");
    ASSERT_EQ(health_count(port, "contexts"), 4); /* HEAD makes no context */
    req1(port, "GET", "/nope", NULL, NULL, &r);
    ASSERT_EQ(r.status, 404);
    ASSERT_STREQ(r.body, "Not Found");
    req1(port, "GET", "/datastar.js", NULL, NULL, &r);
    ASSERT_EQ(r.status, 404);
    printf("pages, contexts, session cookie, HEAD, 404: ok\n");
}

static int actions_done; /* successful increments on p1 so far */

static void test_actions(int port, const page *p1)
{
    resp r;
    req1(port, "GET", "/_action/increment", NULL, NULL, &r);
    ASSERT_EQ(r.status, 405);
    ASSERT_STREQ(r.body, "Method Not Allowed");
    ASSERT(has_header(&r, "Allow: POST"));
    req1(port, "HEAD", "/_action/increment", NULL, NULL, &r);
    ASSERT_EQ(r.status, 404);
    ASSERT_EQ(r.body_len, 0);

    page nocookie = *p1;
    nocookie.cookie_hdr[0] = '\0';
    action(port, "increment", &nocookie, NULL, -1, &r);
    ASSERT_EQ(r.status, 403);
    ASSERT_STREQ(r.body, "Forbidden");
    page other = *p1;
    snprintf(other.cookie_hdr, sizeof(other.cookie_hdr), "Cookie: via_session_id=%032d\r\n", 7);
    action(port, "increment", &other, NULL, -1, &r);
    ASSERT_EQ(r.status, 403);

    page unknown = *p1;
    snprintf(unknown.ctx, sizeof(unknown.ctx), "/bench/counter_/0123456789abcdef");
    action(port, "increment", &unknown, NULL, -1, &r);
    ASSERT_EQ(r.status, 400);
    ASSERT_STREQ(r.body, "Invalid context");
    req1(port, "POST", "/_action/increment", p1->cookie_hdr, "{}", &r);
    ASSERT_EQ(r.status, 400);
    ASSERT_STREQ(r.body, "Invalid context");
    req1(port, "POST", "/_action/increment", p1->cookie_hdr, "not json at all", &r);
    ASSERT_EQ(r.status, 400);

    action(port, "increment", p1, "Origin: http://evil.example\r\n", -1, &r);
    ASSERT_EQ(r.status, 403);
    ASSERT_STREQ(r.body, "Forbidden: untrusted origin");
    char origin[128];
    snprintf(origin, sizeof(origin), "Origin: http://127.0.0.1:%d\r\n", port);
    action(port, "increment", p1, origin, -1, &r);
    ASSERT_EQ(r.status, 200);
    actions_done++;

    action(port, "nope", p1, NULL, -1, &r);
    ASSERT_EQ(r.status, 500);
    ASSERT_STREQ(r.body, "Action failed");

    action(port, "increment", p1, NULL, -1, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(r.body_len, 0);
    ASSERT_STREQ(r.ctype, "text/html");
    actions_done++;

    /* Signals from ?datastar= (even on POST), a form field datastar, a form
     * field via_ctx. */
    char json[256], enc[512], target[600], body[700];
    snprintf(json, sizeof(json), "{\"via_ctx\":\"%s\"}", p1->ctx);
    url_encode(json, enc, sizeof(enc));
    snprintf(target, sizeof(target), "/_action/increment?x=1&datastar=%s", enc);
    req1(port, "POST", target, p1->cookie_hdr, "", &r);
    ASSERT_EQ(r.status, 200);
    actions_done++;
    char hdrs[512];
    snprintf(hdrs, sizeof(hdrs), "%sContent-Type: application/x-www-form-urlencoded\r\n",
             p1->cookie_hdr);
    snprintf(body, sizeof(body), "a=b&datastar=%s", enc);
    req1(port, "POST", "/_action/increment", hdrs, body, &r);
    ASSERT_EQ(r.status, 200);
    actions_done++;
    url_encode(p1->ctx, enc, sizeof(enc));
    snprintf(body, sizeof(body), "via_ctx=%s", enc);
    req1(port, "POST", "/_action/increment", hdrs, body, &r);
    ASSERT_EQ(r.status, 200);
    actions_done++;
    /* A bad ?datastar= means no signals at all (no fallback to the body). */
    snprintf(json, sizeof(json), "{\"via_ctx\":\"%s\"}", p1->ctx);
    req1(port, "POST", "/_action/increment?datastar=%7Bbroken", p1->cookie_hdr, json, &r);
    ASSERT_EQ(r.status, 400);

    /* Hostile JSON nesting: refused, not a crash. */
    static char deep[200001];
    memset(deep, '[', sizeof(deep) - 1);
    req1(port, "POST", "/_action/increment", p1->cookie_hdr, deep, &r);
    ASSERT_EQ(r.status, 400);
    char nest[1024] = "";
    for (int i = 0; i < 60; i++)
        strcat(nest, "{\"a\":");
    strcat(nest, "1");
    for (int i = 0; i < 60; i++)
        strcat(nest, "}");
    req1(port, "POST", "/_action/increment", p1->cookie_hdr, nest, &r);
    ASSERT_EQ(r.status, 400);
    printf("action outcomes (405, 404, 403 session, 400, 403 origin, 500, 200), signal sources: "
           "ok\n");
}

static void test_sse(int port, const page *p1)
{
    char wire[128], ev[4096];
    wire_id(p1, wire, sizeof(wire));
    sse *s = sse_open(port, p1->ctx, p1->cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    ASSERT_EQ(status_of(s), 200);
    ASSERT(sse_has_header(s, "Content-Type: text/event-stream"));
    ASSERT(sse_has_header(s, "Cache-Control: no-cache"));
    ASSERT(sse_has_header(s, "X-Accel-Buffering: no"));
    ASSERT(sse_has_header(s, "Connection: keep-alive"));
    ASSERT(sse_has_header(s, "Transfer-Encoding: chunked"));
    sse_event(s, 0, ev, sizeof(ev));
    ASSERT_STREQ(ev, ELEMENTS_EVENT);
    sse_event(s, 1, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), actions_done);
    ASSERT(!strstr(s->data, "\nid:") && !strstr(s->data, "\nretry:") && s->data[0] != ':');

    resp r;
    conn *kc = conn_open(port); /* keep-alive: several actions on one connection */
    action_on(kc, "increment", p1, NULL, -1, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT(r.keep_alive);
    actions_done++;
    ASSERT_EQ(sse_wait(s, 3, IO_TIMEOUT_MS), 3);
    sse_event(s, 2, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), actions_done);
    /* The client's TAB value replaces the server's before the action. */
    action_on(kc, "increment", p1, NULL, 41, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(sse_wait(s, 4, IO_TIMEOUT_MS), 4);
    sse_event(s, 3, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), 42);
    conn_close(kc);
    printf("SSE headers, initial sync, one patch per action, client overwrite: ok\n");

    json_t *h = health(port);
    ASSERT_STREQ(json_string_value(json_object_get(h, "status")), "ok");
    ASSERT_STREQ(json_string_value(json_object_get(h, "version")), HM_VERSION "-bench_app");
    json_t *b = json_object_get(h, "broker");
    ASSERT_STREQ(json_string_value(json_object_get(b, "driver")), "InMemoryBroker");
    ASSERT(json_is_true(json_object_get(b, "connected")));
    json_t *cn = json_object_get(h, "connections");
    ASSERT_EQ(json_integer_value(json_object_get(cn, "contexts")), 4);
    ASSERT_EQ(json_integer_value(json_object_get(cn, "sse")), 1);
    ASSERT_EQ(json_integer_value(json_object_get(h, "worker")), 0);
    json_decref(h);
    printf("/_health: ok\n");

    /* No via_ctx, an unknown context, someone else's session. */
    sse *bad = sse_open(port, NULL, p1->cookie_hdr);
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    while (!bad->ended && now_ms() < until)
        sse_pump(bad, until);
    ASSERT_EQ(status_of(bad), 400);
    ASSERT_STREQ(bad->data, "Invalid context");
    sse_close(bad);
    bad = sse_open(port, "/bench/counter_/00000000deadbeef", p1->cookie_hdr);
    until = now_ms() + IO_TIMEOUT_MS;
    while (!bad->ended && now_ms() < until)
        sse_pump(bad, until);
    ASSERT(bad->ended);
    ASSERT_EQ(status_of(bad), 200);
    ASSERT(sse_has_header(bad, "Content-Type: text/event-stream"));
    ASSERT_STREQ(bad->data,
                 "event: datastar-patch-elements\ndata: selector body\ndata: mode append\n"
                 "data: elements <script data-effect=\"el.remove()\">"
                 "window.location.reload()</script>\n\n");
    sse_close(bad);
    bad = sse_open(port, p1->ctx, "Cookie: via_session_id=ffffffffffffffffffffffffffffffff\r\n");
    until = now_ms() + IO_TIMEOUT_MS;
    while (!bad->ended && now_ms() < until)
        sse_pump(bad, until);
    ASSERT_EQ(status_of(bad), 403);
    ASSERT(sse_has_header(bad, "Content-Type: text/event-stream"));
    ASSERT_STREQ(bad->data, "Forbidden");
    sse_close(bad);
    printf("SSE 400, unknown-context reload, 403: ok\n");

    /* A second stream replaces the queue: it gets the view (no signals
     * changed since the last patch) and the next patch; the first goes silent. */
    sse *s2 = sse_open(port, p1->ctx, p1->cookie_hdr);
    ASSERT_EQ(sse_wait(s2, 1, IO_TIMEOUT_MS), 1);
    sse_event(s2, 0, ev, sizeof(ev));
    ASSERT_STREQ(ev, ELEMENTS_EVENT);
    ASSERT_EQ(sse_wait(s2, 2, 200), 1);
    ASSERT_EQ(health_count(port, "sse"), 2);
    action(port, "increment", p1, NULL, -1, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(sse_wait(s2, 2, IO_TIMEOUT_MS), 2);
    sse_event(s2, 1, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), 43);
    ASSERT_EQ(sse_wait(s, 5, 300), 4);
    printf("SSE reconnect replaces the queue, the old stream goes silent: ok\n");

    /* Both gone: cleanup after the last stream, cleanup_delay_ms later. */
    sse_close(s);
    sse_close(s2);
    until = now_ms() + IO_TIMEOUT_MS;
    while (health_count(port, "sse") != 0) {
        ASSERT_LT(now_ms(), until);
        usleep(10000);
    }
    usleep(400 * 1000);
    action(port, "increment", p1, NULL, -1, &r);
    ASSERT_EQ(r.status, 400);
    ASSERT_STREQ(r.body, "Invalid context");
    ASSERT_EQ(health_count(port, "contexts"), 3);
    printf("cleanup after the last SSE stream ends: ok\n");
}

static void test_session_close(int port, const page *p2)
{
    resp r;
    req1(port, "POST", "/_session/close", NULL, p2->ctx, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(r.body_len, 0);
    action(port, "increment", p2, NULL, -1, &r); /* still there within the delay */
    ASSERT_EQ(r.status, 200);
    usleep(400 * 1000);
    action(port, "increment", p2, NULL, -1, &r);
    ASSERT_EQ(r.status, 400);
    req1(port, "POST", "/_session/close", NULL, "/bench/counter_/nothing", &r);
    ASSERT_EQ(r.status, 200);
    req1(port, "GET", "/_session/close", NULL, NULL, &r);
    ASSERT_EQ(r.status, 404);

    /* Deferred while an SSE stream is open. */
    page p3;
    get_page(port, p2->cookie_hdr, &p3);
    sse *s = sse_open(port, p3.ctx, p3.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    req1(port, "POST", "/_session/close", NULL, p3.ctx, &r);
    ASSERT_EQ(r.status, 200);
    usleep(400 * 1000);
    action(port, "increment", &p3, NULL, -1, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(sse_wait(s, 3, IO_TIMEOUT_MS), 3);
    sse_close(s);
    usleep(400 * 1000);
    action(port, "increment", &p3, NULL, -1, &r);
    ASSERT_EQ(r.status, 400);
    printf("/_session/close, deferred while SSE is open: ok\n");
}

static void test_http(int port)
{
    /* Malformed: 400 and close; other connections keep working. */
    conn *c = conn_open(port);
    send_all(c->fd, "GARBAGE\r\n\r\n", 11);
    resp r;
    read_resp(c, false, &r);
    ASSERT_EQ(r.status, 400);
    ASSERT(!r.keep_alive);
    char b[16];
    ASSERT_EQ(read_until(c->fd, b, sizeof(b), now_ms() + IO_TIMEOUT_MS), 0);
    conn_close(c);
    c = conn_open(port);
    static const char bad_cl[] = "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n";
    send_all(c->fd, bad_cl, sizeof(bad_cl) - 1);
    read_resp(c, false, &r);
    ASSERT_EQ(r.status, 400);
    conn_close(c);
    req1(port, "GET", "/_health", NULL, NULL, &r);
    ASSERT_EQ(r.status, 200);

    /* Oversized header section: 431; oversized body: 413. */
    static char big[80 * 1024];
    int n = snprintf(big, sizeof(big), "X-Big: ");
    memset(big + n, 'a', 70 * 1024);
    snprintf(big + n + 70 * 1024, sizeof(big) - (size_t)n - 70 * 1024, "\r\n");
    req1(port, "GET", "/_health", big, NULL, &r);
    ASSERT_EQ(r.status, 431);
    c = conn_open(port);
    conn_req(c, "POST", "/_action/increment", "Content-Length: 2000000\r\n", NULL, &r);
    ASSERT_EQ(r.status, 413);
    conn_close(c);

    /* Pipelining: two requests in one write, two responses in order. */
    c = conn_open(port);
    char two[512];
    n = snprintf(two, sizeof(two),
                 "GET /_health HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
    send_all(c->fd, two, (size_t)n);
    read_resp(c, false, &r);
    ASSERT_EQ(r.status, 200);
    read_resp(c, false, &r);
    ASSERT_EQ(r.status, 404);
    conn_req(c, "GET", "/_health", NULL, NULL, &r);
    ASSERT_EQ(r.status, 200);
    conn_close(c);

    /* Expect: 100-continue gets the interim answer before the body. */
    c = conn_open(port);
    n = snprintf(two, sizeof(two),
                 "POST /_action/increment HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                 "Content-Length: 2\r\n\r\n");
    send_all(c->fd, two, (size_t)n);
    char cont[64] = "";
    size_t got = 0;
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    while (!strstr(cont, "\r\n\r\n")) {
        ssize_t k = read_until(c->fd, cont + got, sizeof(cont) - 1 - got, until);
        ASSERT_GT(k, 0);
        got += (size_t)k;
        cont[got] = '\0';
    }
    ASSERT_STREQ(cont, "HTTP/1.1 100 Continue\r\n\r\n");
    send_all(c->fd, "{}", 2);
    read_resp(c, false, &r);
    ASSERT_EQ(r.status, 400);
    conn_close(c);
    printf("malformed 400, 431, 413, pipelining, 100-continue: ok\n");
}

/* Child B: devMode off, SSE poll 1000 ms. */
static void test_queue_drop(int port)
{
    resp r;
    page p;
    get_page(port, NULL, &p);
    action(port, "increment", &p, NULL, -1, &r); /* no Origin, no devMode */
    ASSERT_EQ(r.status, 403);
    ASSERT_STREQ(r.body, "Forbidden: untrusted origin");

    char wire[128], ev[4096], origin[128];
    wire_id(&p, wire, sizeof(wire));
    snprintf(origin, sizeof(origin), "Origin: https://127.0.0.1:%d\r\n", port);
    sse *s = sse_open(port, p.ctx, p.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    sse_event(s, 1, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), 0);
    /* The stream now sleeps its poll interval: 60 actions land in the
     * 50-slot queue meanwhile, and the 10 oldest patches are dropped. */
    int64_t t0 = now_ms();
    conn *kc = conn_open(port);
    for (int i = 0; i < 60; i++) {
        action_on(kc, "increment", &p, origin, -1, &r);
        ASSERT_EQ(r.status, 200);
    }
    conn_close(kc);
    ASSERT_LT(now_ms() - t0, 700); /* well inside one poll interval */
    ASSERT_EQ(sse_wait(s, 52, 3000), 52);
    for (int i = 0; i < 50; i++) {
        sse_event(s, 2 + (size_t)i, ev, sizeof(ev));
        ASSERT_EQ(signal_in(ev, wire), 11 + i);
    }
    ASSERT_EQ(sse_wait(s, 53, 300), 52);
    sse_close(s);
    printf("queue of 50 drops the oldest patches: ok\n");
}

/* ---- the workloads --------------------------------------------------------------- */

/* GET route: the page's context (route + "_/" + hex) and session. */
static void get_route(int port, const char *route, const char *cookie_line, page *pg, resp *r)
{
    req1(port, "GET", route, cookie_line, NULL, r);
    ASSERT_EQ(r->status, 200);
    char meta[256] = "<meta data-signals='{\"via_ctx\":\"";
    size_t k = strlen(meta);
    for (const char *p = route; *p && k + 3 < sizeof(meta); p++) {
        if (*p == '/') meta[k++] = '\\';
        meta[k++] = *p;
    }
    snprintf(meta + k, sizeof(meta) - k, "_\\/");
    const char *m = strstr(r->body, meta);
    ASSERT(m);
    const char *hex = m + strlen(meta);
    ASSERT(is_hex(hex, 16));
    memcpy(pg->hex, hex, 16);
    pg->hex[16] = '\0';
    snprintf(pg->ctx, sizeof(pg->ctx), "%s_/%s", route, pg->hex);
    ASSERT_EQ(strncmp(r->cookie, "via_session_id=", 15), 0);
    const char *v = r->cookie + 15, *semi = strchr(v, ';');
    ASSERT(semi);
    copy_str(pg->session, sizeof(pg->session), v, (size_t)(semi - v));
    snprintf(pg->cookie_hdr, sizeof(pg->cookie_hdr), "Cookie: via_session_id=%s\r\n", pg->session);
}

/* A TAB signal's wire id: name + "_" + sanitized route + "__" + hex. */
static void wire_of(const page *pg, const char *name, char *out, size_t cap)
{
    size_t k = (size_t)snprintf(out, cap, "%s_", name);
    for (const char *p = pg->ctx; *p && *p != '_' && k + 1 < cap; p++) /* the route part */
        out[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ? *p : '_';
    snprintf(out + k, cap - k, "__%s", pg->hex);
}

/* POST /_action/<id> with {"via_ctx":ctx<fields>} on connection c. */
static void act(conn *c, const char *id, const page *pg, const char *fields, resp *r)
{
    char body[1024], target[128], hdrs[512];
    snprintf(body, sizeof(body), "{\"via_ctx\":\"%s\"%s}", pg->ctx, fields ? fields : "");
    snprintf(target, sizeof(target), "/_action/%s", id);
    snprintf(hdrs, sizeof(hdrs), "Content-Type: application/json\r\n%s", pg->cookie_hdr);
    conn_req(c, "POST", target, hdrs, body, r);
    ASSERT_EQ(r->status, 200);
}

/* The signals object of a datastar-patch-signals event (caller decrefs). */
static json_t *signals_of(const char *ev)
{
    static const char pfx[] = "event: datastar-patch-signals\ndata: signals ";
    ASSERT_EQ(strncmp(ev, pfx, strlen(pfx)), 0);
    json_error_t err;
    json_t *j = json_loads(ev + strlen(pfx), 0, &err);
    ASSERT(json_is_object(j));
    return j;
}

static long long int_of(json_t *sig, const page *pg, const char *name)
{
    char w[160];
    wire_of(pg, name, w, sizeof(w));
    json_t *v = json_object_get(sig, w);
    if (!json_is_integer(v)) HM_FAIL_("signal %s is not an integer in the patch", name);
    return json_integer_value(v);
}

/* A datastar-patch-elements event's "elements" lines joined with \n into
 * out; returns the number of those lines. *selector gets the selector line
 * ("" when none). */
static int elements_of(const char *ev, char *out, size_t cap, char *selector, size_t scap)
{
    static const char pfx[] = "event: datastar-patch-elements\n";
    ASSERT_EQ(strncmp(ev, pfx, strlen(pfx)), 0);
    size_t k = 0;
    int lines = 0;
    selector[0] = '\0';
    for (const char *p = ev + strlen(pfx); *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n >= 15 && strncmp(p, "data: elements ", 15) == 0) {
            ASSERT_LT(k + n, cap);
            if (lines++) out[k++] = '\n';
            memcpy(out + k, p + 15, n - 15);
            k += n - 15;
        } else if (n >= 15 && strncmp(p, "data: selector ", 15) == 0) {
            copy_str(selector, scap, p + 15, n - 15);
        } else {
            HM_FAIL_("unexpected line in an elements event: %.*s", (int)n, p);
        }
        p += n + (nl ? 1 : 0);
    }
    out[k] = '\0';
    return lines;
}

/* The row label (1-based) of the table line holding the focus outline. */
static int focus_row_label(const char *html)
{
    static const char mark[] = "<td style=\"outline:2px solid #4f8ef7\">";
    const char *o = strstr(html, mark);
    ASSERT(o);
    ASSERT(!strstr(o + sizeof(mark) - 1, "outline:")); /* exactly one focused cell */
    const char *line = o;
    while (line > html && line[-1] != '\n')
        line--;
    ASSERT_EQ(strncmp(line, "<tr><th>", 8), 0);
    return atoi(line + 8);
}

/* The table inside <div id="sheet">…</div> must pass hammer's own check. */
static void check_sheet_div(const char *html)
{
    const char *d = strstr(html, "<div id=\"sheet\"");
    ASSERT(d);
    const char *e = strstr(d, "</div>");
    ASSERT(e);
    ASSERT(hm_table_well_formed(d, (size_t)(e - d)));
    ASSERT(strstr(d, "@post('/_action/navigate')"));
}

static void test_cpu(int port)
{
    static resp r;
    page pg;
    get_route(port, "/bench/cpu", NULL, &pg, &r);
    ASSERT(strstr(r.body, "@post('/_action/increment')"));
    char ev[4096];
    sse *s = sse_open(port, pg.ctx, pg.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    sse_event(s, 1, ev, sizeof(ev));
    json_t *j = signals_of(ev);
    ASSERT_EQ(int_of(j, &pg, "count"), 0);
    json_decref(j);
    conn *c = conn_open(port);
    for (size_t i = 0; i < 2; i++) { /* the value never changes, the patch still comes */
        act(c, "increment", &pg, NULL, &r);
        ASSERT_EQ(sse_wait(s, 3 + i, IO_TIMEOUT_MS), 3 + i);
        sse_event(s, 2 + i, ev, sizeof(ev));
        j = signals_of(ev);
        ASSERT_EQ(int_of(j, &pg, "count"), 65451);
        ASSERT_EQ(json_object_size(j), 1);
        json_decref(j);
    }
    conn_close(c);
    sse_close(s);
    printf("/bench/cpu: 65451 on the 1st and the 2nd call: ok\n");
}

static void test_io(int port)
{
    enum { N = 50 };
    static resp r;
    page pg;
    get_route(port, "/bench/io", NULL, &pg, &r);
    char ev[4096];
    sse *s = sse_open(port, pg.ctx, pg.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    conn *cs[N];
    static char req[N][1024];
    size_t len[N];
    for (int i = 0; i < N; i++) {
        cs[i] = conn_open(port);
        char body[256];
        int bl = snprintf(body, sizeof(body), "{\"via_ctx\":\"%s\"}", pg.ctx);
        len[i] =
            (size_t)snprintf(req[i], sizeof(req[i]),
                             "POST /_action/increment HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                             "Content-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s",
                             port, pg.cookie_hdr, bl, body);
    }
    int64_t t0 = hm_now_ns();
    for (int i = 0; i < N; i++)
        send_all(cs[i]->fd, req[i], len[i]);
    for (int i = 0; i < N; i++) {
        read_resp(cs[i], false, &r);
        ASSERT_EQ(r.status, 200);
    }
    int64_t us = (hm_now_ns() - t0) / 1000;
    for (int i = 0; i < N; i++)
        conn_close(cs[i]);
    /* One after another they would take at least N x 2 ms = 100 ms. */
    ASSERT_LT(us, N * 2000 / 2);
    ASSERT_EQ(sse_wait(s, 2 + N, IO_TIMEOUT_MS), 2 + N);
    for (int i = 0; i < N; i++) {
        sse_event(s, 2 + (size_t)i, ev, sizeof(ev));
        json_t *j = signals_of(ev);
        ASSERT_EQ(int_of(j, &pg, "count"), i + 1);
        json_decref(j);
    }
    ASSERT_EQ(sse_wait(s, 3 + N, 100), 2 + N);
    sse_close(s);
    printf("/bench/io: %d concurrent actions in %lld us (sleeps overlap), count +%d: ok\n", N,
           (long long)us, N);
}

/* The seeded database at path: WAL, 26000 cells, known values. */
static void check_db(const char *path, const char *cell00)
{
    struct stat st;
    ASSERT_EQ(stat(path, &st), 0);
    sqlite3 *db;
    ASSERT_EQ(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_busy_timeout(db, 2000);
    sqlite3_stmt *q;
    ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &q, NULL), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
    ASSERT_STREQ((const char *)sqlite3_column_text(q, 0), "wal");
    sqlite3_finalize(q);
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM cells", -1, &q, NULL), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
    ASSERT_EQ(sqlite3_column_int(q, 0), 26000);
    sqlite3_finalize(q);
    static const struct {
        int row, col;
        const char *value;
    } known[] = {
        {0, 0, NULL},       {0, 1, "2"},        {0, 3, "\"D1\" & co"},
        {0, 7, "'H1' > 0"}, {1, 4, "E2 < F2"},  {3, 9, "'J4' > 0"},
        {999, 24, "25000"}, {999, 25, "26000"}, {500, 10, "K501 < L501"},
    };
    ASSERT_EQ(
        sqlite3_prepare_v2(db, "SELECT value FROM cells WHERE row = ?1 AND col = ?2", -1, &q, NULL),
        SQLITE_OK);
    for (size_t i = 0; i < HM_ARRAY_LEN(known); i++) {
        sqlite3_bind_int(q, 1, known[i].row);
        sqlite3_bind_int(q, 2, known[i].col);
        ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
        ASSERT_STREQ((const char *)sqlite3_column_text(q, 0),
                     known[i].value ? known[i].value : cell00);
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
}

static void test_sheet(int port, const char *db_path)
{
    enum { K = 105 };
    static resp r;
    page pg;
    get_route(port, "/bench/spreadsheet", NULL, &pg, &r);
    ASSERT(strstr(r.body, "@post('/_action/increment')"));
    char ev[4096];
    sse *s = sse_open(port, pg.ctx, pg.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    sse_event(s, 1, ev, sizeof(ev));
    json_t *j = signals_of(ev);
    ASSERT_EQ(json_object_size(j), 5);
    static const char *const names[] = {"count", "viewRow", "viewCol", "focusRow", "focusCol"};
    for (size_t i = 0; i < HM_ARRAY_LEN(names); i++)
        ASSERT_EQ(int_of(j, &pg, names[i]), 0);
    json_decref(j);

    conn *c = conn_open(port);
    for (int k = 1; k <= K; k++)
        act(c, "increment", &pg, NULL, &r);
    ASSERT_EQ(sse_wait(s, 2 + K, IO_TIMEOUT_MS), 2 + K);
    for (int k = 1; k <= K; k++) {
        sse_event(s, 1 + (size_t)k, ev, sizeof(ev));
        j = signals_of(ev);
        ASSERT_EQ(json_object_size(j), 3); /* the changed ones: count, viewRow, focusRow */
        ASSERT_EQ(int_of(j, &pg, "count"), k);
        ASSERT_EQ(int_of(j, &pg, "viewRow"), k % 100);
        ASSERT_EQ(int_of(j, &pg, "focusRow"), k % 100);
        json_decref(j);
    }
    /* The client's viewRow replaces the server's before the action. */
    char w[160], f[256];
    wire_of(&pg, "viewRow", w, sizeof(w));
    snprintf(f, sizeof(f), ",\"%s\":250", w);
    act(c, "increment", &pg, f, &r);
    ASSERT_EQ(sse_wait(s, 3 + K, IO_TIMEOUT_MS), 3 + K);
    sse_event(s, 2 + K, ev, sizeof(ev));
    j = signals_of(ev);
    ASSERT_EQ(int_of(j, &pg, "count"), K + 1);
    ASSERT_EQ(int_of(j, &pg, "viewRow"), 51);
    ASSERT_EQ(int_of(j, &pg, "focusRow"), 51);
    json_decref(j);
    conn_close(c);
    sse_close(s);

    char wal[700];
    snprintf(wal, sizeof(wal), "%s-wal", db_path);
    struct stat st;
    ASSERT_EQ(stat(wal, &st), 0);
    check_db(db_path, "A1 < B1");
    printf("/bench/spreadsheet: count = k, viewRow = focusRow = k %% 100, client overwrite; "
           "SQLite WAL file with 26000 seeded cells: ok\n");
}

static void test_live(int port)
{
    static resp r;
    static char ev[65536], html[65536];
    char sel[64];
    page pg;
    get_route(port, "/examples/spreadsheet", NULL, &pg, &r);
    check_sheet_div(r.body);
    ASSERT(strstr(r.body, "<td style=\"outline:2px solid #4f8ef7\">A1 &lt; B1</td>"));
    ASSERT(strstr(r.body, "<td>&quot;D1&quot; &amp; co</td>"));
    ASSERT(strstr(r.body, "<td>&#039;H1&#039; &gt; 0</td>"));
    ASSERT_EQ(focus_row_label(r.body), 1);

    sse *s = sse_open(port, pg.ctx, pg.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    sse_event(s, 0, ev, sizeof(ev));
    ASSERT_GE(elements_of(ev, html, sizeof(html), sel, sizeof(sel)), 22);
    ASSERT_STREQ(sel, "");
    check_sheet_div(html);
    sse_event(s, 1, ev, sizeof(ev));
    json_t *j = signals_of(ev);
    ASSERT_EQ(json_object_size(j), 6);
    char dir[160];
    wire_of(&pg, "direction", dir, sizeof(dir));
    ASSERT_STREQ(json_string_value(json_object_get(j, dir)), "");
    ASSERT_EQ(int_of(j, &pg, "focusRow"), 0);
    ASSERT_EQ(int_of(j, &pg, "count"), 0);
    json_decref(j);

    /* Each navigate: an elements event for #sheet spanning many data lines,
     * then the signals it set. */
    static const struct {
        const char *direction; /* a JSON value */
        int focus_row, focus_col, view_row, label;
    } steps[] = {
        {"\"ArrowDown\"", 1, 0, 0, 2},
        {"\"Sideways\"", 1, 0, 0, 2}, /* unknown: no move */
        {"5", 1, 0, 0, 2},            /* cast to "5": no move */
        {"\"PageDown\"", 21, 0, 2, 22},
        {"\"ArrowLeft\"", 21, 0, 2, 22}, /* clamped at col 0 */
        {"\"ArrowRight\"", 21, 1, 2, 22},
        {"\"ArrowUp\"", 20, 1, 2, 21},
    };
    conn *c = conn_open(port);
    size_t seen = 2;
    for (size_t i = 0; i < HM_ARRAY_LEN(steps); i++) {
        char f[256];
        snprintf(f, sizeof(f), ",\"%s\":%s", dir, steps[i].direction);
        act(c, "navigate", &pg, f, &r);
        ASSERT_EQ(sse_wait(s, seen + 2, IO_TIMEOUT_MS), seen + 2);
        sse_event(s, seen, ev, sizeof(ev));
        ASSERT_GE(elements_of(ev, html, sizeof(html), sel, sizeof(sel)), 22);
        ASSERT_STREQ(sel, "#sheet");
        ASSERT(hm_table_well_formed(html, strlen(html)));
        check_sheet_div(html);
        ASSERT_EQ(focus_row_label(html), steps[i].label);
        char first[32];
        snprintf(first, sizeof(first), "\n<tr><th>%d</th>", steps[i].view_row + 1);
        ASSERT(strstr(html, first)); /* the view's first row */
        sse_event(s, seen + 1, ev, sizeof(ev));
        j = signals_of(ev);
        ASSERT_EQ(json_object_size(j), 5); /* focus, view, count; not direction */
        ASSERT_EQ(int_of(j, &pg, "focusRow"), steps[i].focus_row);
        ASSERT_EQ(int_of(j, &pg, "focusCol"), steps[i].focus_col);
        ASSERT_EQ(int_of(j, &pg, "viewRow"), steps[i].view_row);
        ASSERT_EQ(int_of(j, &pg, "viewCol"), 0);
        ASSERT_EQ(int_of(j, &pg, "count"), (long long)i + 1);
        json_decref(j);
        seen += 2;
    }
    conn_close(c);

    /* Client values reach the string signal as PHP's (string) casts them;
     * a first SSE connect sends every signal, in json_encode()'s escaping. */
    static const struct {
        const char *sent, *sync;
    } casts[] = {
        {"1e25", "\"1.0E+25\""},
        {"0.1", "\"0.1\""},
        {"-0.0", "\"-0\""},
        {"0.00001", "\"1.0E-5\""},
        {"123456.5", "\"123456.5\""},
        {"true", "\"1\""},
        {"null", "\"\""},
        {"[1,2]", "\"Array\""},
        {"42", "\"42\""},
        {"\"a/b\\\"\\u00e9\\ud83d\\ude00\\n\"", "\"a\\/b\\\"\\u00e9\\ud83d\\ude00\\n\""},
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(casts); i++) {
        page pc;
        get_route(port, "/examples/spreadsheet", NULL, &pc, &r);
        char cdir[160], f[256], want[400];
        wire_of(&pc, "direction", cdir, sizeof(cdir));
        snprintf(f, sizeof(f), ",\"%s\":%s", cdir, casts[i].sent);
        conn *cc = conn_open(port);
        act(cc, "navigate", &pc, f, &r);
        conn_close(cc);
        sse *sc = sse_open(port, pc.ctx, pc.cookie_hdr);
        ASSERT_EQ(sse_wait(sc, 2, IO_TIMEOUT_MS), 2);
        sse_event(sc, 1, ev, sizeof(ev));
        snprintf(want, sizeof(want), "\"%s\":%s,", cdir, casts[i].sync);
        if (!strstr(ev, want)) HM_FAIL_("sent %s, expected %s in: %s", casts[i].sent, want, ev);
        sse_close(sc);
    }

    /* A new stream re-renders the view with the current focus. */
    sse *s2 = sse_open(port, pg.ctx, pg.cookie_hdr);
    ASSERT_EQ(sse_wait(s2, 1, IO_TIMEOUT_MS), 1);
    sse_event(s2, 0, ev, sizeof(ev));
    elements_of(ev, html, sizeof(html), sel, sizeof(sel));
    check_sheet_div(html);
    ASSERT_EQ(focus_row_label(html), 21);
    sse_close(s2);
    sse_close(s);
    printf("/examples/spreadsheet: view table, navigate patches (#sheet on many lines, then "
           "signals), moves, clamping, unknown direction, string signal casts and escaping, "
           "re-rendered view on reconnect: ok\n");
}

/* The one bench_app.* directory the default database made under dir. */
static void find_tmp_db(const char *dir, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    ASSERT(d);
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        ASSERT_EQ(strncmp(e->d_name, "bench_app.", 10), 0);
        snprintf(out, cap, "%s/%s/spreadsheet.db", dir, e->d_name);
        found++;
    }
    closedir(d);
    ASSERT_EQ(found, 1);
}

static bool dir_empty(const char *dir)
{
    DIR *d = opendir(dir);
    ASSERT(d);
    struct dirent *e;
    bool empty = true;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = false;
    closedir(d);
    return empty;
}

/* The whole scenario against servers on one engine backend. */
static void run_suite(hm_backend_kind backend)
{
    actions_done = 0;
    hm_bench_app_options oa;
    hm_bench_app_defaults(&oa);
    oa.port = 0;
    oa.cleanup_delay_ms = 200;
    oa.sse_poll_ms = 0;
    oa.idle_timeout_ms = 1500;
    oa.quiet = true;
    oa.backend = backend;
    /* A's database goes to the default place: a directory under $TMPDIR. */
    char tmp_a[300], db_a[600], db_b[300];
    snprintf(tmp_a, sizeof(tmp_a), "%s/%s-tmp", g_tmp, hm_backend_name(backend));
    snprintf(db_b, sizeof(db_b), "%s/%s-b.db", g_tmp, hm_backend_name(backend));
    ASSERT_EQ(mkdir(tmp_a, 0700), 0);
    ASSERT_EQ(setenv("TMPDIR", tmp_a, 1), 0);
    int port_a, port_b;
    pid_t a = start_child(&oa, &port_a);
    ASSERT_GT(port_a, 0);
    hm_bench_app_options ob = oa;
    ob.sse_poll_ms = 1000;
    ob.dev_mode = false;
    ob.idle_timeout_ms = 60000;
    ob.db_path = db_b;
    pid_t b = start_child(&ob, &port_b);
    ASSERT_GT(port_b, 0);
    printf("[%s] children listening on %d and %d\n", hm_backend_name(backend), port_a, port_b);

    /* The port is taken: the run fails before listening. */
    hm_bench_app_options oc = oa;
    oc.port = port_a;
    int port_c;
    pid_t cpid = start_child(&oc, &port_c);
    ASSERT_EQ(port_c, -1);
    ASSERT_EQ(wait_child(cpid, 5000), 10);
    find_tmp_db(tmp_a, db_a, sizeof(db_a)); /* A's only: C removed its own */
    printf("EADDRINUSE: ok\n");

    int idle_fd = tcp_connect(port_a); /* never sends: closed after 1.5 s */
    int64_t idle_t0 = now_ms();

    page p1, p2;
    test_pages(port_a, &p1, &p2);
    test_actions(port_a, &p1);
    test_sse(port_a, &p1);
    test_session_close(port_a, &p2);
    test_http(port_a);
    test_cpu(port_a);
    test_io(port_a);
    test_sheet(port_a, db_a);
    test_live(port_a);
    check_db(db_b, "A1 < B1");
    test_queue_drop(port_b);

    char b1[8];
    ASSERT_EQ(read_until(idle_fd, b1, sizeof(b1), idle_t0 + 4000), 0);
    ASSERT_GE(now_ms() - idle_t0, 1400);
    close(idle_fd);
    printf("idle timeout: ok\n");

    /* SIGTERM with an SSE stream and a keep-alive connection still open. */
    page p4;
    get_page(port_a, NULL, &p4);
    sse *s = sse_open(port_a, p4.ctx, p4.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    conn *kc = conn_open(port_a);
    resp r;
    conn_req(kc, "GET", "/_health", NULL, NULL, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(kill(a, SIGTERM), 0);
    ASSERT_EQ(kill(b, SIGTERM), 0);
    ASSERT_EQ(wait_child(a, 5000), 0);
    ASSERT_EQ(wait_child(b, 5000), 0);
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    while (!s->ended && now_ms() < until)
        sse_pump(s, until);
    ASSERT(s->ended);
    sse_close(s);
    conn_close(kc);
    printf("SIGTERM: both exit 0, streams closed: ok\n");
    ASSERT(dir_empty(tmp_a)); /* the default database's directory is gone */
    struct stat st;
    ASSERT_EQ(stat(db_b, &st), 0); /* an explicit one stays */
    printf("temporary database removed at exit, --db file kept: ok\n");
}

/* A non-empty --db file is used as it is, not seeded again. */
static void test_db_reuse(const char *path)
{
    sqlite3 *db;
    ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 2000);
    ASSERT_EQ(sqlite3_exec(db, "UPDATE cells SET value = 'changed <x>' WHERE row = 0 AND col = 0",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(db);
    hm_bench_app_options o;
    hm_bench_app_defaults(&o);
    o.port = 0;
    o.quiet = true;
    o.db_path = path;
    int port;
    pid_t pid = start_child(&o, &port);
    ASSERT_GT(port, 0);
    static resp r;
    page pg;
    get_route(port, "/examples/spreadsheet", NULL, &pg, &r);
    ASSERT(strstr(r.body, ">changed &lt;x&gt;</td>"));
    check_db(path, "changed <x>");
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    ASSERT_EQ(wait_child(pid, 5000), 0);
    printf("an existing --db file is not seeded again: ok\n");
}

/* ---- multi-worker ---------------------------------------------------------------- */

/* The X-Via-Worker value of a response (-1 if none). */
static int via_worker(const char *head)
{
    const char *h = strstr(head, "\r\nX-Via-Worker: ");
    return h ? atoi(h + 16) : -1;
}

static int crc_worker(const char *sid, int n)
{
    return (int)(crc32(0L, (const Bytef *)sid, (uInt)strlen(sid)) % (uLong)n);
}

static json_t *health_with(int port, const char *cookie_line, int *worker)
{
    resp r;
    req1(port, "GET", "/_health", cookie_line, NULL, &r);
    ASSERT_EQ(r.status, 200);
    *worker = via_worker(r.head);
    json_error_t err;
    json_t *j = json_loads(r.body, 0, &err);
    ASSERT(j);
    ASSERT_EQ(json_integer_value(json_object_get(j, "worker")), *worker);
    return j;
}

/* workers[i].what from /_health. */
static long long worker_count(json_t *h, int i, const char *what)
{
    json_t *ws = json_object_get(h, "workers");
    ASSERT(json_is_array(ws));
    json_t *w = json_array_get(ws, (size_t)i);
    ASSERT_EQ(json_integer_value(json_object_get(w, "id")), i);
    json_t *v = json_object_get(w, what);
    ASSERT(json_is_integer(v));
    return json_integer_value(v);
}

static pid_t start_workers(const char *dispatch, int *port)
{
    hm_bench_app_options o;
    hm_bench_app_defaults(&o);
    o.port = 0;
    o.quiet = true;
    o.workers = 4;
    o.dispatch = dispatch;
    o.cleanup_delay_ms = 200;
    o.sse_poll_ms = 0;
    pid_t pid = start_child(&o, port);
    ASSERT_GT(*port, 0);
    return pid;
}

static void test_dispatch_session(void)
{
    int port;
    pid_t pid = start_workers("session", &port);
    /* No cookie: connection id % 4; this server's first connection is 1. */
    page pg;
    resp r;
    get_route(port, "/bench/counter", NULL, &pg, &r);
    ASSERT_EQ(via_worker(r.head), 1);
    get_route(port, "/bench/counter", NULL, &pg, &r);
    ASSERT_EQ(via_worker(r.head), 2);

    /* A chosen session id for each worker: the page and all its actions
     * (each on a new connection) reach worker crc32(id) % 4. */
    page owned[4];
    bool seen[4] = {false};
    for (int k = 0, found = 0; found < 4; k++) {
        ASSERT_LT(k, 1000);
        char sid[40], cookie[128];
        snprintf(sid, sizeof(sid), "%032x", 0xabc0 + k);
        int w = crc_worker(sid, 4);
        if (seen[w]) continue;
        seen[w] = true;
        found++;
        snprintf(cookie, sizeof(cookie), "Cookie: via_session_id=%s\r\n", sid);
        get_route(port, "/bench/counter", cookie, &owned[w], &r);
        ASSERT_STREQ(owned[w].session, sid);
        ASSERT_EQ(via_worker(r.head), w);
        for (int i = 0; i < 5; i++) {
            action(port, "increment", &owned[w], NULL, -1, &r);
            ASSERT_EQ(r.status, 200);
            ASSERT_EQ(via_worker(r.head), w);
        }
    }
    /* __Host-via_session_id wins over via_session_id, wherever it is. */
    char both[512];
    snprintf(both, sizeof(both), "Cookie: via_session_id=%s; __Host-via_session_id=%s\r\n",
             owned[0].session, owned[3].session);
    req1(port, "GET", "/nope", both, NULL, &r);
    ASSERT_EQ(r.status, 404);
    ASSERT_EQ(via_worker(r.head), 3);

    /* /_health: the answering worker's own counts, and all four workers. */
    int hw;
    json_t *h = health_with(port, owned[2].cookie_hdr, &hw);
    ASSERT_EQ(hw, 2);
    ASSERT_EQ(json_array_size(json_object_get(h, "workers")), 4);
    long long total = 0;
    for (int i = 0; i < 4; i++) {
        total += worker_count(h, i, "contexts");
        ASSERT_GE(worker_count(h, i, "requests"), 6);
    }
    ASSERT_EQ(total, 6);
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(h, "connections"), "contexts")),
              worker_count(h, 2, "contexts"));
    json_decref(h);

    /* SSE through the reactor: streamed patches, and the client's close
     * reaches the worker (its stream count drops, its cleanup runs). */
    page *p1 = &owned[1];
    char wire[128], ev[4096];
    wire_id(p1, wire, sizeof(wire));
    sse *s = sse_open(port, p1->ctx, p1->cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    ASSERT_EQ(status_of(s), 200);
    ASSERT(sse_has_header(s, "X-Via-Worker: 1"));
    sse_event(s, 1, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), 5);
    conn *kc = conn_open(port);
    for (int i = 0; i < 3; i++) {
        action_on(kc, "increment", p1, NULL, -1, &r);
        ASSERT_EQ(r.status, 200);
        ASSERT_EQ(via_worker(r.head), 1);
        ASSERT_EQ(sse_wait(s, 3 + (size_t)i, IO_TIMEOUT_MS), 3 + (size_t)i);
        sse_event(s, 2 + (size_t)i, ev, sizeof(ev));
        ASSERT_EQ(signal_in(ev, wire), 6 + i);
    }
    conn_close(kc);
    h = health_with(port, p1->cookie_hdr, &hw);
    ASSERT_EQ(worker_count(h, 1, "sse"), 1);
    json_decref(h);
    sse_close(s);
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    for (;;) {
        h = health_with(port, NULL, &hw);
        long long n = worker_count(h, 1, "sse");
        json_decref(h);
        if (n == 0) break;
        ASSERT_LT(now_ms(), until);
        usleep(10000);
    }
    usleep(400 * 1000); /* cleanup_delay_ms 200 */
    action(port, "increment", p1, NULL, -1, &r);
    ASSERT_EQ(r.status, 400);
    ASSERT_EQ(via_worker(r.head), 1);
    printf("dispatch session: cookie -> worker crc32(id) %% 4, no cookie -> connection %% 4, "
           "__Host- first, /_health workers, SSE through the reactor: ok\n");

    /* The reactor's HTTP handling: malformed 400, 431, 413, pipelining,
     * 100-continue (the worker never sends a second one). */
    test_http(port);
    conn *c = conn_open(port);
    send_all(c->fd, "GARBAGE\r\n\r\n", 11);
    read_resp(c, false, &r);
    ASSERT_EQ(r.status, 400);
    ASSERT_GE(via_worker(r.head), 0);
    conn_close(c);

    /* SIGTERM with a stream open: every thread stops, the stream ends. */
    s = sse_open(port, owned[0].ctx, owned[0].cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    ASSERT_EQ(wait_child(pid, 5000), 0);
    until = now_ms() + IO_TIMEOUT_MS;
    while (!s->ended && now_ms() < until)
        sse_pump(s, until);
    ASSERT(s->ended);
    sse_close(s);
    printf("reactor: malformed, limits, pipelining, 100-continue; SIGTERM: ok\n");
}

static void test_dispatch_stream(void)
{
    int port;
    pid_t pid = start_workers("stream", &port);
    page pg;
    resp r;
    get_route(port, "/bench/counter", "Cookie: via_session_id=0123456789abcdef0123456789abcdef\r\n",
              &pg, &r);
    int owner = via_worker(r.head);
    ASSERT(owner >= 0 && owner < 4);
    /* One request at a time: every worker is free, so the ties rotate. */
    int per[4] = {0}, ok = 0, invalid = 0;
    for (int i = 0; i < 40; i++) {
        action(port, "increment", &pg, NULL, -1, &r);
        int w = via_worker(r.head);
        ASSERT(w >= 0 && w < 4);
        per[w]++;
        if (r.status == 200) {
            ASSERT_EQ(w, owner);
            ok++;
        } else {
            ASSERT_EQ(r.status, 400);
            ASSERT_STREQ(r.body, "Invalid context");
            ASSERT_NE(w, owner);
            invalid++;
        }
    }
    for (int w = 0; w < 4; w++)
        ASSERT_EQ(per[w], 10);
    ASSERT_EQ(invalid, 30);
    /* The same on one keep-alive connection: the connection does not count. */
    conn *c = conn_open(port);
    int seen = 0;
    for (int i = 0; i < 8; i++) {
        action_on(c, "increment", &pg, NULL, -1, &r);
        seen |= 1 << via_worker(r.head);
        ASSERT(r.status == 200 || r.status == 400);
    }
    conn_close(c);
    ASSERT_EQ(seen, 15);
    int hw;
    json_t *h = health_with(port, NULL, &hw);
    ASSERT_EQ(json_array_size(json_object_get(h, "workers")), 4);
    json_decref(h);
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    ASSERT_EQ(wait_child(pid, 5000), 0);
    printf("dispatch stream: actions spread over all 4 workers, %d/40 reach the owner, %d get "
           "400 Invalid context: ok\n",
           ok, invalid);
}

static void test_dispatch_fd(void)
{
    int port;
    pid_t pid = start_workers("fd", &port);
    conn *c = conn_open(port); /* the server's first connection: worker 1 */
    resp r;
    conn_req(c, "GET", "/bench/counter", NULL, NULL, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(via_worker(r.head), 1);
    page pg;
    const char *m = strstr(r.body, "_\\/");
    ASSERT(m && is_hex(m + 3, 16));
    memcpy(pg.hex, m + 3, 16);
    pg.hex[16] = '\0';
    snprintf(pg.ctx, sizeof(pg.ctx), "/bench/counter_/%s", pg.hex);
    const char *v = r.cookie + strlen("via_session_id="), *semi = strchr(v, ';');
    ASSERT(semi);
    copy_str(pg.session, sizeof(pg.session), v, (size_t)(semi - v));
    snprintf(pg.cookie_hdr, sizeof(pg.cookie_hdr), "Cookie: via_session_id=%s\r\n", pg.session);
    for (int i = 0; i < 20; i++) {
        action_on(c, "increment", &pg, NULL, -1, &r);
        ASSERT_EQ(r.status, 200);
        ASSERT_EQ(via_worker(r.head), 1);
    }
    conn_close(c);
    /* New connections 2, 3, 4, 5: only connection 5 reaches worker 1. */
    int ok = 0;
    for (int i = 0; i < 4; i++) {
        action(port, "increment", &pg, NULL, -1, &r);
        ASSERT_EQ(via_worker(r.head), (2 + i) % 4);
        ok += r.status == 200;
    }
    ASSERT_EQ(ok, 1);
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    ASSERT_EQ(wait_child(pid, 5000), 0);
    printf("dispatch fd: the page's keep-alive connection 20/20, new connections by id %% 4: "
           "ok\n");
}

/* Bad library options are refused before anything starts. */
static void test_worker_options(void)
{
    hm_bench_app_options o;
    hm_bench_app_defaults(&o);
    ASSERT_EQ(o.workers, 1);
    ASSERT(o.dispatch == NULL);
    o.port = 0;
    o.quiet = true;
    o.workers = 65;
    ASSERT_EQ(hm_bench_app_run(&o, -1), -EINVAL);
    o.workers = 2;
    o.dispatch = "roundrobin";
    ASSERT_EQ(hm_bench_app_run(&o, -1), -EINVAL);
    printf("bad workers / dispatch options: -EINVAL: ok\n");
}

static bool port_open(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

/* Two consecutive free ports, below the ephemeral range (bench_app
 * listens with SO_REUSEADDR, so the probe does too). */
static int free_port_pair(void)
{
    for (int tries = 0; tries < 200; tries++) {
        int base = 20000 + (int)((unsigned)(getpid() * 7919 + tries * 104729) % 12000);
        bool ok = true;
        for (int i = 0; i < 2 && ok; i++) {
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            ASSERT(fd >= 0);
            int one = 1;
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
            struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)(base + i))};
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
            close(fd);
        }
        if (ok) return base;
    }
    HM_FAIL_("no two consecutive free ports");
}

static pid_t spawn(char *const argv[])
{
    fflush(NULL);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* its own children get SIGTERM then */
        if (getppid() != g_parent) _exit(3);
        execv(argv[0], argv);
        _exit(127);
    }
    track_child(pid, true);
    return pid;
}

static void test_processes(const char *exe)
{
    char *bad[] = {(char *)exe, "--port", "0", "--processes", "2", "--quiet", NULL};
    ASSERT_EQ(wait_child(spawn(bad), 5000), 2);

    int base = free_port_pair();
    char port_s[16];
    snprintf(port_s, sizeof(port_s), "%d", base);
    char *argv[] = {(char *)exe, "--port", port_s, "--processes", "2", "--quiet", NULL};
    pid_t pid = spawn(argv);
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    while (!port_open(base) || !port_open(base + 1)) {
        ASSERT_LT(now_ms(), until);
        usleep(10000);
    }
    for (int i = 0; i < 2; i++) {
        page pg;
        resp r;
        get_route(base + i, "/bench/counter", NULL, &pg, &r);
        ASSERT_EQ(via_worker(r.head), i);
        action(base + i, "increment", &pg, NULL, -1, &r);
        ASSERT_EQ(r.status, 200);
        ASSERT_EQ(via_worker(r.head), i);
        /* Independent servers: the other one does not know the context. */
        action(base + 1 - i, "increment", &pg, NULL, -1, &r);
        ASSERT_EQ(r.status, 400);
        ASSERT_EQ(via_worker(r.head), 1 - i);
        int hw;
        json_t *h = health_with(base + i, NULL, &hw);
        ASSERT_EQ(hw, i);
        ASSERT_EQ(json_array_size(json_object_get(h, "workers")), 1);
        json_decref(h);
    }
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    ASSERT_EQ(wait_child(pid, 5000), 0);
    ASSERT(!port_open(base) && !port_open(base + 1));
    printf("--processes 2: X-Via-Worker 0 and 1 on two ports, SIGTERM stops both, exit 0; "
           "--port 0 refused: ok\n");
}

/* ---- HTTPS ---------------------------------------------------------------------- */

/* The test's PKI, made with the OpenSSL API in g_tmp/tls: ca.pem, and a
 * server.pem + server.key it signed for 127.0.0.1 and localhost (as
 * scripts/gen-test-cert.sh makes them); other.key matches nothing. */
static char g_ca[320], g_cert[320], g_key[320], g_other_key[320];

static EVP_PKEY *ec_key(void)
{
    EVP_PKEY_CTX *pc = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
    ASSERT(pc);
    EVP_PKEY *k = NULL;
    ASSERT_EQ(EVP_PKEY_keygen_init(pc), 1);
    ASSERT_EQ(EVP_PKEY_CTX_set_ec_paramgen_curve_nid(pc, NID_X9_62_prime256v1), 1);
    ASSERT_EQ(EVP_PKEY_keygen(pc, &k), 1);
    EVP_PKEY_CTX_free(pc);
    return k;
}

static void add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
    X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    ASSERT(e);
    ASSERT_EQ(X509_add_ext(x, e, -1), 1);
    X509_EXTENSION_free(e);
}

/* A certificate for key named cn, signed by issuer (NULL: self-signed). */
static X509 *make_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key,
                       long serial)
{
    X509 *x = X509_new();
    ASSERT(x);
    ASSERT_EQ(X509_set_version(x, 2), 1);
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400);
    ASSERT_EQ(X509_set_pubkey(x, key), 1);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    ASSERT_EQ(X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name), 1);
    if (issuer) {
        add_ext(x, issuer, NID_basic_constraints, "CA:FALSE");
        add_ext(x, issuer, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1,IP:::1");
    } else {
        add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE");
        add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign");
    }
    ASSERT_GT(X509_sign(x, issuer_key ? issuer_key : key, EVP_sha256()), 0);
    return x;
}

static void write_pem(const char *path, X509 *x, EVP_PKEY *k)
{
    FILE *f = fopen(path, "w");
    ASSERT(f);
    if (x) ASSERT_EQ(PEM_write_X509(f, x), 1);
    if (k) ASSERT_EQ(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL), 1);
    ASSERT_EQ(fclose(f), 0);
}

static void make_pki(void)
{
    char dir[300];
    snprintf(dir, sizeof(dir), "%s/tls", g_tmp);
    ASSERT_EQ(mkdir(dir, 0700), 0);
    snprintf(g_ca, sizeof(g_ca), "%s/ca.pem", dir);
    snprintf(g_cert, sizeof(g_cert), "%s/server.pem", dir);
    snprintf(g_key, sizeof(g_key), "%s/server.key", dir);
    snprintf(g_other_key, sizeof(g_other_key), "%s/other.key", dir);
    EVP_PKEY *ca_key = ec_key(), *key = ec_key(), *other = ec_key();
    X509 *ca = make_cert(ca_key, "bench_app test CA", NULL, NULL, 1);
    X509 *leaf = make_cert(key, "localhost", ca, ca_key, 2);
    write_pem(g_ca, ca, NULL);
    write_pem(g_cert, leaf, NULL);
    write_pem(g_key, NULL, key);
    write_pem(g_other_key, NULL, other);
    X509_free(ca);
    X509_free(leaf);
    EVP_PKEY_free(ca_key);
    EVP_PKEY_free(key);
    EVP_PKEY_free(other);
}

/* A client context trusting only the test CA: TLS 1.2 to max_version
 * (0: the newest), ALPN `alpn` (wire format; NULL: http/1.1), with tickets
 * unless no_tickets (TLS 1.2 then resumes by session id). */
static SSL_CTX *client_ctx(int max_version, const char *alpn, size_t alpn_len, bool no_tickets)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    ASSERT(ctx);
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (max_version) SSL_CTX_set_max_proto_version(ctx, max_version);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    ASSERT_EQ(SSL_CTX_load_verify_locations(ctx, g_ca, NULL), 1);
    if (!alpn) alpn = "\x08http/1.1", alpn_len = 9;
    ASSERT_EQ(SSL_CTX_set_alpn_protos(ctx, (const unsigned char *)alpn, (unsigned)alpn_len), 0);
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | (no_tickets ? SSL_OP_NO_TICKET : 0));
    return ctx;
}

/* Runs hm_bench_app_run in this process with stderr in a file; returns its
 * result and the first line it printed. */
static int run_captured(const hm_bench_app_options *o, char *line, size_t cap)
{
    char path[320];
    snprintf(path, sizeof(path), "%s/stderr.txt", g_tmp);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    ASSERT(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    int rc = hm_bench_app_run(o, -1);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fopen(path, "r");
    ASSERT(f);
    line[0] = '\0';
    if (!fgets(line, (int)cap, f)) line[0] = '\0';
    fclose(f);
    return rc;
}

/* Certificates and keys that do not load: -EINVAL before anything starts,
 * with one line naming the file. */
static void test_tls_options(void)
{
    hm_bench_app_options o;
    hm_bench_app_defaults(&o);
    ASSERT(!o.tls_cert && !o.tls_key);
    o.port = 0;
    o.quiet = true;
    char line[1024], missing[340];
    snprintf(missing, sizeof(missing), "%s/missing.pem", g_tmp);
    const struct {
        const char *cert, *key, *names, *says;
    } bad[] = {
        {g_cert, NULL, NULL, "both"},
        {NULL, g_key, NULL, "both"},
        {missing, g_key, missing, "No such file"},
        {g_key, g_key, g_key, "no PEM certificate"},
        {g_cert, g_cert, g_cert, "no PEM private key"},
        {g_cert, g_other_key, g_other_key, "does not match"},
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(bad); i++) {
        o.tls_cert = bad[i].cert;
        o.tls_key = bad[i].key;
        ASSERT_EQ(run_captured(&o, line, sizeof(line)), -EINVAL);
        if (bad[i].names && !strstr(line, bad[i].names)) HM_FAIL_("%zu: %s", i, line);
        if (!strstr(line, bad[i].says)) HM_FAIL_("%zu: %s", i, line);
        ASSERT_EQ(strchr(line, '\n') - line, (long)strlen(line) - 1); /* one line */
    }
    printf("TLS: bad certificate / key / pairing: -EINVAL, one line naming the file: ok\n");
}

static pid_t start_tls(hm_backend_kind backend, int workers, const char *dispatch, int *port)
{
    hm_bench_app_options o;
    hm_bench_app_defaults(&o);
    o.port = 0;
    o.quiet = true;
    o.backend = backend;
    o.workers = workers;
    o.dispatch = dispatch;
    o.cleanup_delay_ms = 200;
    o.sse_poll_ms = 0;
    o.tls_cert = g_cert;
    o.tls_key = g_key;
    pid_t pid = start_child(&o, port);
    ASSERT_GT(*port, 0);
    return pid;
}

/* Connections that do not speak TLS (or not acceptably) just get closed,
 * perhaps after an alert, never answered in HTTP; the server goes on. */
static void tls_bad_clients(int port)
{
    SSL_CTX *tls = g_tls;
    g_tls = NULL;
#define JUNK(lit, half)                                                                            \
    {                                                                                              \
        lit, sizeof(lit) - 1, half                                                                 \
    }
    static const struct {
        const char *bytes;
        size_t len;
        bool half_close; /* then EOF: the bytes alone leave the server waiting */
    } junk[] = {
        JUNK("GET /_health HTTP/1.1\r\nHost: x\r\n\r\n", false), /* plain HTTP */
        JUNK("\x16\x03\x01\xff\xff no handshake at all", false), /* a record far too long */
        JUNK("\x16\x03\x01\x00\x05\x01\x00\x00\x01\x00", false), /* a ClientHello of 1 byte */
        JUNK("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03", true),  /* a ClientHello cut short */
        JUNK("\x80\x2e\x01\x00\x02\x00\x15", true),              /* SSLv2-style, cut short */
        JUNK("", true),                                          /* nothing at all */
    };
#undef JUNK
    char buf[4096];
    ssize_t n;
    for (size_t i = 0; i < HM_ARRAY_LEN(junk); i++) {
        int fd = tcp_connect_raw(port);
        if (junk[i].len) send_all(fd, junk[i].bytes, junk[i].len);
        if (junk[i].half_close) shutdown(fd, SHUT_WR);
        int64_t until = now_ms() + IO_TIMEOUT_MS;
        while ((n = read_until(fd, buf, sizeof(buf), until)) > 0)
            ASSERT_EQ(buf[0], 0x15); /* an alert record */
        if (n != 0 && n != -2) HM_FAIL_("junk %zu: read %zd, not a close", i, n);
        close(fd);
    }
    unsigned char rnd[2048]; /* bytes of no protocol */
    for (size_t i = 0; i < sizeof(rnd); i++)
        rnd[i] = (unsigned char)((i * 2654435761u) >> 13);
    int fd = tcp_connect_raw(port);
    send(fd, rnd, sizeof(rnd), MSG_NOSIGNAL);
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    while ((n = read_until(fd, buf, sizeof(buf), until)) > 0) {
    }
    ASSERT(n == 0 || n == -2);
    close(fd);

    /* ALPN: an offer of h2 alone is refused; no offer at all is HTTP/1.1. */
    g_tls = client_ctx(0, "\x02h2", 3, false);
    fd = tcp_connect_raw(port);
    ASSERT_EQ(tls_handshake(fd, false), 0);
    close(fd);
    SSL_CTX_free(g_tls);
    g_tls = client_ctx(0, "", 0, false);
    fd = tcp_connect_raw(port);
    ASSERT_EQ(tls_handshake(fd, true), 1);
    ASSERT_STREQ(g_alpn, "");
    static const char req[] = "GET /_health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    send_all(fd, req, strlen(req));
    size_t got = 0;
    until = now_ms() + IO_TIMEOUT_MS;
    while (got < sizeof(buf) - 1 &&
           (n = read_until(fd, buf + got, sizeof(buf) - 1 - got, until)) > 0)
        got += (size_t)n;
    buf[got] = '\0';
    ASSERT_EQ(strncmp(buf, "HTTP/1.1 200 OK\r\n", 17), 0);
    fd_close(fd);
    SSL_CTX_free(g_tls);
    g_tls = tls;
    /* Still serving. */
    json_decref(health(port));
}

/* A session of a first connection resumes on the next two: TLS 1.3
 * tickets (max_version 0), TLS 1.2 tickets, TLS 1.2 session ids. */
static void tls_resume(int port, int max_version, bool no_tickets)
{
    SSL_CTX *saved = g_tls;
    g_tls = client_ctx(max_version, NULL, 0, no_tickets);
    conn *c = conn_open(port);
    ASSERT(!g_reused);
    ASSERT_EQ(SSL_version(ssl_of(c->fd)), max_version ? max_version : TLS1_3_VERSION);
    resp r;
    conn_req(c, "GET", "/_health", NULL, NULL, &r); /* TLS 1.3: the tickets came first */
    ASSERT_EQ(r.status, 200);
    g_resume = tls_session(c->fd);
    conn_close(c);
    for (int i = 0; i < 2; i++) {
        c = conn_open(port);
        ASSERT(g_reused);
        conn_req(c, "GET", "/_health", NULL, NULL, &r);
        ASSERT_EQ(r.status, 200);
        conn_close(c);
    }
    SSL_SESSION_free(g_resume);
    g_resume = NULL;
    SSL_CTX_free(g_tls);
    g_tls = saved;
}

/* One server with TLS: pages, actions, keep-alive, pipelining, a body of
 * many records, test_http's malformed / oversized / 100-continue cases, SSE (small and large
 * events, the stream's end noticed through TLS), resumption, bad clients, SIGTERM with a stream
 * open. */
static void test_tls(hm_backend_kind backend)
{
    int port;
    pid_t pid = start_tls(backend, 1, NULL, &port);
    g_tls = client_ctx(0, NULL, 0, false);

    page pg;
    get_page(port, NULL, &pg); /* the whole page, checked */
    resp r;
    conn *kc = conn_open(port);
    ASSERT_EQ(SSL_version(ssl_of(kc->fd)), TLS1_3_VERSION);
    action_on(kc, "increment", &pg, NULL, -1, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT(r.keep_alive);
    action_on(kc, "increment", &pg, NULL, -1, &r); /* the same TLS connection */
    ASSERT_EQ(r.status, 200);
    static const char two[] = "GET /_health HTTP/1.1\r\nHost: x\r\n\r\n"
                              "GET /_health HTTP/1.1\r\nHost: x\r\n\r\n";
    send_all(kc->fd, two, strlen(two)); /* pipelined in one record */
    for (int i = 0; i < 2; i++) {
        read_resp(kc, false, &r);
        ASSERT_EQ(r.status, 200);
        ASSERT(strstr(r.body, "\"status\":\"ok\""));
    }
    static char big[300 << 10]; /* some 20 records */
    int k = snprintf(big, sizeof(big), "{\"via_ctx\":\"%s\",\"pad\":\"", pg.ctx);
    memset(big + k, 'x', sizeof(big) - (size_t)k - 3);
    memcpy(big + sizeof(big) - 3, "\"}", 3);
    char hdrs[512];
    snprintf(hdrs, sizeof(hdrs), "Content-Type: application/json\r\n%s", pg.cookie_hdr);
    conn_req(kc, "POST", "/_action/increment", hdrs, big, &r);
    ASSERT_EQ(r.status, 200);
    conn_close(kc);
    printf("[%s] TLS: page, actions on a keep-alive connection, pipelining, a 300 KiB body: ok\n",
           hm_backend_name(backend));
    test_http(
        port); /* malformed, limits (the answer, close_notify, then the close), 100-continue */

    char wire[128], ev[4096];
    wire_id(&pg, wire, sizeof(wire));
    sse *s = sse_open(port, pg.ctx, pg.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    ASSERT_EQ(status_of(s), 200);
    ASSERT(sse_has_header(s, "Content-Type: text/event-stream"));
    sse_event(s, 0, ev, sizeof(ev));
    ASSERT_STREQ(ev, ELEMENTS_EVENT);
    sse_event(s, 1, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), 3);
    for (int i = 0; i < 3; i++) {
        action(port, "increment", &pg, NULL, -1, &r);
        ASSERT_EQ(r.status, 200);
        ASSERT_EQ(sse_wait(s, 3 + (size_t)i, IO_TIMEOUT_MS), 3 + (size_t)i);
        sse_event(s, 2 + (size_t)i, ev, sizeof(ev));
        ASSERT_EQ(signal_in(ev, wire), 4 + i);
    }
    ASSERT_EQ(health_count(port, "sse"), 1);
    sse_close(s); /* close_notify: the stream's reader sees it end */
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    while (health_count(port, "sse") != 0) {
        ASSERT_LT(now_ms(), until);
        usleep(10000);
    }
    /* The live spreadsheet: multi-line events of several KiB. */
    static char html[65536], lev[65536];
    char sel[64], dir[160], fields[256];
    page lv;
    get_route(port, "/examples/spreadsheet", NULL, &lv, &r);
    s = sse_open(port, lv.ctx, lv.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    sse_event(s, 0, lev, sizeof(lev));
    ASSERT_GE(elements_of(lev, html, sizeof(html), sel, sizeof(sel)), 22);
    check_sheet_div(html);
    wire_of(&lv, "direction", dir, sizeof(dir));
    snprintf(fields, sizeof(fields), ",\"%s\":\"PageDown\"", dir);
    kc = conn_open(port);
    act(kc, "navigate", &lv, fields, &r);
    conn_close(kc);
    ASSERT_EQ(sse_wait(s, 4, IO_TIMEOUT_MS), 4);
    sse_event(s, 2, lev, sizeof(lev));
    ASSERT_GE(elements_of(lev, html, sizeof(html), sel, sizeof(sel)), 22);
    ASSERT_STREQ(sel, "#sheet");
    ASSERT_EQ(focus_row_label(html), 21);
    sse_close(s);
    printf("[%s] TLS: SSE sync and patches, the live spreadsheet's tables, stream end: ok\n",
           hm_backend_name(backend));

    tls_resume(port, 0, false);
    tls_resume(port, TLS1_2_VERSION, false);
    tls_resume(port, TLS1_2_VERSION, true);
    printf("[%s] TLS: resumption (1.3 tickets, 1.2 tickets, 1.2 session ids): ok\n",
           hm_backend_name(backend));
    tls_bad_clients(port);
    printf("[%s] TLS: plain HTTP, garbage, cut hellos, h2-only ALPN: closed, server "
           "serves on; no ALPN: HTTP/1.1: ok\n",
           hm_backend_name(backend));

    get_page(port, NULL, &pg);
    s = sse_open(port, pg.ctx, pg.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    int mute = tcp_connect_raw(port); /* a handshake that never starts */
    usleep(20 * 1000);
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    ASSERT_EQ(wait_child(pid, 5000), 0);
    close(mute);
    until = now_ms() + IO_TIMEOUT_MS;
    while (!s->ended && now_ms() < until)
        sse_pump(s, until);
    ASSERT(s->ended);
    sse_close(s);
    SSL_CTX_free(g_tls);
    g_tls = NULL;
    printf("[%s] TLS: SIGTERM with a stream and a silent handshake open: exit 0: ok\n",
           hm_backend_name(backend));
}

/* --workers 2 --dispatch session over TLS: TLS ends at the reactor, the
 * cookie still picks the worker, SSE streams through it. */
static void test_tls_workers(void)
{
    int port;
    pid_t pid = start_tls(HM_BACKEND_AUTO, 2, "session", &port);
    g_tls = client_ctx(0, NULL, 0, false);
    char wire[128], ev[4096];
    for (int w = 0; w < 2; w++) {
        char sid[40], cookie[128];
        for (int k = 0;; k++) {
            ASSERT_LT(k, 100);
            snprintf(sid, sizeof(sid), "%032x", 0x7150 + k);
            if (crc_worker(sid, 2) == w) break;
        }
        snprintf(cookie, sizeof(cookie), "Cookie: via_session_id=%s\r\n", sid);
        page pg;
        resp r;
        get_route(port, "/bench/counter", cookie, &pg, &r);
        ASSERT_STREQ(pg.session, sid);
        ASSERT_EQ(via_worker(r.head), w);
        action(port, "increment", &pg, NULL, -1, &r);
        ASSERT_EQ(r.status, 200);
        ASSERT_EQ(via_worker(r.head), w);
        sse *s = sse_open(port, pg.ctx, pg.cookie_hdr);
        ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
        ASSERT_EQ(via_worker(s->head), w);
        wire_id(&pg, wire, sizeof(wire));
        sse_event(s, 1, ev, sizeof(ev));
        ASSERT_EQ(signal_in(ev, wire), 1);
        action(port, "increment", &pg, NULL, -1, &r);
        ASSERT_EQ(r.status, 200);
        ASSERT_EQ(sse_wait(s, 3, IO_TIMEOUT_MS), 3);
        sse_event(s, 2, ev, sizeof(ev));
        ASSERT_EQ(signal_in(ev, wire), 2);
        sse_close(s);
    }
    int64_t until = now_ms() + IO_TIMEOUT_MS; /* both streams' ends reach the workers */
    for (;;) {
        int hw;
        json_t *h = health_with(port, NULL, &hw);
        long long open = worker_count(h, 0, "sse") + worker_count(h, 1, "sse");
        json_decref(h);
        if (open == 0) break;
        ASSERT_LT(now_ms(), until);
        usleep(10000);
    }
    tls_resume(port, 0, false);
    tls_bad_clients(port);
    test_http(port); /* the reactor's own answers, through TLS */
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    ASSERT_EQ(wait_child(pid, 5000), 0);
    SSL_CTX_free(g_tls);
    g_tls = NULL;
    printf("TLS --workers 2 --dispatch session: TLS at the reactor, cookie dispatch, SSE, "
           "resumption, bad clients: ok\n");
}

/* The executable: a bad pair exits 2 before anything starts; with
 * --processes 2 each process serves TLS. */
static void test_tls_processes(const char *exe)
{
    char *nokey[] = {(char *)exe, "--port", "0", "--quiet", "--tls-cert", g_cert, NULL};
    ASSERT_EQ(wait_child(spawn(nokey), 5000), 2);
    char *mismatch[] = {(char *)exe,  "--port", "0",         "--quiet",   "--processes", "2",
                        "--tls-cert", g_cert,   "--tls-key", g_other_key, NULL};
    ASSERT_EQ(wait_child(spawn(mismatch), 5000), 2);

    int base = free_port_pair();
    char port_s[16];
    snprintf(port_s, sizeof(port_s), "%d", base);
    char *argv[] = {(char *)exe,  "--port", port_s,      "--processes", "2", "--quiet",
                    "--tls-cert", g_cert,   "--tls-key", g_key,         NULL};
    pid_t pid = spawn(argv);
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    while (!port_open(base) || !port_open(base + 1)) {
        ASSERT_LT(now_ms(), until);
        usleep(10000);
    }
    g_tls = client_ctx(0, NULL, 0, false);
    for (int i = 0; i < 2; i++) {
        int hw;
        json_decref(health_with(base + i, NULL, &hw));
        ASSERT_EQ(hw, i);
    }
    SSL_CTX_free(g_tls);
    g_tls = NULL;
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    ASSERT_EQ(wait_child(pid, 5000), 0);
    printf("TLS executable: a bad pair exits 2; --processes 2: both serve TLS: ok\n");
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    g_parent = getpid();
    const char *t = getenv("TMPDIR");
    snprintf(g_tmp, sizeof(g_tmp), "%s/test_bench_app.XXXXXX", t && *t ? t : "/tmp");
    ASSERT(mkdtemp(g_tmp));
    atexit(kill_children);
    const char *why = NULL;
    if (hm_io_uring_probe(&why) == 0)
        run_suite(HM_BACKEND_IO_URING);
    else
        printf("io_uring unavailable here (%s): epoll only\n", why ? why : "?");
    run_suite(HM_BACKEND_EPOLL);
    char db[300];
    snprintf(db, sizeof(db), "%s/%s-b.db", g_tmp, hm_backend_name(HM_BACKEND_EPOLL));
    test_db_reuse(db);

    test_worker_options();
    make_pki();
    test_tls_options();
    if (hm_io_uring_probe(NULL) == 0) test_tls(HM_BACKEND_IO_URING);
    test_tls(HM_BACKEND_EPOLL);
    test_tls_workers();
    test_dispatch_session();
    test_dispatch_stream();
    test_dispatch_fd();
    if (argc > 1) {
        test_processes(argv[1]);
        test_tls_processes(argv[1]);
    } else
        printf("no bench_app executable given: --processes not tested\n");
    return 0;
}
