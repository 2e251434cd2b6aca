/* bench_app_client.c — the bench_app tests' processes and clients: forked
 * servers, plain and TLS sockets, one request / one response, an SSE
 * client (see bench_app_client.h). */
#include "bench_app_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- children ------------------------------------------------------------ */

int64_t now_ms(void)
{
    return hm_now_ns() / 1000000;
}

/* Children still running; killed if the test fails (exit() runs this),
 * and reaped, so none outlives the test. */
static pid_t g_parent, g_children[16];
char g_tmp[256];

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
pid_t start_child(const hm_bench_app_options *o, int *port)
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

int wait_child(pid_t pid, int timeout_ms)
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

pid_t start_server(const hm_bench_app_options *o, int *port)
{
    pid_t pid = start_child(o, port);
    if (*port <= 0) HM_FAIL_("the server exited with %d before listening", wait_child(pid, 5000));
    return pid;
}

void stop_server(pid_t pid)
{
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    ASSERT_EQ(wait_child(pid, 5000), 0);
}

pid_t spawn(char *const argv[])
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

hm_backend_kind ba_test_begin(int argc, char **argv, bool want_backend)
{
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    hm_backend_kind backend = HM_BACKEND_AUTO;
    if (want_backend) {
        if (argc < 2 || hm_backend_parse(argv[1], &backend) < 0 || backend == HM_BACKEND_AUTO) {
            fprintf(stderr, "usage: %s io_uring|epoll\n", argv[0]);
            exit(2);
        }
        const char *why = NULL;
        if (backend == HM_BACKEND_IO_URING && hm_io_uring_probe(&why) < 0)
            HM_SKIP("io_uring unavailable here: %s", why ? why : "?");
        printf("backend: %s\n", hm_backend_name(backend));
    }
    g_parent = getpid();
    const char *t = getenv("TMPDIR");
    snprintf(g_tmp, sizeof(g_tmp), "%s/test_bench_app.XXXXXX", t && *t ? t : "/tmp");
    ASSERT(mkdtemp(g_tmp));
    atexit(kill_children);
    return backend;
}

hm_bench_app_options ba_test_options(hm_backend_kind backend)
{
    hm_bench_app_options o;
    hm_bench_app_defaults(&o);
    o.port = 0;
    o.quiet = true;
    o.backend = backend;
    o.cleanup_delay_ms = 200;
    o.sse_poll_ms = 0;
    return o;
}

/* ---- a small blocking TLS client -------------------------------------------- */

/* While g_tls is set, tcp_connect() makes TLS connections with it (the
 * certificate verified for 127.0.0.1 against the test CA, ALPN http/1.1),
 * offering g_resume's session when set; send_all, read_until and fd_close
 * then go through the connection's SSL (g_ssl[fd]). The socket is made
 * non-blocking after the handshake, so read_until keeps its deadline. */
SSL_CTX *g_tls;
SSL_SESSION *g_resume;
bool g_reused;
char g_alpn[32];
static SSL *g_ssl[1024];

SSL *ssl_of(int fd)
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
int tls_handshake(int fd, bool loud)
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
SSL_SESSION *tls_session(int fd)
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

static struct {
    int port, n;
} g_conns[32]; /* connections made per port */

int conns_made(int port)
{
    for (size_t i = 0; i < HM_ARRAY_LEN(g_conns); i++)
        if (g_conns[i].port == port) return g_conns[i].n;
    return 0;
}

static void count_conn(int port)
{
    for (size_t i = 0; i < HM_ARRAY_LEN(g_conns); i++) {
        if (g_conns[i].port == port || g_conns[i].port == 0) {
            g_conns[i].port = port;
            g_conns[i].n++;
            return;
        }
    }
    HM_FAIL_("more ports than g_conns counts");
}

int tcp_connect_raw(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    count_conn(port);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* A connection to port: TLS (ALPN http/1.1 agreed) while g_tls is set. */
int tcp_connect(int port)
{
    int fd = tcp_connect_raw(port);
    if (g_tls && !tls_handshake(fd, true)) HM_FAIL_("TLS handshake with port %d failed", port);
    if (g_tls) ASSERT_STREQ(g_alpn, "http/1.1");
    return fd;
}

/* Closes a socket, TLS or not (a TLS one says close_notify first). */
void fd_close(int fd)
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

void send_all(int fd, const char *s, size_t n)
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
ssize_t read_until(int fd, char *buf, size_t cap, int64_t until_ms)
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

conn *conn_open(int port)
{
    conn *c = calloc(1, sizeof(*c));
    ASSERT(c);
    c->fd = tcp_connect(port);
    c->port = port;
    hm_http_resp_init(&c->p, NULL);
    return c;
}

void conn_close(conn *c)
{
    hm_http_resp_free(&c->p);
    fd_close(c->fd);
    free(c);
}

void copy_str(char *dst, size_t cap, const char *s, size_t n)
{
    if (!s) n = 0;
    if (n >= cap) n = cap - 1;
    if (n) memcpy(dst, s, n);
    dst[n] = '\0';
}

/* Reads one response (head_req: it answers a HEAD). */
void read_resp(conn *c, bool head_req, resp *r)
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
void conn_req(conn *c, const char *method, const char *target, const char *extra, const char *body,
              resp *r)
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
void req1(int port, const char *method, const char *target, const char *extra, const char *body,
          resp *r)
{
    conn *c = conn_open(port);
    conn_req(c, method, target, extra, body, r);
    conn_close(c);
}

bool has_header(const resp *r, const char *line)
{
    char pat[512];
    snprintf(pat, sizeof(pat), "\r\n%s\r\n", line);
    return strstr(r->head, pat) != NULL;
}

int via_worker(const char *head)
{
    const char *h = strstr(head, "\r\nX-Via-Worker: ");
    return h ? atoi(h + 16) : -1;
}

void url_encode(const char *s, char *out, size_t cap)
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

bool is_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789abcdef", s[i]) || !s[i]) return false;
    return true;
}

/* ---- an SSE client ---------------------------------------------------------------- */

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

sse *sse_open_query(int port, const char *json, const char *cookie_line)
{
    sse *s = calloc(1, sizeof(*s));
    ASSERT(s);
    s->fd = tcp_connect(port);
    s->data = calloc(1, 1);
    s->cap = 1;
    hm_http_resp_init(&s->p, NULL);
    hm_http_resp_set_callbacks(&s->p, NULL, sse_on_body, s);
    hm_http_resp_begin(&s->p, false);
    static char enc[3 * 8192];
    enc[0] = '\0';
    if (json) url_encode(json, enc, sizeof(enc));
    static char req[sizeof(enc) + 1024];
    int n = snprintf(req, sizeof(req),
                     "GET /_sse%s%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: text/event-stream\r\n"
                     "Datastar-Request: true\r\n%s\r\n",
                     json ? "?datastar=" : "", enc, port, cookie_line ? cookie_line : "");
    ASSERT_LT(n, (int)sizeof(req));
    send_all(s->fd, req, (size_t)n);
    return s;
}

sse *sse_open(int port, const char *ctx, const char *cookie_line)
{
    char q[512];
    if (ctx) snprintf(q, sizeof(q), "{\"via_ctx\":\"%s\",\"_disconnected\":false}", ctx);
    return sse_open_query(port, ctx ? q : NULL, cookie_line);
}

/* Reads until timeout or the body ends; returns false on timeout. */
bool sse_pump(sse *s, int64_t until)
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

void sse_read_to_end(sse *s)
{
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    while (!s->ended && now_ms() < until)
        sse_pump(s, until);
    ASSERT(s->ended);
}

size_t sse_count(const sse *s)
{
    size_t n = 0;
    for (const char *p = s->data; (p = strstr(p, "\n\n")); p += 2)
        n++;
    return n;
}

/* Waits until at least n events arrived; returns how many did. */
size_t sse_wait(sse *s, size_t n, int timeout_ms)
{
    int64_t until = now_ms() + timeout_ms;
    while (sse_count(s) < n && !s->ended && now_ms() < until)
        sse_pump(s, until);
    return sse_count(s);
}

/* Copies event i (without its blank line) into out. */
void sse_event(const sse *s, size_t i, char *out, size_t cap)
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

void sse_close(sse *s)
{
    hm_http_resp_free(&s->p);
    fd_close(s->fd);
    free(s->data);
    free(s);
}

int status_of(const sse *s)
{
    ASSERT_EQ(strncmp(s->head, "HTTP/1.1 ", 9), 0);
    return atoi(s->head + 9);
}

bool sse_has_header(const sse *s, const char *line)
{
    char pat[512];
    snprintf(pat, sizeof(pat), "\r\n%s\r\n", line);
    const char *end = strstr(s->head, "\r\n\r\n");
    const char *at = strstr(s->head, pat);
    return at && end && at <= end;
}
